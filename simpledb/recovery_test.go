package simpledb

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/filenames"
	"github.com/stratadb/strata/internal/manifest"
	"github.com/stratadb/strata/recordio"
	"github.com/stratadb/strata/sstables"
	"github.com/stratadb/strata/vfs"
	"github.com/stratadb/strata/vfs/errorfs"
	"github.com/stretchr/testify/require"
)

// copyDir copies a database directory as it is: what a crash of the
// process that holds it open would leave.
func copyDir(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	entries, err := os.ReadDir(from)
	require.NoError(t, err)
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(to, e.Name()), data, 0o644))
	}
	return to
}

func listDir(t *testing.T, dir string) []string {
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// plainFS hides a filesystem's vfs.MappedCreator: logs are plain files.
type plainFS struct{ vfs.FS }

// lastLog returns the path of the newest log.
func lastLog(t *testing.T, dir string) string {
	logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	require.NoError(t, err)
	require.NotEmpty(t, logs)
	sort.Strings(logs)
	return logs[len(logs)-1]
}

func TestReopenReplaysTheLog(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, nil)
	require.NoError(t, err)
	acked := putAcked(t, db, 0, 500)
	require.NoError(t, db.Close())

	db, err = Open(dir, nil)
	require.NoError(t, err)
	requireAcked(t, db, acked)
	require.Equal(t, 1, db.Stats().Levels[0].Tables, "the replayed log becomes a table")
	require.NoError(t, db.Close())
}

// Every acknowledged synced write survives the process dying without Close.
func TestCrashWithoutClose(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, smallOptions())
	require.NoError(t, err)
	defer db.Close()
	acked := putAcked(t, db, 0, 3000)
	crashed := copyDir(t, dir)
	os.Remove(filepath.Join(crashed, filenames.LockName))

	db2, err := Open(crashed, smallOptions())
	require.NoError(t, err)
	requireAcked(t, db2, acked)
	require.NoError(t, db2.Close())
}

func TestTornLogTailIsDropped(t *testing.T) {
	for name, tear := range map[string]func(data []byte) []byte{
		"truncated":  func(data []byte) []byte { return data[:len(data)-3] },
		"garbage":    func(data []byte) []byte { return append(data[:len(data)-10], []byte("#garbage!!")...) },
		"zero tail":  func(data []byte) []byte { return append(data, make([]byte, 4096)...) },
		"header cut": func(data []byte) []byte { return data[:len(data)-len("value499")-10] },
	} {
		t.Run(name, func(t *testing.T) {
			// A crash, not Close: Close records the log's length, and the
			// same tear is then damage (TestDamageIsReported).
			// Plain log files: a mapped one's tail is the zeros allocated
			// ahead, and the tear would cut those.
			live := t.TempDir()
			db, err := Open(live, &Options{FS: plainFS{vfs.Default}})
			require.NoError(t, err)
			defer db.Close()
			acked := putAcked(t, db, 0, 500)
			dir := copyDir(t, live)
			require.NoError(t, os.Remove(filepath.Join(dir, filenames.LockName)))
			log := lastLog(t, dir)
			data, err := os.ReadFile(log)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(log, tear(data), 0o644))

			db, err = Open(dir, nil)
			require.NoError(t, err)
			delete(acked, "key0499") // torn
			requireAcked(t, db, acked)
			require.NoError(t, db.Close())
		})
	}
}

