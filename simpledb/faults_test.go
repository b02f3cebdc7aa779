package simpledb

import (
	"errors"
	"fmt"
	"maps"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/filenames"
	"github.com/stratadb/strata/internal/testseed"
	"github.com/stratadb/strata/recordio"
	"github.com/stratadb/strata/vfs"
	"github.com/stratadb/strata/vfs/errorfs"
	"github.com/stretchr/testify/require"
)

// faultCase injects one kind of fault at one point of the write path.
type faultCase struct {
	name  string
	ops   errorfs.Op
	match func(path string) bool
	// provoke runs the operation the fault hits and returns its error.
	provoke func(db *DB) error
	// log: the fault hits the log, so the failing write's outcome is
	// unknown, and Close reports it too.
	log bool
}

func faultCases() []faultCase {
	put := func(db *DB) error { return db.Put([]byte("provoke"), []byte("v"), DefaultSync) }
	// An unsynced write reaches the log's file at once; a synced one
	// larger than the log's buffer does too. A small synced write stays in
	// the buffer until its fsync.
	putUnsynced := func(db *DB) error {
		b := db.NewBatch()
		b.Put([]byte("provoke"), []byte("v"))
		return db.Write(b, NoSync)
	}
	putLarge := func(db *DB) error { return db.Put([]byte("provoke"), make([]byte, 300<<10), DefaultSync) }
	return []faultCase{
		{"log append", errorfs.OpWrite, errorfs.Suffix(".log"), put, true},
		{"unsynced log append", errorfs.OpWrite, errorfs.Suffix(".log"), putUnsynced, true},
		{"large log append", errorfs.OpWrite, errorfs.Suffix(".log"), putLarge, true},
		{"log sync", errorfs.OpSync, errorfs.Suffix(".log"), put, true},
		{"flush table write", errorfs.OpWrite | errorfs.OpSync, errorfs.Suffix(".sst.tmp"), (*DB).Flush, false},
		{"flush table create", errorfs.OpCreate, errorfs.Suffix(".sst.tmp"), (*DB).Flush, false},
		{"flush table rename", errorfs.OpRename, errorfs.Suffix(".sst"), (*DB).Flush, false},
		{"compaction", errorfs.OpWrite | errorfs.OpSync, errorfs.Suffix(".sst.tmp"), (*DB).Compact, false},
		{"manifest write", errorfs.OpWrite, errorfs.Contains("MANIFEST"), (*DB).Flush, false},
		{"manifest sync", errorfs.OpSync, errorfs.Contains("MANIFEST"), (*DB).Flush, false},
		{"log rotation sync", errorfs.OpSyncDir, nil, (*DB).Flush, false},
	}
}

