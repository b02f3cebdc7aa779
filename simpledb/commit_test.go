package simpledb

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/testseed"
	"github.com/stratadb/strata/vfs"
	"github.com/stratadb/strata/vfs/errorfs"
	"github.com/stretchr/testify/require"
)

// gate is an errorfs.Injector for deterministic interleavings: once armed,
// it holds the next operation it matches until the test releases it, and
// fails it with the error released (nil lets it through). It counts every
// operation it matches.
type gate struct {
	ops     errorfs.Op
	match   func(path string) bool
	armed   atomic.Bool
	holdAt  int64         // if set, the holdAt-th operation it matches is held too
	held    chan struct{} // receives once the armed operation starts
	release chan error
	seen    atomic.Int64
}

func newGate(ops errorfs.Op, match func(path string) bool) *gate {
	return &gate{ops: ops, match: match, held: make(chan struct{}), release: make(chan error)}
}

// MaybeError implements errorfs.Injector.
func (g *gate) MaybeError(op errorfs.Op, path string) error {
	if g.ops&op == 0 || !g.match(path) {
		return nil
	}
	if n := g.seen.Add(1); n != g.holdAt && !g.armed.CompareAndSwap(true, false) {
		return nil
	}
	g.held <- struct{}{}
	if err := <-g.release; err != nil {
		return &errorfs.InjectedError{Op: op, Path: path, Err: err}
	}
	return nil
}

// requireHeld waits for the gate to hold its operation, failing the test
// rather than hanging if it never comes.
func requireHeld(t *testing.T, g *gate) {
	t.Helper()
	select {
	case <-g.held:
	case <-time.After(10 * time.Second):
		t.Fatal("the gated operation never came")
	}
}

// injectors injects the first error any of them returns.
type injectors []errorfs.Injector

func (is injectors) MaybeError(op errorfs.Op, path string) error {
	for _, inj := range is {
		if err := inj.MaybeError(op, path); err != nil {
			return err
		}
	}
	return nil
}

// openGated opens a database on a memory filesystem whose operations inj
// can hold or fail.
func openGated(t *testing.T, inj errorfs.Injector) (*DB, *Options) {
	t.Helper()
	opts := smallOptions()
	opts.FS, opts.Logger = errorfs.Wrap(vfs.NewMem(), inj), quietLogger
	opts.DisableAutoCompaction = true
	db, err := Open("/db", opts)
	require.NoError(t, err)
	return db, opts
}

// goWrite puts key in the background, synced or not, and returns where its
// result arrives.
func goWrite(db *DB, key string, sync bool) <-chan error {
	done := make(chan error, 1)
	go func() {
		b := db.NewBatch()
		b.Put([]byte(key), []byte("v-"+key))
		done <- db.Write(b, syncIf(sync))
	}()
	return done
}

// waitPending waits until n groups are appended and await publication.
func waitPending(t *testing.T, db *DB, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		db.commits.pub.mu.Lock()
		defer db.commits.pub.mu.Unlock()
		return len(db.commits.pub.pending) == n
	}, 5*time.Second, time.Millisecond)
}

func requireAbsent(t *testing.T, db *DB, keys ...string) {
	t.Helper()
	for _, k := range keys {
		_, err := db.Get([]byte(k))
		require.ErrorIs(t, err, ErrNotFound, k)
	}
}

// A failed fsync fails every group appended after the one it was for,
// synced or not: none is acknowledged or becomes visible, even when a
// writer publishes between the failure and the database's failed state.
func TestCommitLogSyncFailureFailsLaterGroups(t *testing.T) {
	before := runtime.NumGoroutine()
	g := newGate(errorfs.OpSync, errorfs.Suffix(".log"))
	db, _ := openGated(t, g)
	acked := putAcked(t, db, 0, 10)

	g.armed.Store(true)
	synced := goWrite(db, "synced", true)
	<-g.held // its fsync runs
	unsynced := goWrite(db, "unsynced", false)
	waitPending(t, db, 2) // appended behind it, awaiting its publication
	later := goWrite(db, "later", true)
	waitPending(t, db, 3) // waits for an fsync after the running one

	// Holding d.mu holds the database short of its failed state, which
	// needs it, while the fsync fails and the writers react.
	db.mu.Lock()
	g.release <- syscall.EIO
	var unsyncedErr error
	select {
	case unsyncedErr = <-unsynced:
		db.mu.Unlock()
	case <-time.After(200 * time.Millisecond):
		db.mu.Unlock()
		unsyncedErr = <-unsynced
	}
	require.Error(t, unsyncedErr, "a write behind a failed fsync is not acknowledged")
	for _, err := range []error{<-synced, unsyncedErr, <-later} {
		require.ErrorIs(t, err, ErrBackground)
		require.ErrorIs(t, err, ErrWriteOutcomeUnknown)
		require.ErrorIs(t, err, syscall.EIO)
	}
	requireAbsent(t, db, "synced", "unsynced", "later")
	requireAcked(t, db, acked)
	err := db.Put([]byte("after"), []byte("x"), DefaultSync)
	require.ErrorIs(t, err, ErrBackground)
	require.NotErrorIs(t, err, ErrWriteOutcomeUnknown)
	db.Close()
	requireNoGoroutineLeak(t, before)
}