// TestDamageIsReported flips a bit inside a log and inside the manifest:
// Open must refuse with ErrCorruption naming the file, and delete nothing.
func TestDamageIsReported(t *testing.T) {
	tests := []struct {
		name   string
		write  func(t *testing.T, db *DB)
		file   func(t *testing.T, dir string) string
		offset func(size int) int
	}{
		{
			name:   "log",
			write:  func(t *testing.T, db *DB) { putAcked(t, db, 0, 500) },
			file:   lastLog,
			offset: func(size int) int { return size / 2 },
		},
		{
			// Close recorded the log's length: its last record is no
			// torn tail.
			name:   "log's last record after Close",
			write:  func(t *testing.T, db *DB) { putAcked(t, db, 0, 500) },
			file:   lastLog,
			offset: func(size int) int { return size - 2 },
		},
		{
			name: "manifest",
			write: func(t *testing.T, db *DB) {
				putAcked(t, db, 0, 100)
				require.NoError(t, db.Flush())
				putAcked(t, db, 100, 200)
				require.NoError(t, db.Flush())
			},
			file: func(t *testing.T, dir string) string {
				manifests, err := filepath.Glob(filepath.Join(dir, "MANIFEST-*"))
				require.NoError(t, err)
				require.Len(t, manifests, 1)
				return manifests[0]
			},
			offset: func(int) int { return 20 }, // inside the first edit
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			db, err := Open(dir, nil)
			require.NoError(t, err)
			tt.write(t, db)
			require.NoError(t, db.Close())

			path := tt.file(t, dir)
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			data[tt.offset(len(data))] ^= 0x20
			require.NoError(t, os.WriteFile(path, data, 0o644))
			before := listDir(t, dir)

			_, err = Open(dir, nil)
			require.ErrorIs(t, err, ErrCorruption)
			require.Contains(t, err.Error(), filepath.Base(path))
			require.Equal(t, before, listDir(t, dir), "nothing deleted")
		})
	}
}

func TestNotADatabase(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644))
	_, err := Open(dir, nil)
	require.ErrorIs(t, err, ErrNotDB)
	require.Equal(t, []string{"notes.txt"}, listDir(t, dir), "the directory as it was: no LOCK left behind")

	// A log without CURRENT is not ours to replay or delete either.
	dir = t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "000005.log"), []byte("x"), 0o644))
	_, err = Open(dir, nil)
	require.ErrorIs(t, err, ErrNotDB)
}

func TestLockedDirectory(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, nil)
	require.NoError(t, err)
	_, err = Open(dir, nil)
	require.ErrorIs(t, err, ErrLocked)
	require.NoError(t, db.Close())
	db, err = Open(dir, nil)
	require.NoError(t, err)
	require.NoError(t, db.Close())
}

func TestOrphansAreRemovedAtOpen(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, nil)
	require.NoError(t, err)
	acked := putAcked(t, db, 0, 10)
	require.NoError(t, db.Flush())
	require.NoError(t, db.Close())
	for _, name := range []string{"000999.sst", "000998.sst.tmp", "CURRENT.tmp", "MANIFEST-000001"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("left by a crash"), 0o644))
	}
	db, err = Open(dir, nil)
	require.NoError(t, err)
	names := listDir(t, dir)
	for _, name := range []string{"000999.sst", "000998.sst.tmp", "CURRENT.tmp", "MANIFEST-000001"} {
		require.NotContains(t, names, name)
	}
	requireAcked(t, db, acked)
	require.NoError(t, db.Close())
}

func TestBadInput(t *testing.T) {
	db, err := Open(t.TempDir(), nil)
	require.NoError(t, err)
	long := make([]byte, MaxKeySize+1)
	require.ErrorIs(t, db.Put(nil, []byte("v"), DefaultSync), ErrEmptyKey)
	require.ErrorIs(t, db.Put([]byte{}, []byte("v"), DefaultSync), ErrEmptyKey)
	require.ErrorIs(t, db.Delete(nil, DefaultSync), ErrEmptyKey)
	_, err = db.Get(nil)
	require.ErrorIs(t, err, ErrEmptyKey)
	require.ErrorIs(t, db.Put(long, nil, DefaultSync), ErrKeyTooLarge)
	require.ErrorIs(t, db.Put([]byte("k"), make([]byte, MaxValueSize+1), DefaultSync), ErrValueTooLarge)

	// Empty values are values, not deletions.
	require.NoError(t, db.Put([]byte("empty"), nil, DefaultSync))
	v, err := db.Get([]byte("empty"))
	require.NoError(t, err)
	require.Equal(t, []byte{}, v)

	// A batch with a rejected op is refused whole.
	b := db.NewBatch()
	require.NoError(t, b.Put([]byte("a"), []byte("1")))
	require.ErrorIs(t, b.Put(nil, []byte("2")), ErrEmptyKey)
	require.ErrorIs(t, db.Write(b, DefaultSync), ErrEmptyKey)
	_, err = db.Get([]byte("a"))
	require.ErrorIs(t, err, ErrNotFound)
	b.Reset()
	require.NoError(t, b.Put([]byte("a"), []byte("1")))
	require.NoError(t, db.Write(b, DefaultSync))
	// A nil batch is an error, not a panic.
	require.ErrorIs(t, db.Write(nil, DefaultSync), ErrNilBatch)
	require.ErrorIs(t, db.Write(nil, Sync), ErrNilBatch)

	snap := db.NewSnapshot()
	it, err := db.NewIterator(nil, nil)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	require.ErrorIs(t, db.Close(), ErrClosed)
	require.ErrorIs(t, db.Put([]byte("k"), nil, DefaultSync), ErrClosed)
	require.ErrorIs(t, db.Delete([]byte("k"), DefaultSync), ErrClosed)
	require.ErrorIs(t, db.Write(b, DefaultSync), ErrClosed)
	require.ErrorIs(t, db.Flush(), ErrClosed)
	require.ErrorIs(t, db.Compact(), ErrClosed)
	_, err = db.Get([]byte("a"))
	require.ErrorIs(t, err, ErrClosed)
	_, err = db.NewIterator(nil, nil)
	require.ErrorIs(t, err, ErrClosed)
	_, err = snap.Get([]byte("a"))
	require.ErrorIs(t, err, ErrClosed)
	_, err = db.NewSnapshot().Get([]byte("a"))
	require.ErrorIs(t, err, ErrClosed)
	// An iterator opened before Close still reads its state.
	require.True(t, it.First())
	require.NoError(t, it.Close())
	require.ErrorIs(t, it.Close(), ErrClosed)
}