// Each fault: the failing call reports it; reads go on; later writes are
// refused with ErrBackground while the fault lasts (but for a compaction
// out of space, which fails nothing); once it clears, writes resume
// without a reopen, by themselves out of space and after Resume on an I/O
// error, with every acknowledged write there; a reopen, and a power loss,
// find them all too; no goroutine leaks and nothing panics.
func TestFaultInjection(t *testing.T) {
	injected := map[string]int64{}
	for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EIO} {
		for _, fc := range faultCases() {
			t.Run(fmt.Sprintf("%v/%s", errno, fc.name), func(t *testing.T) {
				before := runtime.NumGoroutine()
				mem := vfs.NewMem()
				rule := &errorfs.Rule{Ops: fc.ops, Match: fc.match, Err: errno}
				fsys := errorfs.Wrap(mem, rule)
				opts := testOptions(fsys)
				// Left to itself, background compaction could do the work
				// before the fault is armed and leave Compact nothing to do.
				opts.DisableAutoCompaction = fc.name == "compaction"
				db, err := Open("/db", opts)
				require.NoError(t, err)

				acked := putAcked(t, db, 0, 150)
				require.NoError(t, db.Flush())
				for k, v := range putAcked(t, db, 150, 300) {
					acked[k] = v
				}
				if fc.name == "compaction" {
					require.NoError(t, db.Flush()) // so that Compact only compacts
				}

				rule.Enable()
				err = fc.provoke(db)
				require.Error(t, err, "the failing call returns an error")
				require.Equal(t, fc.log, errors.Is(err, ErrWriteOutcomeUnknown), "outcome unknown: %v", err)
				require.Positive(t, rule.Hits())
				injected[fc.name] += rule.Hits()

				// Reads go on.
				requireAcked(t, db, acked)
				soft := fc.name == "compaction" && errno == syscall.ENOSPC
				err = db.Put([]byte("later"), []byte("x"), DefaultSync)
				if soft {
					require.NoError(t, err, "a compaction out of space stops no write")
					acked["later"] = "x"
				} else {
					// Writes are refused with a clear error, and stay refused
					// while the fault lasts.
					require.ErrorIs(t, err, ErrBackground)
					require.ErrorIs(t, err, errno)
					require.NotErrorIs(t, err, ErrWriteOutcomeUnknown, "refused before the log")
					if errno == syscall.EIO && fc.name != "compaction" {
						// (Nothing waits on a failed compaction: Resume takes
						// writes again, and the compaction fails again when
						// it runs.)
						require.ErrorIs(t, db.Resume(), errno, "Resume fails while the fault lasts")
						require.ErrorIs(t, db.Put([]byte("later"), []byte("x"), DefaultSync), ErrBackground)
					}
				}

				// Once the fault clears, writes resume without a reopen.
				rule.Disable()
				if errno == syscall.EIO {
					require.NoError(t, db.Resume())
				}
				require.Eventually(t, func() bool { return db.Put([]byte("resumed"), []byte("y"), DefaultSync) == nil },
					10*time.Second, 5*time.Millisecond, "writes resume once the fault clears")
				acked["resumed"] = "y"
				requireAcked(t, db, acked)
				if !soft {
					requireAbsent(t, db, "later")
					require.Positive(t, db.Stats().Resumes)
				}
				require.NoError(t, db.Flush())
				require.NoError(t, db.Close())

				db, err = Open("/db", opts)
				require.NoError(t, err, "reopen")
				requireAcked(t, db, acked)
				require.NoError(t, db.Put([]byte("after"), []byte("fault"), DefaultSync))
				require.NoError(t, db.Close())

				// The power-loss view of the same moment is consistent too.
				crashed := mem.CrashClone(vfs.CrashOptions{})
				opts.FS = crashed
				db, err = Open("/db", opts)
				require.NoError(t, err)
				requireAcked(t, db, acked)
				require.NoError(t, db.Close())
				requireNoGoroutineLeak(t, before)
			})
		}
	}
	t.Logf("faults injected per kind: %v", injected)
}

// A rotation that closed the old log and failed to start the next leaves
// the database without a log: Close reports that failure, not the closed
// log's "closed", and a reopen holds every acknowledged write.
func TestCloseAfterFailedRotation(t *testing.T) {
	mem := vfs.NewMem()
	rule := &errorfs.Rule{Ops: errorfs.OpSyncDir, Err: syscall.EIO}
	opts := smallOptions()
	opts.FS, opts.Logger = errorfs.Wrap(mem, rule), quietLogger
	db, err := Open("/db", opts)
	require.NoError(t, err)
	acked := putAcked(t, db, 0, 50)
	rule.Enable()
	require.ErrorIs(t, db.Flush(), syscall.EIO)
	err = db.Close()
	require.ErrorIs(t, err, ErrBackground)
	require.ErrorIs(t, err, syscall.EIO)
	require.NotErrorIs(t, err, recordio.ErrClosed)
	rule.Disable()
	db, err = Open("/db", opts)
	require.NoError(t, err)
	requireAcked(t, db, acked)
	require.NoError(t, db.Close())
}