// A log rotation waiting for a running fsync that fails does not sync the
// failed log again (which could succeed and call the writes durable): it
// refuses.
func TestCommitRotateRefusesFailedLog(t *testing.T) {
	before := runtime.NumGoroutine()
	g := newGate(errorfs.OpSync, errorfs.Suffix(".log"))
	db, _ := openGated(t, g)
	acked := putAcked(t, db, 0, 10)

	g.armed.Store(true)
	synced := goWrite(db, "synced", true)
	requireHeld(t, g)
	flushed := make(chan error, 1)
	go func() { flushed <- db.Flush() }()
	// The flush's rotation holds the pipeline's log lock while it waits for the fsync.
	require.Eventually(t, func() bool {
		if db.commits.log.mu.TryLock() {
			db.commits.log.mu.Unlock()
			return false
		}
		return true
	}, 5*time.Second, time.Millisecond)
	syncs := g.seen.Load()
	g.release <- syscall.EIO

	require.ErrorIs(t, <-synced, ErrWriteOutcomeUnknown)
	err := <-flushed
	require.ErrorIs(t, err, ErrBackground)
	require.NotErrorIs(t, err, ErrWriteOutcomeUnknown, "a flush writes nothing to the log")
	require.Equal(t, syncs, g.seen.Load(), "no log is synced after the failure")
	requireAbsent(t, db, "synced")
	requireAcked(t, db, acked)
	db.Close()
	requireNoGoroutineLeak(t, before)
}

// A write whose append and fsync succeed is applied and acknowledged even
// when a flush fails meanwhile: it is durable, so failing it would report
// as lost a write that comes back on reopen. Writes after the failure are
// refused before they reach the log, and never come back.
func TestCommitSurvivesFlushFailure(t *testing.T) {
	before := runtime.NumGoroutine()
	logSync := newGate(errorfs.OpSync, errorfs.Suffix(".log"))
	tableWrite := newGate(errorfs.OpWrite, errorfs.Suffix(".sst.tmp"))
	db, opts := openGated(t, injectors{logSync, tableWrite})
	acked := putAcked(t, db, 0, 10)

	tableWrite.armed.Store(true)
	flushed := make(chan error, 1)
	go func() { flushed <- db.Flush() }()
	<-tableWrite.held // the flush writes its table
	logSync.armed.Store(true)
	synced := goWrite(db, "synced", true)
	<-logSync.held // the write's fsync runs
	tableWrite.release <- syscall.EIO
	require.ErrorIs(t, <-flushed, ErrBackground) // the database has failed
	logSync.release <- nil

	require.NoError(t, <-synced, "a durable write is acknowledged")
	acked["synced"] = "v-synced"
	requireAcked(t, db, acked)
	err := db.Put([]byte("refused"), []byte("v"), DefaultSync)
	require.ErrorIs(t, err, ErrBackground)
	require.ErrorIs(t, err, syscall.EIO)
	require.NotErrorIs(t, err, ErrWriteOutcomeUnknown)
	require.NoError(t, db.Close(), "the log is intact")
	requireNoGoroutineLeak(t, before)

	db, err = Open("/db", opts)
	require.NoError(t, err)
	requireAcked(t, db, acked)
	requireAbsent(t, db, "refused")
	require.NoError(t, db.Close())
}