// A snapshot and an iterator keep seeing their moment through overwrites,
// deletes, flushes and compactions.
func TestSnapshotsAndIteratorsAreIsolated(t *testing.T) {
	db, err := Open(t.TempDir(), smallOptions())
	require.NoError(t, err)
	defer db.Close()
	putAcked(t, db, 0, 200)
	snap := db.NewSnapshot()
	it, err := db.NewIterator(nil, nil)
	require.NoError(t, err)
	defer it.Close()

	for i := range 200 {
		k := fmt.Appendf(nil, "key%04d", i)
		if i%2 == 0 {
			require.NoError(t, db.Delete(k, DefaultSync))
		} else {
			require.NoError(t, db.Put(k, []byte("overwritten"), DefaultSync))
		}
	}
	putAcked(t, db, 200, 300)
	require.NoError(t, db.Compact())

	for i := range 200 {
		v, err := snap.Get(fmt.Appendf(nil, "key%04d", i))
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("value%d", i), string(v))
	}
	_, err = snap.Get([]byte("key0250"))
	require.ErrorIs(t, err, ErrNotFound)
	n := 0
	for k, v := range it.All() {
		require.Equal(t, fmt.Sprintf("key%04d", n), string(k))
		require.Equal(t, fmt.Sprintf("value%d", n), string(v))
		n++
	}
	require.NoError(t, it.Err())
	require.Equal(t, 200, n)

	require.NoError(t, snap.Release())
	require.ErrorIs(t, snap.Release(), ErrClosed)
	_, err = snap.Get([]byte("key0001"))
	require.ErrorIs(t, err, ErrClosed)

	// Once released, compaction drops what only the snapshot needed.
	require.NoError(t, db.Compact())
	_, err = db.Get([]byte("key0000"))
	require.ErrorIs(t, err, ErrNotFound)
}

// Concurrent synced writers share fsyncs.
func TestGroupCommitSharesSyncs(t *testing.T) {
	db, err := Open(t.TempDir(), nil)
	require.NoError(t, err)
	defer db.Close()
	errs := make(chan error, 16)
	for g := range 16 {
		go func() {
			var err error
			for i := range 100 {
				if err = db.Put(fmt.Appendf(nil, "g%02d-%03d", g, i), []byte("v"), DefaultSync); err != nil {
					break
				}
			}
			errs <- err
		}()
	}
	for range 16 {
		require.NoError(t, <-errs)
	}
	st := db.Stats()
	t.Logf("%d synced writes, %d log syncs", st.Writes, st.LogSyncs)
	require.Equal(t, int64(1600), st.Writes)
	require.Less(t, st.LogSyncs, st.Writes*3/4)
}