// A compaction out of space fails nothing: writes go on, the compaction is
// retried and runs once space is back; if L0 fills up meanwhile, a write
// that would wait for it is refused at once rather than stall.
func TestCompactionOutOfSpace(t *testing.T) {
	var full atomic.Bool
	full.Store(true)
	// The disk is full for compactions' outputs alone: flushes, the log
	// and the manifest have room.
	inj := injectorFunc(func(op errorfs.Op, path string) error {
		if full.Load() && op == errorfs.OpCreate && strings.HasSuffix(path, ".sst.tmp") && inCompaction() {
			return &errorfs.InjectedError{Op: op, Path: path, Err: syscall.ENOSPC}
		}
		return nil
	})
	opts := smallOptions()
	opts.FS, opts.Logger = errorfs.Wrap(vfs.NewMem(), inj), quietLogger
	opts.L0CompactionTrigger, opts.L0StopWritesThreshold = 2, 4
	db, err := Open("/db", opts)
	require.NoError(t, err)
	defer db.Close()
	acked := model{}
	var stalled error
	for round := 0; stalled == nil; round++ {
		require.Less(t, round, 20, "L0 never filled up")
		// The same keys each time: tables that overlap, which a
		// compaction must rewrite (it cannot move one).
		start := time.Now()
		for i := 0; i < 50 && stalled == nil; i++ {
			k, v := fmt.Sprintf("key%04d", i), fmt.Sprintf("value%d.%d", i, round)
			if stalled = db.Put([]byte(k), []byte(v), DefaultSync); stalled == nil {
				acked[k] = v
			}
		}
		if stalled == nil {
			stalled = db.Flush()
		}
		if stalled != nil {
			require.Less(t, time.Since(start), time.Second, "refused at once, not stalled")
			break
		}
		require.Zero(t, db.Stats().BackgroundErrors, "flushes and writes go on while compactions wait for space")
	}
	require.ErrorIs(t, stalled, ErrBackground, "L0 is full")
	require.ErrorIs(t, stalled, syscall.ENOSPC)
	require.Positive(t, db.Stats().CompactionsPaused)
	err = db.Put([]byte("stalled"), []byte("x"), DefaultSync)
	require.ErrorIs(t, err, ErrBackground)
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.NotErrorIs(t, err, ErrWriteOutcomeUnknown)
	requireAcked(t, db, acked)

	full.Store(false)
	require.Eventually(t, func() bool { return db.Put([]byte("resumed"), []byte("y"), DefaultSync) == nil }, 10*time.Second, 5*time.Millisecond)
	acked["resumed"] = "y"
	requireAcked(t, db, acked)
	requireAbsent(t, db, "stalled")
	st := db.Stats()
	require.Positive(t, st.Compactions)
	require.Zero(t, st.BackgroundErrors)
}

// injectorFunc is an errorfs.Injector of one function.
type injectorFunc func(op errorfs.Op, path string) error

func (f injectorFunc) MaybeError(op errorfs.Op, path string) error { return f(op, path) }

// inCompaction reports whether its caller runs for a compaction.
func inCompaction() bool {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	for {
		f, more := frames.Next()
		if strings.HasSuffix(f.Function, ".(*DB).runCompaction") {
			return true
		}
		if !more {
			return false
		}
	}
}

// putAcked puts keys from to to-1 (key0000 = value0, ...) and returns them
// as acknowledged.
func putAcked(t *testing.T, db *DB, from, to int) model {
	t.Helper()
	acked := model{}
	for i := from; i < to; i++ {
		k, v := fmt.Sprintf("key%04d", i), fmt.Sprintf("value%d", i)
		require.NoError(t, db.Put([]byte(k), []byte(v), DefaultSync))
		acked[k] = v
	}
	return acked
}

// requireAcked checks that db holds every acknowledged write.
func requireAcked(t *testing.T, db *DB, acked model) {
	t.Helper()
	for k, v := range acked {
		got, err := db.Get([]byte(k))
		require.NoError(t, err, k)
		require.Equal(t, v, string(got))
	}
}

