package simpledb

import (
	"maps"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stratadb/strata/vfs"
	"github.com/stratadb/strata/vfs/errorfs"
	"github.com/stretchr/testify/require"
)

// stepGate holds chosen operations by their order among those it matches:
// once step n is held, the n-th matching operation (from 1) waits, when it
// starts, until the test releases it. It fails nothing.
type stepGate struct {
	ops   errorfs.Op
	match func(path string) bool
	seen  atomic.Int64
	mu    sync.Mutex
	steps map[int64]*heldStep
}

// heldStep is one held operation: held is closed once it starts, release
// lets it go on (before it starts, too).
type heldStep struct {
	held, release chan struct{}
	once          sync.Once
}

func newStepGate(ops errorfs.Op, match func(path string) bool) *stepGate {
	return &stepGate{ops: ops, match: match, steps: map[int64]*heldStep{}}
}

// hold makes the n-th matching operation wait for its release.
func (g *stepGate) hold(n int64) *heldStep {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := &heldStep{held: make(chan struct{}), release: make(chan struct{})}
	g.steps[n] = s
	return s
}

// MaybeError implements errorfs.Injector.
func (g *stepGate) MaybeError(op errorfs.Op, path string) error {
	if g.ops&op == 0 || !g.match(path) {
		return nil
	}
	n := g.seen.Add(1)
	g.mu.Lock()
	s := g.steps[n]
	g.mu.Unlock()
	if s != nil {
		close(s.held)
		<-s.release
	}
	return nil
}

// wait waits for the step's operation to start, failing the test rather
// than hanging if it never does.
func (s *heldStep) wait(t *testing.T) {
	t.Helper()
	select {
	case <-s.held:
	case <-time.After(10 * time.Second):
		t.Fatal("the held operation never came")
	}
}

// free lets the step's operation go on, now or when it comes.
func (s *heldStep) free() { s.once.Do(func() { close(s.release) }) }

// Resume flushes the memstores awaiting a flush through the flush loop,
// never beside it: here the loop is writing memstore A's table when the
// log fails under memstore B, and Resume (explicit, or the automatic one
// out of space) must leave both A and B in tables, with every acknowledged
// write there, also after a reopen. Resume flushing A a second time, as it
// once did, dropped B unflushed when the two flushes of A ended.
func TestResumeBesideRunningFlush(t *testing.T) {
	for _, tc := range []struct {
		name     string
		errno    syscall.Errno
		explicit bool // the test calls Resume; out of space, it runs by itself
	}{
		{"EIO/Resume", syscall.EIO, true},
		{"ENOSPC/automatic", syscall.ENOSPC, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tables := newStepGate(errorfs.OpSync, errorfs.Suffix(".sst.tmp"))
			first, second := tables.hold(1), tables.hold(2)
			defer first.free()
			defer second.free()
			logSync := &errorfs.Rule{Ops: errorfs.OpSync, Match: errorfs.Suffix(".log"), Err: tc.errno}
			db, opts := openGated(t, injectors{tables, logSync})
			defer func() { db.Close() }()

			acked := putAcked(t, db, 0, 100) // memstore A
			go db.Flush()
			first.wait(t)                               // the flush loop writes A's table
			maps.Copy(acked, putAcked(t, db, 100, 200)) // memstore B
			logSync.Enable()
			require.ErrorIs(t, db.Put(faultKey, []byte("lost"), Sync), ErrWriteOutcomeUnknown)
			logSync.Disable()
			flushes := db.Stats().Flushes

			resumed := make(chan error, 1)
			if tc.explicit {
				go func() { resumed <- db.Resume() }()
			}
			select {
			case <-second.held: // a second flush started beside the first
			case <-time.After(250 * time.Millisecond): // it waits for the first, as it must
			}
			first.free()
			require.Eventually(t, func() bool { return db.Stats().Flushes > flushes }, 10*time.Second, time.Millisecond)
			second.free()
			if tc.explicit {
				require.NoError(t, <-resumed)
			}
			require.Eventually(t, func() bool { return db.Put([]byte("resumed"), []byte("y"), Sync) == nil },
				10*time.Second, 5*time.Millisecond)
			acked["resumed"] = "y"
			requireAcked(t, db, acked)
			requireAbsent(t, db, string(faultKey))
			require.NoError(t, db.Close())

			db, err := Open("/db", opts)
			require.NoError(t, err)
			requireAcked(t, db, acked)
			requireAbsent(t, db, string(faultKey))
		})
	}
}