// mutatingOps are the filesystem operations that change what a power loss
// leaves behind.
const mutatingOps = errorfs.OpCreate | errorfs.OpWrite | errorfs.OpSync | errorfs.OpRename |
	errorfs.OpRemove | errorfs.OpSyncDir | errorfs.OpMkdir | errorfs.OpReuse | errorfs.OpLink

// crashAtEveryStep runs run on a copy of base once for every change it
// makes to the filesystem: the nth time, the nth change and every later
// one fail, as if the power went there. run calls arm where the crash
// window opens. Each time, what a power loss at that moment leaves (with
// and without torn unsynced writes) must open, hold every acknowledged
// write, take new ones and open again.
func crashAtEveryStep(t *testing.T, base *vfs.MemFS, acked model, run func(fsys vfs.FS, arm func()) (*DB, error)) {
	t.Helper()
	for n := int64(0); ; n++ {
		mem := base.CrashClone(vfs.CrashOptions{})
		rule := &errorfs.Rule{Ops: mutatingOps, After: n, Err: syscall.EIO}
		db, err := run(errorfs.Wrap(mem, rule), rule.Enable)
		crashes := []*vfs.MemFS{
			mem.CrashClone(vfs.CrashOptions{}),
			mem.CrashClone(vfs.CrashOptions{Rand: rand.New(rand.NewPCG(uint64(n), 1))}),
			mem.CrashClone(vfs.CrashOptions{Rand: rand.New(rand.NewPCG(uint64(n), 2)), PageLoss: true, PageSize: 64}),
		}
		rule.Disable()
		if db != nil {
			db.Close()
		}
		for i, crashed := range crashes {
			msg := fmt.Sprintf("power lost at change %d (clone %d: synced only, torn, pages lost), after %v", n+1, i, err)
			db, err := openQuiet(crashed)
			require.NoError(t, err, msg)
			requireAcked(t, db, acked)
			require.NoError(t, db.Put([]byte("after"), []byte("crash"), DefaultSync), msg)
			require.NoError(t, db.Close(), msg)
			db, err = openQuiet(crashed)
			require.NoError(t, err, msg+", then reopened")
			requireAcked(t, db, acked)
			require.NoError(t, db.Close())
		}
		if rule.Hits() == 0 {
			require.NoError(t, err, "run with no fault")
			t.Logf("%d changes, a power loss after each recovered", n)
			return
		}
	}
}

// openQuiet opens the database in /db on fsys with smallOptions, logging
// nothing and compacting only when asked, as the crash and recovery tests
// want it.
func openQuiet(fsys vfs.FS) (*DB, error) {
	opts := testOptions(fsys)
	opts.DisableAutoCompaction = true
	return Open("/db", opts)
}

// workedDB returns a filesystem holding a database with tables and a log
// whose tail holds unsynced writes, as a power loss (tearing them) left it,
// and the writes acknowledged as durable.
func workedDB(t *testing.T, seed uint64) (*vfs.MemFS, model) {
	mem := vfs.NewMem()
	db, err := openQuiet(mem)
	require.NoError(t, err)
	acked := putAcked(t, db, 0, 50)
	require.NoError(t, db.Flush())
	maps.Copy(acked, putAcked(t, db, 50, 100))
	for i := 100; i < 150; i++ {
		require.NoError(t, db.Put(fmt.Appendf(nil, "key%04d", i), []byte("unsynced"), NoSync))
	}
	crashed := mem.CrashClone(vfs.CrashOptions{Rand: rand.New(rand.NewPCG(seed, 2))})
	require.NoError(t, db.Close())
	return crashed, acked
}

// An Open that a power loss interrupts anywhere (writing the replayed logs'
// table, the new manifest, CURRENT, the new log, removing obsolete files)
// leaves a database the next Open recovers.
func TestOpenInterrupted(t *testing.T) {
	t.Parallel()
	open := func(fsys vfs.FS, arm func()) (*DB, error) {
		arm()
		return openQuiet(fsys)
	}
	t.Run("new database", func(t *testing.T) {
		crashAtEveryStep(t, vfs.NewMem(), model{}, open)
	})
	for seed := range uint64(3) {
		t.Run(fmt.Sprintf("recovery/%d", seed), func(t *testing.T) {
			base, acked := workedDB(t, seed)
			crashAtEveryStep(t, base, acked, open)
		})
	}
}

