package simpledb

import (
	"errors"
	"log/slog"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/filenames"
	"github.com/stratadb/strata/internal/logformat"
	"github.com/stratadb/strata/internal/manifest"
	"github.com/stratadb/strata/recordio"
	"github.com/stratadb/strata/vfs"
)

// A log is recycled rather than deleted once its memstore's flush is
// durable in the manifest: the database keeps up to Options.RecycledLogs
// such logs, and a rotation that finds one renames it to the new log's
// name and writes over it from its start (vfs.FS.ReuseForWrite,
// vfs.MappedCreator.ReuseMapped) instead of creating a file. Its fsyncs
// then find the blocks written already, so they commit no allocation and
// no size change through the filesystem's journal, only the data. The
// order is the same as for a new log: the file is renamed, its new header
// written and synced, its directory synced, and only then does the
// manifest record the log, before anything is written to it.
//
// The file still holds the earlier use's records after the new ones (and,
// after a power loss, wherever a page written over did not reach the
// disk): valid records of another log. Every record carries its log's
// number (see Batch), and replay ends a log at the first record that
// carries another one, as it ends one at damage; see DB.replayLog. A file
// a crash leaves renamed but not yet recorded holds only such records, and
// replays as an empty log.

// logWriterOptions write logs uncompressed: a write copies its batch into
// the log, and compressing it there would cost every writer on the write
// path. Each megabyte's writeback starts as it is written, so that the
// rotation's fsync, which writes wait for, finds little dirty (see
// docs/2-log.md, "Rotation writeback").
var logWriterOptions = &recordio.WriterOptions{Compression: recordio.NoCompression, BytesPerSync: logChunk}

// logWriter appends batches to a log, stamping each with the low 32 bits
// of the log's identity.
type logWriter struct {
	*recordio.Writer
	info manifest.LogInfo // num and id
}

// Write stamps rec, a batch's encoding, with the log's identity, in place,
// and appends it.
func (w *logWriter) Write(rec []byte) (int64, error) {
	logformat.SetStamp(rec, uint32(w.info.ID))
	return w.Writer.Write(rec)
}

// logFiles creates the database's logs, new or in a recycled log's file.
// Its plain, learnt from the first log, is guarded by the commit
// pipeline's log lock (it creates logs only under it, or before the
// database is shared).
type logFiles struct {
	fs     vfs.FS
	dir    string
	logger *slog.Logger
	events *eventQueue // LogCreated
	// syncOften: the database syncs its log every write or few (see
	// vfs.MappedOptions.SyncOften); plain: the filesystem cannot map logs.
	syncOften, plain bool
}

// create starts log num in a new file, or in the file of the obsolete
// log recycled when that is not 0, with a new identity, and makes its
// headers (the file header and the identity record) and its directory
// entry durable. On failure it removes what it created.
func (l *logFiles) create(num uint64, recycled manifest.LogInfo) (*logWriter, vfs.File, error) {
	path := filenames.LogPath(l.dir, num)
	f, err := l.openFile(path, recycled.Num)
	if err != nil {
		return nil, nil, errs.Errorf("simpledb: new log: %w", err)
	}
	lw := &logWriter{info: manifest.LogInfo{Num: num, ID: base.NewFileID(recycled.ID)}}
	lw.Writer, err = recordio.NewWriter(f, logWriterOptions)
	if err == nil {
		_, err = lw.Writer.Write(logformat.EncodeIdentity(num, lw.info.ID))
	}
	if err == nil {
		err = lw.Sync()
	}
	if err == nil {
		err = l.fs.SyncDir(l.dir)
	}
	if err != nil {
		f.Close()
		if rerr := l.fs.Remove(path); rerr != nil {
			l.logger.Error("simpledb: delete obsolete file", "file", path, "err", rerr)
		}
		return nil, nil, errs.Errorf("simpledb: new log: %w", err)
	}
	emit(l.events, l.events.listener().LogCreated, LogInfo{Num: num, Path: path, Recycled: recycled.Num})
	return lw, f, nil
}

// logChunk is how much space a log allocates, and maps, at a time.
const logChunk = 1 << 20

// openFile opens a log's file: a new one, or the file of the obsolete
// log recycled, renamed. Where the filesystem can (see vfs.MappedCreator)
// the log takes writes without a system call each, by copying them into a
// mapping of space allocated ahead; elsewhere it is a plain file. Either
// way a write is in the operating system once it returns, so an unsynced
// write survives the process being killed. Whether the filesystem maps is
// learnt from the first log that tries and holds for the session.
func (l *logFiles) openFile(path string, recycled uint64) (vfs.File, error) {
	old := filenames.LogPath(l.dir, recycled)
	if m, ok := l.fs.(vfs.MappedCreator); ok && !l.plain {
		var f vfs.File
		var err error
		// A synced database syncs its log every write or few: see
		// vfs.MappedOptions.SyncOften.
		mopts := vfs.MappedOptions{Chunk: logChunk, SyncOften: l.syncOften}
		if recycled != 0 {
			f, err = m.ReuseMapped(old, path, mopts)
		} else {
			f, err = m.CreateMapped(path, mopts)
		}
		if !errors.Is(err, errors.ErrUnsupported) {
			return f, err
		}
		l.plain = true
		l.logger.Debug("simpledb: logs are written with write(2), not mapped", "reason", err)
	}
	if recycled != 0 {
		return l.fs.ReuseForWrite(old, path)
	}
	return l.fs.Create(path)
}
