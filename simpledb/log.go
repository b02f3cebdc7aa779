package simpledb

import (
	"errors"
	"fmt"

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
// path.
var logWriterOptions = &recordio.WriterOptions{Compression: recordio.NoCompression}

// logWriter appends batches to a log, stamping each with the log's
// number.
type logWriter struct {
	*recordio.Writer
	num uint64
}

// Write stamps rec, a batch's encoding, with the log's number, in place,
// and appends it.
func (w *logWriter) Write(rec []byte) (int64, error) {
	setRecordLog(rec, w.num)
	return w.Writer.Write(rec)
}

// createLog starts log num in a new file, or in the file of the obsolete
// log recycled when that is not 0, and makes its header and its directory
// entry durable. On failure it removes what it created.
func (d *DB) createLog(num, recycled uint64) (*logWriter, vfs.File, error) {
	path := logName(d.dir, num)
	f, err := d.openLogFile(path, recycled)
	if err != nil {
		return nil, nil, fmt.Errorf("simpledb: new log: %w", err)
	}
	w, err := recordio.NewWriter(f, logWriterOptions)
	if err == nil {
		err = w.Sync()
	}
	if err == nil {
		err = d.fs.SyncDir(d.dir)
	}
	if err != nil {
		f.Close()
		d.deleteFile(path)
		return nil, nil, fmt.Errorf("simpledb: new log: %w", err)
	}
	return &logWriter{Writer: w, num: num}, f, nil
}

// logChunk is how much space a log allocates, and maps, at a time.
const logChunk = 1 << 20

// openLogFile opens a log's file: a new one, or the file of the obsolete
// log recycled, renamed. Where the filesystem can (see vfs.MappedCreator)
// the log takes writes without a system call each, by copying them into a
// mapping of space allocated ahead; elsewhere it is a plain file. Either
// way a write is in the operating system once it returns, so an unsynced
// write survives the process being killed. Whether the filesystem maps is
// learnt from the first log and holds for the session. The caller holds
// d.walMu or has not shared the database yet.
func (d *DB) openLogFile(path string, recycled uint64) (vfs.File, error) {
	m, mapped := d.fs.(vfs.MappedCreator)
	mapped = mapped && !d.plainLogs
	if recycled != 0 {
		old := logName(d.dir, recycled)
		if mapped {
			return m.ReuseMapped(old, path, logChunk)
		}
		return d.fs.ReuseForWrite(old, path)
	}
	if mapped {
		f, err := m.CreateMapped(path, logChunk)
		if !errors.Is(err, errors.ErrUnsupported) {
			return f, err
		}
		d.plainLogs = true
	}
	return d.fs.Create(path)
}

// retireLog keeps obsolete log num for a later rotation to reuse, if fewer
// than Options.RecycledLogs are kept, and reports whether it did; the
// caller deletes it otherwise. The caller holds d.mu, and calls it once the
// edit that made the log obsolete is durable.
func (d *DB) retireLog(num uint64) bool {
	if len(d.recycled) >= d.opts.RecycledLogs {
		return false
	}
	d.recycled = append(d.recycled, num)
	return true
}

// takeRecycledLog returns an obsolete log kept for reuse, or 0 if none is:
// the one retired last, whose pages are the likeliest to be cached still.
// The caller holds d.mu.
func (d *DB) takeRecycledLog() uint64 {
	n := len(d.recycled)
	if n == 0 {
		return 0
	}
	num := d.recycled[n-1]
	d.recycled = d.recycled[:n-1]
	return num
}

// deleteRecycledLogs deletes the obsolete logs kept for reuse. Close calls
// it once nothing can rotate or flush.
func (d *DB) deleteRecycledLogs() {
	d.mu.Lock()
	nums := d.recycled
	d.recycled = nil
	d.mu.Unlock()
	for _, num := range nums {
		d.deleteFile(logName(d.dir, num))
	}
}