// A flush that a power loss interrupts anywhere (syncing and closing the
// log, creating the next one or reusing a recycled one's file: its rename,
// the new header, the directory sync; writing the table, the manifest
// edit, removing or keeping the flushed log) leaves a database the next
// Open recovers.
func TestFlushInterrupted(t *testing.T) {
	for _, recycle := range []bool{false, true} {
		t.Run(fmt.Sprintf("recycle=%v", recycle), func(t *testing.T) {
			base, acked := workedDB(t, 0)
			crashAtEveryStep(t, base, acked, func(fsys vfs.FS, arm func()) (*DB, error) {
				db, err := openQuiet(fsys)
				require.NoError(t, err)
				if recycle {
					putAcked(t, db, 150, 160)
					require.NoError(t, db.Flush()) // its log is kept for reuse
				}
				for i := 200; i < 210; i++ {
					require.NoError(t, db.Put(fmt.Appendf(nil, "key%04d", i), []byte("synced"), DefaultSync))
					acked[fmt.Sprintf("key%04d", i)] = "synced"
				}
				arm()
				err = db.Flush()
				if err == nil && recycle && db.Stats().LogsRecycled != 1 {
					err = errors.New("the rotation did not reuse the log")
				}
				return db, err
			})
		})
	}
}

// Logs as interrupted sessions leave them: torn tails and header-less logs
// are dropped when no record follows them; records after them are damage.
func TestInterruptedLogs(t *testing.T) {
	headerOnly := func(t *testing.T, fsys *vfs.MemFS, path string) {
		w, err := recordio.Create(path, &recordio.WriterOptions{FS: fsys, Compression: recordio.NoCompression})
		require.NoError(t, err)
		require.NoError(t, w.Close())
		require.NoError(t, fsys.SyncDir("/db"))
	}
	withRecord := func(t *testing.T, fsys *vfs.MemFS, num uint64) {
		id := base.NewFileID(0)
		rewriteFile(t, fsys, filenames.LogPath("/db", num), logFile(t, num, id, logRecord(uint32(id), 1<<40, 0, "late")))
	}
	// tornDB returns a database, as a crash left it, whose last log lost
	// the end of its last record, the number of that log, and the writes
	// it still holds.
	tornDB := func(t *testing.T) (*vfs.MemFS, uint64, model) {
		live := vfs.NewMem()
		opts := testOptions(live)
		db, err := Open("/db", opts)
		require.NoError(t, err)
		acked := putAcked(t, db, 0, 100)
		mem := live.CrashClone(vfs.CrashOptions{})
		require.NoError(t, db.Close())
		delete(acked, "key0099")
		names, err := mem.List("/db")
		require.NoError(t, err)
		var last uint64
		for _, name := range names {
			if kind, num := filenames.Parse(name); kind == filenames.Log {
				last = max(last, num)
			}
		}
		f, err := mem.Open(filenames.LogPath("/db", last))
		require.NoError(t, err)
		data, err := io.ReadAll(f)
		require.NoError(t, err)
		require.NoError(t, f.Close())
		rewriteFile(t, mem, filenames.LogPath("/db", last), data[:len(data)-3])
		return mem, last, acked
	}
	tests := []struct {
		name    string
		prepare func(t *testing.T, fsys *vfs.MemFS, last uint64)
		damage  bool
	}{
		{"torn tail, then a header-only log", func(t *testing.T, fsys *vfs.MemFS, last uint64) {
			headerOnly(t, fsys, filenames.LogPath("/db", last+1))
		}, false},
		{"torn tail, then an empty log, then a header-only one", func(t *testing.T, fsys *vfs.MemFS, last uint64) {
			rewriteFile(t, fsys, filenames.LogPath("/db", last+1), nil)
			headerOnly(t, fsys, filenames.LogPath("/db", last+2))
		}, false},
		{"torn tail, then a log cut inside its header", func(t *testing.T, fsys *vfs.MemFS, last uint64) {
			rewriteFile(t, fsys, filenames.LogPath("/db", last+1), []byte{1, 0, 0})
		}, false},
		{"torn tail, then a log allocated ahead, its header unwritten", func(t *testing.T, fsys *vfs.MemFS, last uint64) {
			rewriteFile(t, fsys, filenames.LogPath("/db", last+1), make([]byte, 4096))
		}, false},
		{"torn tail, then records", func(t *testing.T, fsys *vfs.MemFS, last uint64) {
			withRecord(t, fsys, last+1)
		}, true},
		{"torn tail, then an empty log, then records", func(t *testing.T, fsys *vfs.MemFS, last uint64) {
			rewriteFile(t, fsys, filenames.LogPath("/db", last+1), nil)
			withRecord(t, fsys, last+2)
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys, last, acked := tornDB(t)
			tt.prepare(t, fsys, last)
			before, err := fsys.List("/db")
			require.NoError(t, err)
			opts := testOptions(fsys)
			db, err := Open("/db", opts)
			if tt.damage {
				require.ErrorIs(t, err, ErrCorruption)
				require.Contains(t, err.Error(), filepath.Base(filenames.LogPath("/db", last)))
				after, err := fsys.List("/db")
				require.NoError(t, err)
				require.Equal(t, before, after, "nothing deleted")
				return
			}
			require.NoError(t, err)
			requireAcked(t, db, acked)
			require.NoError(t, db.Close())
		})
	}

	// The first Open of a directory, interrupted by an earlier version once
	// it had created its log but not yet CURRENT.
	for name, data := range map[string][]byte{"empty": nil, "header-only": {}} {
		t.Run("new directory with an "+name+" log", func(t *testing.T) {
			mem := vfs.NewMem()
			require.NoError(t, mem.MkdirAll("/db", 0o755))
			if data == nil {
				rewriteFile(t, mem, filenames.LogPath("/db", 1), nil)
			} else {
				headerOnly(t, mem, filenames.LogPath("/db", 1))
			}
			db, err := Open("/db", &Options{FS: mem, Logger: quietLogger})
			require.NoError(t, err)
			require.NoError(t, db.Put([]byte("k"), []byte("v"), DefaultSync))
			require.NoError(t, db.Close())
		})
	}
}