// Many writers, synced and not, while the log's fsyncs start failing at a
// random point: every acknowledged write is visible and survives a reopen
// (a synced one a power loss too), no failed write is visible, a write
// refused before the log never comes back, and no write that starts after
// another has failed succeeds.
func TestCommitLogFailureConcurrent(t *testing.T) {
	// The seed picks the failing fsync and which writes sync; the
	// interleaving is the scheduler's.
	seed := testseed.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 0))
	const writers, perWriter = 16, 200
	for round := range 5 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			before := runtime.NumGoroutine()
			mem := vfs.NewMem()
			// Open syncs the log's header once; the rest are the writers'.
			rule := &errorfs.Rule{Ops: errorfs.OpSync, Match: errorfs.Suffix(".log"), Err: syscall.EIO, After: 1 + rng.Int64N(200)}
			rule.Enable()
			opts := smallOptions()
			opts.FS, opts.Logger = errorfs.Wrap(mem, rule), quietLogger
			db, err := Open("/db", opts)
			require.NoError(t, err)

			type result struct {
				key        string
				sync       bool
				err        error
				afterError bool // it started after another write had failed
			}
			var failed atomic.Bool
			results := make([][]result, writers)
			var wg sync.WaitGroup
			for w := range writers {
				syncs := rand.New(rand.NewPCG(seed, uint64(w+1)))
				wg.Go(func() {
					for i := range perWriter {
						r := result{key: fmt.Sprintf("w%02d-%04d", w, i), sync: syncs.IntN(2) == 0}
						r.afterError = failed.Load()
						b := db.NewBatch()
						b.Put([]byte(r.key), []byte("v-"+r.key))
						r.err = db.Write(b, syncIf(r.sync))
						if r.err != nil {
							failed.Store(true)
						}
						results[w] = append(results[w], r)
					}
				})
			}
			wg.Wait()
			require.Positive(t, rule.Hits(), "the fault was injected")

			acked, ackedSynced := model{}, model{}
			var refused []string
			for _, rs := range results {
				for _, r := range rs {
					if r.err == nil {
						require.False(t, r.afterError, "%s succeeded after another write failed", r.key)
						acked[r.key] = "v-" + r.key
						if r.sync {
							ackedSynced[r.key] = "v-" + r.key
						}
						continue
					}
					require.ErrorIs(t, r.err, ErrBackground, r.key)
					require.ErrorIs(t, r.err, syscall.EIO, r.key)
					requireAbsent(t, db, r.key)
					if !errors.Is(r.err, ErrWriteOutcomeUnknown) {
						refused = append(refused, r.key)
					}
				}
			}
			requireAcked(t, db, acked)
			t.Logf("acknowledged %d, refused before the log %d, outcome unknown %d",
				len(acked), len(refused), writers*perWriter-len(acked)-len(refused))
			require.ErrorIs(t, db.Close(), ErrWriteOutcomeUnknown, "Close reports the failed log")

			rule.Disable()
			crashed := mem.CrashClone(vfs.CrashOptions{})
			db, err = Open("/db", opts)
			require.NoError(t, err)
			requireAcked(t, db, acked)
			requireAbsent(t, db, refused...)
			require.NoError(t, db.Close())

			opts.FS = crashed
			db, err = Open("/db", opts)
			require.NoError(t, err)
			requireAcked(t, db, ackedSynced)
			require.NoError(t, db.Close())
			requireNoGoroutineLeak(t, before)
		})
	}
}

