package simpledb

import (
	"fmt"
	"io/fs"
	"maps"
	"runtime"
	"syscall"
	"testing"

	"github.com/stratadb/strata/internal/filenames"
	"github.com/stratadb/strata/vfs"
	"github.com/stratadb/strata/vfs/errorfs"
	"github.com/stretchr/testify/require"
)

// openReadOnly opens /db on fsys read-only, through a filesystem that
// fails every change, and returns the rule that counts the attempts.
func openReadOnly(fsys vfs.FS) (*DB, *errorfs.Rule, error) {
	rule := &errorfs.Rule{Ops: mutatingOps, Err: syscall.EPERM}
	rule.Enable()
	opts := smallOptions()
	opts.FS, opts.Logger, opts.ReadOnly = errorfs.Wrap(fsys, rule), quietLogger, true
	db, err := Open("/db", opts)
	return db, rule, err
}

// builtDB returns a filesystem holding a closed database with tables in
// two levels, and writes in its log that no table holds, and what it
// holds.
func builtDB(t *testing.T) (*vfs.MemFS, model) {
	t.Helper()
	mem := vfs.NewMem()
	db, err := openQuiet(mem)
	require.NoError(t, err)
	acked := putAcked(t, db, 0, 300)
	require.NoError(t, db.Compact())
	maps.Copy(acked, putAcked(t, db, 200, 400))
	require.NoError(t, db.Flush())
	maps.Copy(acked, putAcked(t, db, 350, 450))
	require.NoError(t, db.Delete([]byte("key0001"), DefaultSync))
	delete(acked, "key0001")
	st := db.Stats()
	require.Positive(t, st.Levels[0].Tables)
	require.Positive(t, st.Levels[1].Tables)
	require.NoError(t, db.Close())
	return mem, acked
}

// A read-only database reads everything, refuses every write with
// ErrReadOnly, and leaves the directory as it found it, down to the byte,
// having attempted no change at all.
func TestReadOnlyReadsAndWritesNothing(t *testing.T) {
	mem, acked := builtDB(t)
	before := readDirFiles(t, mem, "/db")
	goroutines := runtime.NumGoroutine()
	db, rule, err := openReadOnly(mem)
	require.NoError(t, err)
	require.LessOrEqual(t, runtime.NumGoroutine(), goroutines, "no flush or compaction runs")

	require.Equal(t, acked, readAll(t, db))
	requireAcked(t, db, acked)
	snap := db.NewSnapshot()
	got, err := snap.Get([]byte("key0400"))
	require.NoError(t, err)
	require.Equal(t, "value400", string(got))
	require.NoError(t, snap.Release())
	st := db.Stats()
	require.Positive(t, st.Levels[0].Tables+st.Levels[1].Tables)
	require.Positive(t, st.MemstoreBytes, "the log's writes, replayed into memory")

	empty := db.NewBatch()
	for _, tc := range []struct {
		name  string
		write func() error
	}{
		{"Put", func() error { return db.Put([]byte("k"), []byte("v"), DefaultSync) }},
		{"Delete", func() error { return db.Delete([]byte("key0002"), DefaultSync) }},
		{"Write", func() error { return db.Write(batchOf([]byte("k"), []byte("v")), DefaultSync) }},
		{"Put, unsynced", func() error { return db.Put([]byte("k"), []byte("v"), NoSync) }},
		{"DeleteRange", func() error { return db.DeleteRange(nil, nil, DefaultSync) }},
		{"Write of an empty batch", func() error { return db.Write(empty, DefaultSync) }},
		{"Flush", db.Flush},
		{"Compact", db.Compact},
	} {
		require.ErrorIs(t, tc.write(), ErrReadOnly, tc.name)
	}
	require.Equal(t, acked, readAll(t, db), "unchanged")
	require.NoError(t, db.Close())
	require.ErrorIs(t, db.Put([]byte("k"), []byte("v"), DefaultSync), ErrClosed, "closed first")
	require.Zero(t, rule.Hits(), "no change was attempted")
	require.Equal(t, before, readDirFiles(t, mem, "/db"))

	// A normal Open afterwards finds the database as it was.
	db, err = openQuiet(mem)
	require.NoError(t, err)
	require.Equal(t, acked, readAll(t, db))
	require.NoError(t, db.Close())
}