// rewriteFile replaces a file's contents in /db, durably.
func rewriteFile(t *testing.T, fsys *vfs.MemFS, path string, data []byte) {
	t.Helper()
	f, err := fsys.Create(path)
	require.NoError(t, err)
	_, err = f.Write(data)
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
	require.NoError(t, fsys.SyncDir("/db"))
}

// A flush records its table as it is on disk, and keeps the log it made
// obsolete for reuse, or deletes it when recycling is off.
func TestFlushRecordsTableAndRetiresLog(t *testing.T) {
	for _, recycle := range []bool{true, false} {
		t.Run(fmt.Sprintf("recycle=%v", recycle), func(t *testing.T) {
			mem := vfs.NewMem()
			opts := testOptions(mem)
			opts.DisableAutoCompaction = true
			if !recycle {
				opts.RecycledLogs = -1
			}
			db, err := Open("/db", opts)
			require.NoError(t, err)
			putAcked(t, db, 10, 20)
			require.NoError(t, db.Delete([]byte("key0015"), DefaultSync))
			db.mu.Lock()
			flushed := db.mu.memstores.active().logNum
			db.mu.Unlock()
			require.NoError(t, db.Flush())

			db.mu.Lock()
			tables, active := db.mu.versions.current().levels[0], db.mu.memstores.active().logNum
			db.mu.Unlock()
			require.Len(t, tables, 1)
			info, err := mem.Stat(filenames.TablePath("/db", tables[0].Num))
			require.NoError(t, err)
			require.Equal(t, uint64(info.Size()), tables[0].Size)
			require.Equal(t, "key0010", string(tables[0].Smallest))
			require.Equal(t, "key0019", string(tables[0].Largest))
			require.Equal(t, uint64(1), tables[0].SmallestSeq)
			require.Equal(t, uint64(11), tables[0].LargestSeq)

			want := []uint64{active}
			if recycle {
				want = []uint64{flushed, active}
			}
			require.Equal(t, want, logNumbers(t, mem), "the active log, and the flushed one if it is kept for reuse")
			require.NoError(t, db.Close())
			require.Equal(t, []uint64{active}, logNumbers(t, mem), "Close deletes the logs kept for reuse")
		})
	}
}