// requireNoGoroutineLeak waits for the goroutine count to fall back to
// what it was.
func requireNoGoroutineLeak(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			t.Fatalf("%d goroutines leaked:\n%s", runtime.NumGoroutine()-before, buf[:n])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestReadFaults fails table reads: Get and iterators must report the
// injected error, never ErrNotFound or a wrong value, and read correctly
// once the fault clears.
func TestReadFaults(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.EIO, syscall.ENOSPC} {
		t.Run(errno.Error(), func(t *testing.T) {
			rule := &errorfs.Rule{Ops: errorfs.OpRead | errorfs.OpReadAt, Match: errorfs.Suffix(".sst"), Err: errno}
			opts := smallOptions()
			opts.FS, opts.Logger = errorfs.Wrap(vfs.NewMem(), rule), quietLogger
			opts.DisableAutoCompaction = true
			db, err := Open("/db", opts)
			require.NoError(t, err)
			acked := putAcked(t, db, 0, 300)
			require.NoError(t, db.Close())
			db, err = Open("/db", opts) // a cold block cache: reads reach the files
			require.NoError(t, err)
			defer db.Close()

			rule.Enable()
			for k := range acked {
				_, err := db.Get([]byte(k))
				require.ErrorIs(t, err, errno, k)
				require.NotErrorIs(t, err, ErrNotFound)
			}
			it, err := db.NewIterator(nil, nil)
			require.NoError(t, err)
			require.False(t, it.First())
			require.ErrorIs(t, it.Err(), errno)
			require.NoError(t, it.Close())
			require.Positive(t, rule.Hits())

			rule.Disable()
			requireAcked(t, db, acked)
			require.NoError(t, db.Put([]byte("after"), []byte("fault"), DefaultSync), "a read fault does not stop writes")
		})
	}
}

// After a log fsync fails, Close reports it and does not fsync the log
// again: the kernel may have dropped the dirty pages with the error, so a
// retry that succeeds would prove nothing. It still releases the database.
// The same holds after a failed append, and after a rotation's fsync of
// the old log fails.
func TestCloseAfterLogFailure(t *testing.T) {
	write := func(sync bool) func(*DB) error {
		return func(db *DB) error {
			b := db.NewBatch()
			b.Put([]byte("failed"), []byte("v"))
			return db.Write(b, syncIf(sync))
		}
	}
	// EIO only: out of space, the database resumes by itself once the
	// fault clears (TestFaultInjection).
	for _, errno := range []syscall.Errno{syscall.EIO} {
		for _, tc := range []struct {
			name    string
			ops     errorfs.Op
			provoke func(*DB) error
			unknown bool // the provoking call wrote to the log
		}{
			{"sync", errorfs.OpSync, write(true), true},
			{"append", errorfs.OpWrite, write(false), true},
			{"rotation", errorfs.OpSync, (*DB).Flush, false},
		} {
			t.Run(fmt.Sprintf("%v/%s", errno, tc.name), func(t *testing.T) {
				before := runtime.NumGoroutine()
				rule := &errorfs.Rule{Ops: tc.ops, Match: errorfs.Suffix(".log"), Err: errno}
				syncs := newGate(errorfs.OpSync, errorfs.Suffix(".log")) // never armed: it counts
				opts := smallOptions()
				opts.FS, opts.Logger = errorfs.Wrap(vfs.NewMem(), injectors{rule, syncs}), quietLogger
				db, err := Open("/db", opts)
				require.NoError(t, err)
				acked := putAcked(t, db, 0, 10)

				rule.Enable()
				err = tc.provoke(db)
				require.ErrorIs(t, err, ErrBackground)
				require.ErrorIs(t, err, errno)
				require.Equal(t, tc.unknown, errors.Is(err, ErrWriteOutcomeUnknown))
				rule.Disable() // a retry would succeed
				synced := syncs.seen.Load()
				for range 2 {
					err := db.Put([]byte("later"), []byte("v"), DefaultSync)
					require.ErrorIs(t, err, ErrBackground)
					require.ErrorIs(t, err, errno)
					require.NotErrorIs(t, err, ErrWriteOutcomeUnknown)
				}

				err = db.Close()
				require.ErrorIs(t, err, ErrBackground)
				require.ErrorIs(t, err, ErrWriteOutcomeUnknown)
				require.ErrorIs(t, err, errno)
				require.Equal(t, synced, syncs.seen.Load(), "the failed log is not synced again")
				require.ErrorIs(t, db.Put([]byte("closed"), []byte("v"), DefaultSync), ErrClosed)
				require.ErrorIs(t, db.Close(), ErrClosed)
				requireNoGoroutineLeak(t, before)

				db, err = Open("/db", opts) // the lock was released
				require.NoError(t, err)
				requireAcked(t, db, acked)
				require.NoError(t, db.Close())
			})
		}
	}
}

