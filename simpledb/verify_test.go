package simpledb

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stratadb/strata/inspect"
	"github.com/stratadb/strata/internal/filenames"
	"github.com/stratadb/strata/vfs"
	"github.com/stretchr/testify/require"
)

// Verify reads everything of a whole database and finds nothing; it
// takes the lock, and leaves no LOCK file where there was none.
func TestVerifyWholeDatabase(t *testing.T) {
	mem, _ := builtDB(t)
	require.NoError(t, mem.Remove("/db/LOCK"))
	var progress int64
	report, err := Verify("/db", &Options{FS: mem}, func(n int64) { progress += n })
	require.NoError(t, err)
	require.Empty(t, report.Damage)
	require.Empty(t, report.Notes)
	l, err := inspect.ReadLayout("/db", &inspect.Options{FS: mem})
	require.NoError(t, err)
	tables := 0
	for _, ts := range l.Levels {
		tables += len(ts)
	}
	require.Equal(t, tables, report.Tables)
	require.Equal(t, len(l.Logs), report.Logs)
	require.Positive(t, report.Entries)
	require.Positive(t, report.Batches)
	require.Equal(t, report.Bytes, progress)
	names, err := mem.List("/db")
	require.NoError(t, err)
	require.NotContains(t, names, "LOCK")

	// Verify takes no lock: the database opens meanwhile, and verifies
	// while open.
	db, err := Open("/db", &Options{FS: mem, Logger: quietLogger})
	require.NoError(t, err)
	report, err = Verify("/db", &Options{FS: mem}, nil)
	require.NoError(t, err)
	require.Empty(t, report.Damage)
	require.NoError(t, db.Close())

	_, err = Verify("/nothing", &Options{FS: mem}, nil)
	require.ErrorIs(t, err, ErrNotDB)
	require.NoError(t, mem.MkdirAll("/other", 0o755))
	f, err := mem.Create(filepath.Join("/other", "notes.txt"))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, err = Verify("/other", &Options{FS: mem}, nil)
	require.ErrorIs(t, err, ErrNotDB)
}

// A file Verify cannot read (here a directory where a table and the log
// should be) is damage, reported, and the files after it are verified
// still; Open refuses such a log rather than read it as empty.
func TestVerifyUnreadableFiles(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, &Options{Logger: quietLogger, DisableAutoCompaction: true})
	require.NoError(t, err)
	for i := range 3 {
		require.NoError(t, db.Put(fmt.Appendf(nil, "k%d", i), []byte("v"), DefaultSync))
		require.NoError(t, db.Flush())
	}
	require.NoError(t, db.Put([]byte("in the log"), []byte("v"), DefaultSync))
	require.NoError(t, db.Close())
	l, err := inspect.ReadLayout(dir, nil)
	require.NoError(t, err)
	require.Len(t, l.Levels[0], 3)
	require.Len(t, l.Logs, 1)

	table := filenames.TablePath(dir, l.Levels[0][0].Number)
	require.NoError(t, os.Remove(table))
	require.NoError(t, os.Mkdir(table, 0o755))
	log := filenames.LogPath(dir, l.Logs[0].Number)
	require.NoError(t, os.Remove(log))
	require.NoError(t, os.Mkdir(log, 0o755))

	report, err := Verify(dir, nil, nil)
	require.NoError(t, err)
	require.Len(t, report.Damage, 2, "%v", report.Damage)
	require.Contains(t, report.Damage[0].Error(), table)
	require.Contains(t, report.Damage[1].Error(), log)
	require.Equal(t, 2, report.Tables, "the other tables verified")

	_, err = Open(dir, &Options{Logger: quietLogger, ReadOnly: true})
	require.Error(t, err, "a log that cannot be read is not an empty one")
}

// A log's header is durable before the manifest names the log, so a named
// log cut below its header lost it afterwards: Open refuses it, and Verify
// reports it, instead of reading it as a log a crash interrupted while it
// was being created, and losing the synced writes it held. Here the log
// being written when the power went, whose length no edit records.
func TestNamedLogWithoutHeader(t *testing.T) {
	for _, cut := range []int64{0, 5} {
		mem := vfs.NewMem()
		db, err := openQuiet(mem)
		require.NoError(t, err)
		putAcked(t, db, 0, 50)
		crashed := mem.CrashClone(vfs.CrashOptions{})
		require.NoError(t, db.Close())
		l, err := inspect.ReadLayout("/db", &inspect.Options{FS: crashed})
		require.NoError(t, err)
		active := l.Logs[len(l.Logs)-1]
		require.Zero(t, active.Size, "no length recorded")
		log := filenames.LogPath("/db", active.Number)
		data := readDirFiles(t, crashed, "/db")[filepath.Base(log)]
		rewriteFile(t, crashed, log, data[:cut])

		_, err = Open("/db", &Options{FS: crashed, Logger: quietLogger})
		require.ErrorIs(t, err, ErrCorruption, "cut to %d bytes", cut)
		require.ErrorContains(t, err, log)
		report, err := Verify("/db", &Options{FS: crashed}, nil)
		require.NoError(t, err)
		require.Len(t, report.Damage, 1, "cut to %d bytes: %v", cut, report.Damage)
		require.ErrorContains(t, report.Damage[0], log)
	}
}