// logNumbers returns the numbers of the logs in /db.
func logNumbers(t *testing.T, fsys vfs.FS) []uint64 {
	t.Helper()
	names, err := fsys.List("/db")
	require.NoError(t, err)
	var logs []uint64
	for _, name := range names {
		if kind, num := filenames.Parse(name); kind == filenames.Log {
			logs = append(logs, num)
		}
	}
	return logs
}

// A database or a table written with another key order is refused with
// ErrComparatorMismatch, not reported as damage.
func TestComparatorMismatch(t *testing.T) {
	setup := func(t *testing.T) (*vfs.MemFS, *Options) {
		mem := vfs.NewMem()
		opts := testOptions(mem)
		db, err := Open("/db", opts)
		require.NoError(t, err)
		putAcked(t, db, 0, 10)
		require.NoError(t, db.Flush())
		require.NoError(t, db.Close())
		return mem, opts
	}
	t.Run("manifest", func(t *testing.T) {
		mem, opts := setup(t)
		w, err := recordio.Create(filenames.ManifestPath("/db", 100), &recordio.WriterOptions{FS: mem, Compression: recordio.NoCompression})
		require.NoError(t, err)
		edit := manifest.Edit{Comparator: "other.order", NextFileNum: 101}
		_, err = w.Write(edit.Encode())
		require.NoError(t, err)
		require.NoError(t, w.Close())
		require.NoError(t, manifest.WriteCurrent(mem, "/db", filepath.Base(filenames.ManifestPath("/db", 100))))

		_, err = Open("/db", opts)
		require.ErrorIs(t, err, ErrComparatorMismatch)
		require.NotErrorIs(t, err, ErrCorruption)
	})
	t.Run("table", func(t *testing.T) {
		mem, opts := setup(t)
		names, err := mem.List("/db")
		require.NoError(t, err)
		var table string
		for _, name := range names {
			if kind, _ := filenames.Parse(name); kind == filenames.Table {
				table = "/db/" + name
			}
		}
		require.NotEmpty(t, table)
		other := &sstables.Comparator{Name: "other.order", Compare: bytes.Compare}
		w, err := sstables.NewWriter(table, &sstables.WriterOptions{FS: mem, Comparator: other})
		require.NoError(t, err)
		require.NoError(t, w.Add([]byte("k"), []byte("v")))
		require.NoError(t, w.Close())

		_, err = Open("/db", opts)
		require.ErrorIs(t, err, ErrComparatorMismatch)
		require.NotErrorIs(t, err, ErrCorruption)
	})
}

// A database is opened in the order it was created in: Options.Comparator
// is recorded, another one refused with ErrComparatorMismatch, and the
// directory left as it was.
func TestComparatorRecorded(t *testing.T) {
	mem := vfs.NewMem()
	opts := testOptions(mem)
	opts.Comparator = reverseOrder
	db, err := Open("/db", opts)
	require.NoError(t, err)
	acked := putAcked(t, db, 0, 50)
	require.NoError(t, db.Flush())
	maps.Copy(acked, putAcked(t, db, 50, 60)) // and some in the log
	require.NoError(t, db.Close())

	before := readDirFiles(t, mem, "/db")
	for _, other := range []*sstables.Comparator{nil, sstables.Bytewise, numericOrder} {
		o := *opts
		o.Comparator = other
		_, err := Open("/db", &o)
		require.ErrorIs(t, err, ErrComparatorMismatch)
		require.ErrorContains(t, err, reverseOrder.Name)
		require.Equal(t, before, readDirFiles(t, mem, "/db"), "a refused Open writes nothing")
	}

	db, err = Open("/db", opts)
	require.NoError(t, err)
	defer db.Close()
	requireAcked(t, db, acked)
	it, err := db.NewIterator(nil, nil)
	require.NoError(t, err)
	defer it.Close()
	require.True(t, it.First())
	require.Equal(t, "key0059", string(it.Key()), "the largest key first, in reverse order")
}

// requireIntactOrRefused opens dir and requires one of the two outcomes a
// damaged database may have: it opens holding exactly acked, or Open fails
// with ErrCorruption naming damaged and the directory is as it was. It
// reports whether the database opened.
func requireIntactOrRefused(t *testing.T, dir string, acked model, damaged string) bool {
	t.Helper()
	before := readDirFiles(t, vfs.Default, dir)
	db, err := Open(dir, &Options{Logger: quietLogger})
	if err != nil {
		require.ErrorIs(t, err, ErrCorruption)
		require.Contains(t, err.Error(), damaged)
		require.Equal(t, before, readDirFiles(t, vfs.Default, dir), "a refused Open leaves the directory as it was")
		return false
	}
	defer db.Close()
	requireAcked(t, db, acked)
	require.Equal(t, acked, readAll(t, db))
	return true
}