// A database that lost power mid-write opens read-only to exactly the
// writes acknowledged as durable, its unsynced tail dropped, and a normal
// Open afterwards recovers the same.
func TestReadOnlyAfterPowerLoss(t *testing.T) {
	mem := vfs.NewMem()
	db, err := openQuiet(mem)
	require.NoError(t, err)
	acked := putAcked(t, db, 0, 100)
	require.NoError(t, db.Flush())
	maps.Copy(acked, putAcked(t, db, 100, 200))
	for i := 200; i < 250; i++ {
		require.NoError(t, db.Put(fmt.Appendf(nil, "key%04d", i), []byte("unsynced"), NoSync))
	}
	crashed := mem.CrashClone(vfs.CrashOptions{})
	require.NoError(t, db.Close())

	before := readDirFiles(t, crashed, "/db")
	ro, rule, err := openReadOnly(crashed)
	require.NoError(t, err)
	require.Equal(t, acked, readAll(t, ro))
	require.NoError(t, ro.Close())
	require.Zero(t, rule.Hits())
	require.Equal(t, before, readDirFiles(t, crashed, "/db"))

	db, err = openQuiet(crashed)
	require.NoError(t, err)
	require.Equal(t, acked, readAll(t, db))
	require.NoError(t, db.Close())
}

// Whatever part of an unsynced tail a power loss keeps, a read-only Open
// sees what a normal Open then recovers.
func TestReadOnlyAgreesWithRecovery(t *testing.T) {
	for seed := range uint64(8) {
		crashed, acked := workedDB(t, seed)
		ro, rule, err := openReadOnly(crashed)
		require.NoError(t, err, "seed %d", seed)
		seen := readAll(t, ro)
		require.NoError(t, ro.Close())
		require.Zero(t, rule.Hits())
		for k, v := range acked {
			require.Equal(t, v, seen[k], "seed %d: acknowledged %s", seed, k)
		}
		db, err := openQuiet(crashed)
		require.NoError(t, err)
		require.Equal(t, seen, readAll(t, db), "seed %d", seed)
		require.NoError(t, db.Close())
	}
}

// A read-only Open of anything but a database is ErrNotDB, and creates
// nothing.
func TestReadOnlyNotADatabase(t *testing.T) {
	for _, tc := range []struct {
		name    string
		files   map[string][]byte // nil: no directory at all
		missing bool
	}{
		{"missing directory", nil, true},
		{"empty directory", map[string][]byte{}, false},
		{"foreign files", map[string][]byte{"notes.txt": []byte("hello")}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := vfs.NewMem()
			if tc.files != nil {
				mem = writeDirFiles(t, "/db", tc.files)
			}
			_, rule, err := openReadOnly(mem)
			require.ErrorIs(t, err, ErrNotDB)
			if tc.missing {
				require.ErrorIs(t, err, fs.ErrNotExist)
				_, err := mem.Stat("/db")
				require.ErrorIs(t, err, fs.ErrNotExist, "not created")
				return
			}
			require.Zero(t, rule.Hits())
			require.Equal(t, tc.files, readDirFiles(t, mem, "/db"), "the directory as it was, without a LOCK file")
		})
	}
}

