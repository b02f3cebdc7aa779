package simpledb

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"syscall"
	"testing"

	"github.com/stratadb/strata/internal/filenames"
	"github.com/stratadb/strata/internal/logformat"
	"github.com/stratadb/strata/internal/manifest"
	"github.com/stratadb/strata/recordio"
	"github.com/stratadb/strata/vfs"
	"github.com/stratadb/strata/vfs/errorfs"
	"github.com/stretchr/testify/require"
)

const logFilesDir = "/db"

// newLogFilesFS returns an in-memory filesystem holding logFilesDir,
// durably: a crash clone has it.
func newLogFilesFS(t *testing.T) *vfs.MemFS {
	fsys := vfs.NewMem()
	require.NoError(t, fsys.MkdirAll(logFilesDir, 0o755))
	require.NoError(t, fsys.SyncDir("/"))
	return fsys
}

// readLogFile returns the records of the log file at path, whose file
// header the reader checks.
func readLogFile(t *testing.T, fsys vfs.FS, path string) [][]byte {
	t.Helper()
	r, err := recordio.Open(path, &recordio.ReaderOptions{FS: fsys})
	require.NoError(t, err)
	defer r.Close()
	require.Equal(t, recordio.VersionStrata, r.Header().Version)
	var recs [][]byte
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return recs
		}
		require.NoError(t, err)
		recs = append(recs, rec)
	}
}

// requireIdentity checks that rec is the identity record of log info.
func requireIdentity(t *testing.T, info manifest.LogInfo, rec []byte) {
	t.Helper()
	num, id, ok := logformat.DecodeIdentity(rec)
	require.True(t, ok, "an identity record")
	require.Equal(t, info.Num, num)
	require.Equal(t, info.ID, id)
}

// A new log holds its file header and its identity record, durably, and
// so does its directory entry: a power loss right after create keeps it.
func TestLogFilesCreate(t *testing.T) {
	fsys := newLogFilesFS(t)
	l := &logFiles{fs: fsys, dir: logFilesDir, logger: quietLogger, syncOften: true}
	w, f, err := l.create(7, manifest.LogInfo{})
	require.NoError(t, err)
	require.Equal(t, uint64(7), w.info.Num)
	require.NotZero(t, w.info.ID)
	path := filenames.LogPath(logFilesDir, 7)
	require.Equal(t, path, f.Name(), "the file the writer appends to")

	crashed := fsys.CrashClone(vfs.CrashOptions{})
	for name, fsys := range map[string]vfs.FS{"as written": fsys, "after a power loss": crashed} {
		recs := readLogFile(t, fsys, path)
		require.Len(t, recs, 1, name)
		requireIdentity(t, w.info, recs[0])
	}
	require.NoError(t, w.Close())

	// Another log gets another identity.
	w2, _, err := l.create(8, manifest.LogInfo{})
	require.NoError(t, err)
	require.NotEqual(t, w.info.ID, w2.info.ID)
	require.NoError(t, w2.Close())
}

// writeRecycledLog creates log num with one batch in it, closed, and
// returns what the manifest records of it.
func writeRecycledLog(t *testing.T, l *logFiles, num uint64) (manifest.LogInfo, []byte) {
	t.Helper()
	w, _, err := l.create(num, manifest.LogInfo{})
	require.NoError(t, err)
	batch := logformat.AppendOp(logformat.AppendHeader(nil), 1, []byte("key"), []byte("value"))
	_, err = w.Write(batch)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return w.info, batch
}

// A recycled log's file takes the new log's name, durably, and starts
// with the new log's header and identity, written over the earlier use's,
// whose later records it still holds, stamped with the old identity. On
// disk, where this machine's filesystem maps logs, the file is reused
// through a mapping.
func TestLogFilesCreateRecycled(t *testing.T) {
	for _, tc := range []struct {
		name string
		fs   func(t *testing.T) (vfs.FS, string)
	}{
		{"in memory", func(t *testing.T) (vfs.FS, string) { return newLogFilesFS(t), logFilesDir }},
		{"on disk", func(t *testing.T) (vfs.FS, string) { return vfs.Default, t.TempDir() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys, dir := tc.fs(t)
			l := &logFiles{fs: fsys, dir: dir, logger: quietLogger, syncOften: true}
			old, batch := writeRecycledLog(t, l, 3)

			w, _, err := l.create(9, old)
			require.NoError(t, err)
			defer w.Close()
			require.Equal(t, uint64(9), w.info.Num)
			require.NotEqual(t, old.ID, w.info.ID)
			require.NotEqual(t, uint32(old.ID), uint32(w.info.ID), "the stamps of the two uses differ")

			views := map[string]vfs.FS{"as written": fsys}
			if mem, ok := fsys.(*vfs.MemFS); ok {
				views["after a power loss"] = mem.CrashClone(vfs.CrashOptions{})
			}
			oldPath, path := filenames.LogPath(dir, 3), filenames.LogPath(dir, 9)
			for name, fsys := range views {
				_, err := fsys.Stat(oldPath)
				require.ErrorIs(t, err, fs.ErrNotExist, "%s: the old name", name)
				recs := readLogFile(t, fsys, path)
				require.Len(t, recs, 2, name)
				requireIdentity(t, w.info, recs[0])
				require.Equal(t, batch, recs[1], "%s: the earlier use's batch", name)
				require.Equal(t, uint32(old.ID), logformat.Stamp(logformat.Current, recs[1]), "%s: its stamp", name)
			}
		})
	}
}