// A manifest whose tail is cut: before, Open dropped the last edit though
// the log it made obsolete was gone, lost the second flush's keys and
// deleted their table, the only copy of them. Cut at the end of an edit,
// the manifest reads whole but names files gone since: the refusal names
// it, not only the file missing (the damage matrix found one naming the
// log alone).
func TestManifestTailCut(t *testing.T) {
	t.Parallel()
	cuts := []string{}
	for cut := 1; cut <= 10; cut++ {
		cuts = append(cuts, fmt.Sprint(cut))
	}
	for edits := 1; edits <= 4; edits++ {
		cuts = append(cuts, fmt.Sprintf("last %d edits", edits))
	}
	for _, cut := range cuts {
		t.Run(cut, func(t *testing.T) {
			dir := t.TempDir()
			db, err := Open(dir, &Options{Logger: quietLogger})
			require.NoError(t, err)
			acked := putAcked(t, db, 0, 200)
			require.NoError(t, db.Flush())
			maps.Copy(acked, putAcked(t, db, 200, 400))
			require.NoError(t, db.Flush())
			require.NoError(t, db.Close())

			manifests, err := filepath.Glob(filepath.Join(dir, "MANIFEST-*"))
			require.NoError(t, err)
			require.Len(t, manifests, 1)
			data, err := os.ReadFile(manifests[0])
			require.NoError(t, err)
			end := len(data)
			if n, err := strconv.Atoi(cut); err == nil {
				end -= n
			} else {
				var edits int
				_, err := fmt.Sscanf(cut, "last %d edits", &edits)
				require.NoError(t, err)
				ends := recordEnds(t, manifests[0])
				require.Greater(t, len(ends), edits)
				end = int(ends[len(ends)-1-edits])
			}
			require.NoError(t, os.WriteFile(manifests[0], data[:end], 0o644))
			requireIntactOrRefused(t, dir, acked, filepath.Base(manifests[0]))
		})
	}
}

// recordEnds returns where each record of the recordio file at path ends.
func recordEnds(t *testing.T, path string) []int64 {
	t.Helper()
	r, err := recordio.Open(path, &recordio.ReaderOptions{NoMmap: true})
	require.NoError(t, err)
	defer r.Close()
	var ends []int64
	for {
		if _, err := r.Next(); err == io.EOF {
			return ends
		} else {
			require.NoError(t, err)
		}
		ends = append(ends, r.Offset()+r.Info().Size)
	}
}

// A log the manifest needs that is missing is corruption naming it: before,
// Open succeeded without the log's acknowledged writes.
func TestMissingLogIsCorruption(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, &Options{Logger: quietLogger})
	require.NoError(t, err)
	acked := putAcked(t, db, 0, 10)
	require.NoError(t, db.Close())

	log := lastLog(t, dir)
	require.NoError(t, os.Remove(log))
	require.False(t, requireIntactOrRefused(t, dir, acked, filepath.Base(log)))
}

// A memstore smaller than MinMemstoreSize is raised to it: before, a 64 KiB
// one was full after one write (its first 64 KiB arena chunk), and every
// write made a table; under about 1.9 KiB an empty memstore was already
// full.
func TestSmallMemstoreIsClamped(t *testing.T) {
	for _, size := range []int64{1 << 10, 64 << 10} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			db, err := Open("/db", &Options{FS: vfs.NewMem(), MemstoreSize: size, NoSync: true, Logger: quietLogger})
			require.NoError(t, err)
			defer db.Close()
			value := bytes.Repeat([]byte("v"), 60)
			for i := range 2000 {
				require.NoError(t, db.Put(fmt.Appendf(nil, "key%06d", i), value, DefaultSync))
			}
			s := db.Stats()
			require.LessOrEqual(t, s.Flushes+int64(s.ImmutableMemstores), int64(2), "2,000 small writes fill at most a memstore or two")
		})
	}
}