// A writer stalled on L0 waits before it takes the log: a synced write
// appended before it gets its fsync meanwhile. Before, the stalled leader
// held the log's lock, and the fsync waited for the compaction.
func TestStalledWriterDoesNotHoldUpFsyncs(t *testing.T) {
	syncGate := newGate(errorfs.OpSync, errorfs.Suffix(".log"))
	// Tables are created by a flush and a manual compaction into L1, two
	// flushes over the same keys, then the compaction they trigger (held:
	// it overlaps L1, so it is no trivial move), then a last flush (held).
	// flushGate does not see the compaction's create while compactionGate
	// holds it: it counts five.
	compactionGate := newGate(errorfs.OpCreate, errorfs.Suffix(".sst.tmp"))
	compactionGate.holdAt = 5
	flushGate := newGate(errorfs.OpCreate, errorfs.Suffix(".sst.tmp"))
	flushGate.holdAt = 5
	opts := smallOptions()
	opts.FS, opts.Logger = errorfs.Wrap(vfs.NewMem(), injectors{syncGate, compactionGate, flushGate}), quietLogger
	opts.L0CompactionTrigger, opts.L0StopWritesThreshold = 2, 3
	db, err := Open("/db", opts)
	require.NoError(t, err)

	fill := func() {
		require.NoError(t, db.Put([]byte("a"), []byte("v"), DefaultSync))
		require.NoError(t, db.Put([]byte("z"), []byte("v"), DefaultSync))
		require.NoError(t, db.Flush())
	}
	fill()
	require.NoError(t, db.Compact())
	fill()
	fill()
	requireHeld(t, compactionGate)
	require.NoError(t, db.Put([]byte("k2"), []byte("v"), DefaultSync))
	flushed := make(chan error, 1)
	go func() { flushed <- db.Flush() }()
	requireHeld(t, flushGate)

	// An fsync runs (held), and a synced write appended behind it needs
	// the next one.
	syncGate.armed.Store(true)
	first := goWrite(db, "first", true)
	requireHeld(t, syncGate)
	second := goWrite(db, "second", true)
	waitPending(t, db, 2)

	// The third flush lands: L0 is full, and the next writer stalls.
	flushGate.release <- nil
	require.NoError(t, <-flushed)
	stalled := goWrite(db, "stalled", false)
	require.Eventually(t, func() bool { return db.Stats().Stalls == 1 }, 5*time.Second, time.Millisecond)

	syncGate.release <- nil
	for _, done := range []<-chan error{first, second} {
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(5 * time.Second):
			t.Fatal("a synced write waited for the stalled writer's compaction")
		}
	}
	select {
	case err := <-stalled:
		t.Fatalf("the stalled write returned before the compaction: %v", err)
	default:
	}
	compactionGate.release <- nil
	require.NoError(t, <-stalled)
	require.NoError(t, db.Close())
}

// syncIf returns the WriteOptions of a synced write if sync, of an
// unsynced one otherwise.
func syncIf(sync bool) WriteOptions {
	if sync {
		return Sync
	}
	return NoSync
}

// WriteOptions override the database's default either way, on every call
// that writes: a synced write costs a log fsync on a NoSync database, an
// unsynced one none on a synced database; DefaultSync keeps the default.
func TestWriteOptionsSync(t *testing.T) {
	writes := []struct {
		name  string
		write func(db *DB, opts WriteOptions) error
	}{
		{"Put", func(db *DB, opts WriteOptions) error { return db.Put([]byte("k"), []byte("v"), opts) }},
		{"Delete", func(db *DB, opts WriteOptions) error { return db.Delete([]byte("k"), opts) }},
		{"DeleteRange", func(db *DB, opts WriteOptions) error { return db.DeleteRange([]byte("a"), []byte("b"), opts) }},
		{"Write", func(db *DB, opts WriteOptions) error { return db.Write(batchOf([]byte("k"), []byte("v")), opts) }},
	}
	for _, tc := range []struct {
		name   string
		noSync bool
		opts   WriteOptions
		syncs  int64
	}{
		{"Sync on an unsynced database", true, Sync, 1},
		{"NoSync on a synced database", false, NoSync, 0},
		{"Sync on a synced database", false, Sync, 1},
		{"NoSync on an unsynced database", true, NoSync, 0},
		{"defaults of a synced database", false, DefaultSync, 1},
		{"defaults of an unsynced database", true, DefaultSync, 0},
	} {
		for _, w := range writes {
			t.Run(tc.name+" "+w.name, func(t *testing.T) {
				opts := smallOptions()
				opts.FS, opts.NoSync = vfs.NewMem(), tc.noSync
				db, err := Open("/db", opts)
				require.NoError(t, err)
				defer db.Close()
				before := db.Stats().LogSyncs
				require.NoError(t, w.write(db, tc.opts))
				require.Equal(t, tc.syncs, db.Stats().LogSyncs-before)
			})
		}
	}
}