// A log that fails to be created, or to be made durable, is not left
// behind, nor open; the error says why.
func TestLogFilesCreateFailure(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ops      errorfs.Op
		recycled bool
	}{
		{"create", errorfs.OpCreate, false},
		{"header write", errorfs.OpWrite, false},
		{"sync", errorfs.OpSync, false},
		{"directory sync", errorfs.OpSyncDir, false},
		{"reuse", errorfs.OpReuse, true},
		{"recycled sync", errorfs.OpSync, true},
		{"recycled directory sync", errorfs.OpSyncDir, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := newLogFilesFS(t)
			files := &openFilesFS{FS: mem}
			rule := &errorfs.Rule{Ops: tc.ops, Err: syscall.EIO}
			l := &logFiles{fs: errorfs.Wrap(files, rule), dir: logFilesDir, logger: quietLogger, syncOften: true}
			var recycled manifest.LogInfo
			if tc.recycled {
				recycled, _ = writeRecycledLog(t, l, 3)
			}
			require.Zero(t, files.open.Load())
			rule.Enable()

			_, _, err := l.create(9, recycled)
			require.ErrorIs(t, err, syscall.EIO)
			require.ErrorIs(t, err, errorfs.ErrInjected)
			require.Positive(t, rule.Hits())
			_, serr := mem.Stat(filenames.LogPath(logFilesDir, 9))
			require.ErrorIs(t, serr, fs.ErrNotExist, "the new log")
			require.Zero(t, files.open.Load(), "files left open")
		})
	}
}

// mappedFS is a filesystem whose mapped operations fail with err, and
// count their calls.
type mappedFS struct {
	vfs.FS
	err   error
	tries int
}

func (m *mappedFS) CreateMapped(string, vfs.MappedOptions) (vfs.File, error) {
	m.tries++
	return nil, m.err
}

func (m *mappedFS) ReuseMapped(string, string, vfs.MappedOptions) (vfs.File, error) {
	m.tries++
	return nil, m.err
}

// A filesystem that cannot map is asked once, and logs are plain files
// from then on, recycled ones too; one that fails otherwise fails the
// log, and is asked again.
func TestLogFilesLearnPlain(t *testing.T) {
	t.Run("unsupported", func(t *testing.T) {
		fsys := &mappedFS{FS: newLogFilesFS(t), err: fmt.Errorf("no mapping here: %w", errors.ErrUnsupported)}
		l := &logFiles{fs: fsys, dir: logFilesDir, logger: quietLogger}
		old, _ := writeRecycledLog(t, l, 1)
		require.True(t, l.plain)
		w, _, err := l.create(2, manifest.LogInfo{})
		require.NoError(t, err)
		require.NoError(t, w.Close())
		w, _, err = l.create(3, old)
		require.NoError(t, err)
		require.NoError(t, w.Close())
		require.Equal(t, 1, fsys.tries)
		requireIdentity(t, w.info, readLogFile(t, fsys, filenames.LogPath(logFilesDir, 3))[0])
	})
	t.Run("failed", func(t *testing.T) {
		fsys := &mappedFS{FS: newLogFilesFS(t), err: syscall.ENOSPC}
		l := &logFiles{fs: fsys, dir: logFilesDir, logger: quietLogger}
		for try := 1; try <= 2; try++ {
			_, _, err := l.create(1, manifest.LogInfo{})
			require.ErrorIs(t, err, syscall.ENOSPC)
			require.False(t, l.plain)
			require.Equal(t, try, fsys.tries)
		}
	})
}