// ENOSPC and EIO while the active log is a recycled file, mapped (the
// operating system's filesystem) or plain (MemFS), and while a rotation
// reuses a file: the call that hits the fault fails, later writes fail
// with ErrBackground (unless, out of space, the database has resumed by
// itself on a new file already), and a reopen after the fault clears holds
// every acknowledged write.
func TestFaultInjectionRecycledLog(t *testing.T) {
	unsynced := func(db *DB) error {
		return db.Put([]byte("provoke"), []byte("v"), NoSync)
	}
	put := func(db *DB) error { return db.Put([]byte("provoke"), []byte("v"), DefaultSync) }
	for _, fsKind := range []string{"mem", "os"} {
		for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EIO} {
			for _, fc := range []struct {
				name    string
				ops     errorfs.Op
				next    bool // the fault hits only the next log, which the rotation starts
				provoke func(db *DB) error
				log     bool // the fault hits the active log: the outcome is unknown
			}{
				{"append", errorfs.OpWrite, false, unsynced, true},
				{"sync", errorfs.OpSync, false, put, true},
				{"reuse", errorfs.OpReuse, false, (*DB).Flush, false},
				{"reused header sync", errorfs.OpSync, true, (*DB).Flush, false},
			} {
				t.Run(fmt.Sprintf("%s/%v/%s", fsKind, errno, fc.name), func(t *testing.T) {
					before := runtime.NumGoroutine()
					var base vfs.FS
					dir := "/db"
					mem := vfs.NewMem()
					if base = mem; fsKind == "os" {
						base, dir = vfs.Default, t.TempDir()
					}
					var next string
					rule := &errorfs.Rule{Ops: fc.ops, Match: func(path string) bool {
						return strings.HasSuffix(path, ".log") && (!fc.next || path == next)
					}, Err: errno}
					opts := smallOptions()
					// No compaction takes a file number before the next log.
					opts.FS, opts.Logger, opts.DisableAutoCompaction = errorfs.Wrap(base, rule), quietLogger, true
					db, err := Open(dir, opts)
					require.NoError(t, err)
					acked := putAcked(t, db, 0, 100)
					require.NoError(t, db.Flush())
					maps.Copy(acked, putAcked(t, db, 100, 150))
					require.NoError(t, db.Flush())
					maps.Copy(acked, putAcked(t, db, 150, 200))
					require.EqualValues(t, 1, db.Stats().LogsRecycled, "the active log is a recycled file")
					db.commits.log.mu.Lock()
					require.Equal(t, fsKind == "mem", db.logs.plain, "logs are mapped on the operating system's filesystem")
					db.commits.log.mu.Unlock()
					db.mu.Lock()
					next = filenames.LogPath(dir, db.mu.versions.nextFile())
					db.mu.Unlock()

					rule.Enable()
					err = fc.provoke(db)
					require.ErrorIs(t, err, errno)
					require.ErrorIs(t, err, ErrBackground)
					require.Equal(t, fc.log, errors.Is(err, ErrWriteOutcomeUnknown), "outcome unknown: %v", err)
					require.Positive(t, rule.Hits())
					requireAcked(t, db, acked)
					err = db.Put([]byte("later"), []byte("x"), DefaultSync)
					if err == nil && errno == syscall.ENOSPC {
						acked["later"] = "x" // resumed on a new log, which the fault does not hit
					} else {
						require.ErrorIs(t, err, ErrBackground)
						require.ErrorIs(t, err, errno)
					}
					db.Close()

					rule.Disable()
					db, err = Open(dir, opts)
					require.NoError(t, err, "reopen after the fault clears")
					requireAcked(t, db, acked)
					if _, ok := acked["later"]; !ok {
						requireAbsent(t, db, "later")
					}
					require.NoError(t, db.Put([]byte("after"), []byte("fault"), DefaultSync))
					require.NoError(t, db.Close())
					if fsKind == "mem" {
						opts.FS = mem.CrashClone(vfs.CrashOptions{})
						db, err = Open(dir, opts)
						require.NoError(t, err, "the power-loss view")
						requireAcked(t, db, acked)
						require.NoError(t, db.Close())
					}
					requireNoGoroutineLeak(t, before)
				})
			}
		}
	}
}