// A write with Sync in a NoSync database survives a power loss once it
// returns; one with NoSync in a synced database returns without an fsync,
// and a power loss then takes it, on every call that writes.
func TestWriteOptionsPowerLoss(t *testing.T) {
	writes := []struct {
		name  string
		write func(db *DB, opts WriteOptions) error
		want  model // what the database holds after it, from {a, b, c}
	}{
		{"Put", func(db *DB, opts WriteOptions) error { return db.Put([]byte("d"), []byte("vd"), opts) },
			model{"a": "va", "b": "vb", "c": "vc", "d": "vd"}},
		{"Delete", func(db *DB, opts WriteOptions) error { return db.Delete([]byte("b"), opts) },
			model{"a": "va", "c": "vc"}},
		{"DeleteRange", func(db *DB, opts WriteOptions) error { return db.DeleteRange([]byte("b"), nil, opts) },
			model{"a": "va"}},
		{"Write", func(db *DB, opts WriteOptions) error {
			b := db.NewBatch()
			require.NoError(t, b.Put([]byte("d"), []byte("vd")))
			require.NoError(t, b.Delete([]byte("a")))
			return db.Write(b, opts)
		}, model{"b": "vb", "c": "vc", "d": "vd"}},
	}
	base := model{"a": "va", "b": "vb", "c": "vc"}
	for _, tc := range []struct {
		name    string
		noSync  bool
		opts    WriteOptions
		durable bool
	}{
		{"Sync in a NoSync database", true, Sync, true},
		{"NoSync in a synced database", false, NoSync, false},
	} {
		for _, w := range writes {
			t.Run(tc.name+" "+w.name, func(t *testing.T) {
				mem := vfs.NewMem()
				opts := testOptions(mem)
				opts.NoSync = tc.noSync
				db, err := Open("/db", opts)
				require.NoError(t, err)
				defer db.Close()
				for k, v := range base {
					require.NoError(t, db.Put([]byte(k), []byte(v), Sync))
				}
				syncs := db.Stats().LogSyncs
				require.NoError(t, w.write(db, tc.opts))
				require.Equal(t, w.want, readAll(t, db), "acknowledged, and visible")
				if !tc.durable {
					require.Equal(t, syncs, db.Stats().LogSyncs, "acknowledged without an fsync")
				}

				crashed, err := Open("/db", testOptions(mem.CrashClone(vfs.CrashOptions{})))
				require.NoError(t, err)
				defer crashed.Close()
				if tc.durable {
					require.Equal(t, w.want, readAll(t, crashed), "the synced write survived")
				} else {
					require.Equal(t, base, readAll(t, crashed), "the unsynced write was lost")
				}
			})
		}
	}
}

// WriteOptions with Sync and NoSync both, or a bit no flag has, are
// refused on every call that writes, before anything is written.
func TestWriteOptionsInvalid(t *testing.T) {
	db, err := Open("/db", testOptions(vfs.NewMem()))
	require.NoError(t, err)
	defer db.Close()
	seq := db.commits.visible()
	for _, opts := range []WriteOptions{Sync | NoSync, 1 << 2, 1 << 7, Sync | 1<<3, 0xff} {
		for name, write := range map[string]func() error{
			"Put":                     func() error { return db.Put([]byte("k"), []byte("v"), opts) },
			"Delete":                  func() error { return db.Delete([]byte("k"), opts) },
			"DeleteRange":             func() error { return db.DeleteRange(nil, nil, opts) },
			"Write":                   func() error { return db.Write(batchOf([]byte("k"), []byte("v")), opts) },
			"Write of an empty batch": func() error { return db.Write(db.NewBatch(), opts) },
			"Write of a nil batch":    func() error { return db.Write(nil, opts) },
		} {
			require.ErrorIs(t, write(), ErrInvalidOption, "%s with %#x", name, uint8(opts))
		}
	}
	require.Equal(t, seq, db.commits.visible(), "nothing was written")
}

// Put copies its key and value: the caller may reuse both once it returns,
// and what it writes into them after is not what the database holds.
func TestPutCopiesKeyAndValue(t *testing.T) {
	db, err := Open("/db", testOptions(vfs.NewMem()))
	require.NoError(t, err)
	defer db.Close()
	key, value := []byte("key-1"), []byte("value-1")
	require.NoError(t, db.Put(key, value, DefaultSync))
	copy(key, "key-2")
	copy(value, "value-2")
	require.NoError(t, db.Put(key, value, DefaultSync))
	copy(key, "key-3")
	copy(value, "XXXXXXX")
	for _, stage := range []string{"in the memstore", "in a table"} {
		got := readAll(t, db)
		require.Equal(t, model{"key-1": "value-1", "key-2": "value-2"}, got, stage)
		require.NoError(t, db.Flush())
	}
}