// After the manifest fails on a flush's edit while the live log holds
// acknowledged writes, Resume's new manifest must not claim those writes
// for the tables: a reopen replays the live log, and refuses a log whose
// batches are at or below the manifest's last sequence number. Resume,
// more writes, Close, then Open (and a power loss) must find them all.
func TestResumeAfterManifestFailureReopens(t *testing.T) {
	tables := newStepGate(errorfs.OpSync, errorfs.Suffix(".sst.tmp"))
	held := tables.hold(1)
	defer held.free()
	manifestSync := &errorfs.Rule{Ops: errorfs.OpSync, Match: errorfs.Contains("MANIFEST"), Err: syscall.EIO}
	mem := vfs.NewMem()
	opts := smallOptions()
	opts.FS, opts.Logger, opts.DisableAutoCompaction = errorfs.Wrap(mem, injectors{tables, manifestSync}), quietLogger, true
	db, err := Open("/db", opts)
	require.NoError(t, err)
	defer func() { db.Close() }()

	acked := putAcked(t, db, 0, 100) // memstore A
	flushed := make(chan error, 1)
	go func() { flushed <- db.Flush() }()
	held.wait(t)                                // the rotation's edit is in; A's flush writes its table
	maps.Copy(acked, putAcked(t, db, 100, 150)) // the live log's writes
	manifestSync.Enable()
	held.free()
	err = <-flushed
	require.ErrorIs(t, err, ErrBackground)
	require.ErrorIs(t, err, syscall.EIO)
	manifestSync.Disable()

	require.NoError(t, db.Resume())
	maps.Copy(acked, putAcked(t, db, 150, 160))
	requireAcked(t, db, acked)
	require.NoError(t, db.Close())

	for _, crash := range []bool{false, true} {
		opts.FS = mem
		if crash {
			opts.FS = mem.CrashClone(vfs.CrashOptions{})
		}
		db, err = Open("/db", opts)
		require.NoError(t, err, "power loss: %v", crash)
		requireAcked(t, db, acked)
		require.NoError(t, db.Close())
	}
}

// A Resume that fails out of space starts the automatic retries, as a
// failure out of space does: once space is back, writes go on without
// another call. (The failure before it, a log fsync's EIO, starts none.)
func TestResumeOutOfSpaceRetries(t *testing.T) {
	logSync := &errorfs.Rule{Ops: errorfs.OpSync, Match: errorfs.Suffix(".log"), Err: syscall.EIO}
	logCreate := &errorfs.Rule{Ops: errorfs.OpCreate, Match: errorfs.Suffix(".log"), Err: syscall.ENOSPC}
	opts := smallOptions()
	opts.FS, opts.Logger = errorfs.Wrap(vfs.NewMem(), injectors{logSync, logCreate}), quietLogger
	db, err := Open("/db", opts)
	require.NoError(t, err)
	defer db.Close()

	logSync.Enable()
	require.ErrorIs(t, db.Put([]byte("k"), []byte("lost"), Sync), ErrWriteOutcomeUnknown)
	logSync.Disable()
	logCreate.Enable()
	require.ErrorIs(t, db.Resume(), syscall.ENOSPC)
	logCreate.Disable()
	require.Eventually(t, func() bool { return db.Put([]byte("k"), []byte("after"), Sync) == nil },
		10*time.Second, 10*time.Millisecond, "the automatic resume")
	require.EqualValues(t, 1, db.Stats().Resumes)
}