// Resume after a log failure, with the power lost at every step of it:
// each image opens with every acknowledged write, the write whose outcome
// was unknown whole or not at all, and takes new writes. Until the failed
// log's memstore is in a table, a crash replays the failed log, torn tail
// and all, then the new one, which holds nothing yet: no step leaves
// records after a torn tail, which Open would refuse.
func TestResumeInterrupted(t *testing.T) {
	base, acked := workedDB(t, testseed.Seed(t))
	crashAtEveryStep(t, base, acked, func(fsys vfs.FS, arm func()) (*DB, error) {
		fault := &errorfs.Rule{Ops: errorfs.OpSync, Match: errorfs.Suffix(".log"), Err: syscall.EIO}
		opts := smallOptions()
		opts.FS, opts.Logger, opts.DisableAutoCompaction = errorfs.Wrap(fsys, fault), quietLogger, true
		db, err := Open("/db", opts)
		if err != nil {
			return nil, err
		}
		fault.Enable()
		err = db.Put([]byte("unknown"), []byte("outcome"), DefaultSync)
		fault.Disable()
		if !errors.Is(err, ErrWriteOutcomeUnknown) {
			return db, fmt.Errorf("the faulted write: %v", err)
		}
		arm()
		if err := db.Resume(); err != nil {
			return db, err
		}
		return db, db.Put([]byte("after"), []byte("resume"), DefaultSync)
	})
}

// resumeFaults are the faults the randomised tests (TestModel,
// TestPowerLoss, FuzzDB) inject, one at a time, and resume from: a log
// fsync failing a synced write, whose outcome is then unknown, and lost
// once Resume has given up the log; a flush's table out of space; the
// manifest's fsync failing a flush.
type resumeFaults struct{ logSync, tableCreate, manifestSync *errorfs.Rule }

func newResumeFaults() *resumeFaults {
	return &resumeFaults{
		logSync:      &errorfs.Rule{Ops: errorfs.OpSync, Match: errorfs.Suffix(".log"), Err: syscall.EIO},
		tableCreate:  &errorfs.Rule{Ops: errorfs.OpCreate, Match: errorfs.Suffix(".sst.tmp"), Err: syscall.ENOSPC},
		manifestSync: &errorfs.Rule{Ops: errorfs.OpSync, Match: errorfs.Contains("MANIFEST"), Err: syscall.EIO},
	}
}

func (f *resumeFaults) injector() errorfs.Injector {
	return injectors{f.logSync, f.tableCreate, f.manifestSync}
}

// faultKey is the key of the write a log failure fails: no test's model
// holds it.
var faultKey = []byte("fault-of-unknown-outcome")

// inject injects fault kind (modulo 3) into the operation it fails, clears
// it, and resumes: the database must then hold what it held before, take
// writes, and not hold the write that failed. It returns what broke that.
func (f *resumeFaults) inject(db *DB, kind byte) error {
	var err error
	switch kind % 3 {
	case 0:
		f.logSync.Enable()
		err = db.Put(faultKey, []byte("lost"), Sync)
		f.logSync.Disable()
		if !errors.Is(err, ErrWriteOutcomeUnknown) {
			return fmt.Errorf("a write whose log fsync failed: %v", err)
		}
	case 1:
		f.tableCreate.Enable()
		err = db.Flush()
		f.tableCreate.Disable()
	default:
		f.manifestSync.Enable()
		err = db.Flush()
		f.manifestSync.Disable()
	}
	if rerr := db.Resume(); rerr != nil {
		return fmt.Errorf("resume after %v: %w", err, rerr)
	}
	if _, gerr := db.Get(faultKey); !errors.Is(gerr, ErrNotFound) {
		return fmt.Errorf("the write whose outcome was unknown, after Resume: %v", gerr)
	}
	return nil
}