// A damaged database opened read-only fails as a normal Open does, with
// ErrCorruption, and changes nothing.
func TestReadOnlyDamagedDatabase(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(files map[string][]byte)
	}{
		{"a table missing", func(files map[string][]byte) {
			for name := range files {
				if kind, _ := filenames.Parse(name); kind == filenames.Table {
					delete(files, name)
					return
				}
			}
		}},
		{"CURRENT missing", func(files map[string][]byte) { delete(files, filenames.CurrentName) }},
		{"a log cut short of its recorded length", func(files map[string][]byte) {
			for name, data := range files {
				if kind, _ := filenames.Parse(name); kind == filenames.Log && len(data) > 100 {
					files[name] = data[:len(data)-50]
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem, _ := builtDB(t)
			files := readDirFiles(t, mem, "/db")
			tc.damage(files)
			damaged := writeDirFiles(t, "/db", files)

			_, err := openQuiet(writeDirFiles(t, "/db", files))
			require.ErrorIs(t, err, ErrCorruption, "a normal Open")
			_, rule, err := openReadOnly(damaged)
			require.ErrorIs(t, err, ErrCorruption)
			require.Zero(t, rule.Hits())
			require.Equal(t, files, readDirFiles(t, damaged, "/db"))
		})
	}
}

// A read-only Open takes the directory's lock like any other: it excludes
// a writer and is excluded by one. Where the directory has no LOCK file it
// creates one for the lock and removes it at Close; on a read-only
// filesystem it goes without.
func TestReadOnlyLock(t *testing.T) {
	mem, acked := builtDB(t)
	roOpts := testOptions(mem)
	roOpts.ReadOnly = true

	db, err := openQuiet(mem)
	require.NoError(t, err)
	_, err = Open("/db", roOpts)
	require.ErrorIs(t, err, ErrLocked, "a writer holds the directory")
	require.NoError(t, db.Close())

	ro, err := Open("/db", roOpts)
	require.NoError(t, err)
	_, err = openQuiet(mem)
	require.ErrorIs(t, err, ErrLocked, "a reader holds the directory")
	_, err = Open("/db", roOpts)
	require.ErrorIs(t, err, ErrLocked, "readers exclude each other")
	require.NoError(t, ro.Close())

	require.NoError(t, mem.Remove("/db/"+filenames.LockName))
	before := readDirFiles(t, mem, "/db")
	ro, err = Open("/db", roOpts)
	require.NoError(t, err)
	_, err = mem.Stat("/db/" + filenames.LockName)
	require.NoError(t, err, "created for the lock")
	require.NoError(t, ro.Close())
	require.Equal(t, before, readDirFiles(t, mem, "/db"), "and removed at Close")

	rule := &errorfs.Rule{Ops: errorfs.OpLock, Err: syscall.EROFS}
	rule.Enable()
	rofs := *roOpts
	rofs.FS = errorfs.Wrap(mem, rule)
	ro, err = Open("/db", &rofs)
	require.NoError(t, err, "a read-only filesystem")
	require.Equal(t, acked, readAll(t, ro))
	require.NoError(t, ro.Close())
	require.Equal(t, before, readDirFiles(t, mem, "/db"))
	rofs.ReadOnly = false
	_, err = Open("/db", &rofs)
	require.ErrorIs(t, err, syscall.EROFS, "a writer needs the lock")
}

// With ErrorIfNotExists, Open refuses a directory that holds no database
// as a read-only Open does, creating nothing, and opens one that does for
// writing.
func TestErrorIfNotExists(t *testing.T) {
	for _, files := range []map[string][]byte{nil, {}, {"notes.txt": []byte("hello")}} {
		mem := vfs.NewMem()
		if files != nil {
			mem = writeDirFiles(t, "/db", files)
		}
		_, err := Open("/db", &Options{FS: mem, ErrorIfNotExists: true})
		require.ErrorIs(t, err, ErrNotDB)
		require.NotContains(t, err.Error(), "read-only", "the Open was not read-only")
		if len(files) == 0 {
			require.ErrorContains(t, err, "open /db with ErrorIfNotExists")
		}
		if files == nil {
			_, err := mem.Stat("/db")
			require.ErrorIs(t, err, fs.ErrNotExist, "not created")
		} else {
			require.Equal(t, files, readDirFiles(t, mem, "/db"), "nothing created")
		}
	}
	mem, _ := builtDB(t)
	db, err := Open("/db", &Options{FS: mem, ErrorIfNotExists: true, Logger: quietLogger})
	require.NoError(t, err)
	require.NoError(t, db.Put([]byte("k"), []byte("v"), DefaultSync))
	require.NoError(t, db.Close())
}

// A regular file given as the directory is ErrNotDB, however it is
// opened, and stays as it was.
func TestOpenOfAFile(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"to write", Options{}},
		{"read-only", Options{ReadOnly: true}},
		{"with ErrorIfNotExists", Options{ErrorIfNotExists: true}},
		{"to follow", Options{Follow: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := writeDirFiles(t, "/dir", map[string][]byte{"afile": []byte("hello")})
			tc.opts.FS, tc.opts.Logger = mem, quietLogger
			_, err := Open("/dir/afile", &tc.opts)
			require.ErrorIs(t, err, ErrNotDB)
			require.ErrorContains(t, err, "/dir/afile")
			require.Equal(t, map[string][]byte{"afile": []byte("hello")}, readDirFiles(t, mem, "/dir"))
		})
	}
}
