package simpledb

import (
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/logformat"
	"github.com/stratadb/strata/internal/manifest"
	"github.com/stratadb/strata/internal/race"
	"github.com/stratadb/strata/internal/testseed"
	"github.com/stratadb/strata/memstore"
	"github.com/stratadb/strata/recordio"
	"github.com/stratadb/strata/vfs"
	"github.com/stratadb/strata/vfs/errorfs"
	"github.com/stretchr/testify/require"
)

// The commit pipeline's own tests, without a database: it runs over a fake
// commitEnv, one memstore and a log in a memory filesystem, so that an
// interleaving can be forced through the env, or a gate on the log's file.

// pipeHarness is a commit pipeline over a fake database.
type pipeHarness struct {
	p   *commitPipeline
	mem *memTable
	fs  *vfs.MemFS

	mu          sync.Mutex
	keys        map[uint64]string // each op's key by sequence number, as recordWrite saw it
	recorded    uint64            // the last sequence number recordWrite saw
	misnumbered bool              // recordWrite saw an op out of sequence order
	failed      error             // the database's failure: the first env.fail's
}

const pipeLogPath = "/000001.log"

// newPipeHarness returns a pipeline whose log's operations g (if not nil)
// may hold or fail, over an env that lets every write through, to the
// harness's memstore, and rotates nothing for a flush; setEnv (if not nil)
// replaces what a test needs.
func newPipeHarness(t *testing.T, g *gate, setEnv func(h *pipeHarness, env *commitEnv)) *pipeHarness {
	t.Helper()
	h := &pipeHarness{mem: &memTable{m: memstore.New(nil), logNum: 1}, fs: vfs.NewMem(), keys: map[uint64]string{}}
	env := commitEnv{
		certify:        func(*readSet, iter.Seq[*Batch]) error { return nil },
		waitForRoom:    func() error { return nil },
		makeRoom:       func() (*memTable, error) { return h.mem, nil },
		recordWrite:    h.recordWrite,
		rotateForFlush: func() (uint64, error) { return 0, nil },
		fail:           h.fail,
		failure:        h.failure,
	}
	if setEnv != nil {
		setEnv(h, &env)
	}
	h.p = newCommitPipeline(env)
	if g == nil {
		g = newGate(0, nil) // matches nothing
	}
	f, err := errorfs.Wrap(h.fs, g).Create(pipeLogPath)
	require.NoError(t, err)
	rw, err := recordio.NewWriter(f, logWriterOptions)
	require.NoError(t, err)
	h.p.resetSeq(0)
	h.p.installLog(&logWriter{Writer: rw, info: manifest.LogInfo{Num: 1, ID: 1}}, f)
	t.Cleanup(func() {
		// A test that failed with an operation held ends, rather than hangs
		// in close, which syncs.
		g.armed.Store(false)
		select {
		case <-g.held:
			g.release <- nil
		case g.release <- nil:
		default:
		}
		h.p.close()
	})
	return h
}

// recordWrite notes each op's key by sequence number, for the concurrent
// test's reader, and checks that ops come in sequence order.
func (h *pipeHarness) recordWrite(b *Batch, lastSeq uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	logformat.Decode(logformat.Current, b.data, func(seq uint64, _ base.Kind, key, _ []byte) error {
		h.misnumbered = h.misnumbered || seq != h.recorded+1
		h.keys[seq], h.recorded = string(key), seq
		return nil
	})
	h.misnumbered = h.misnumbered || lastSeq != h.recorded
}

func (h *pipeHarness) fail(err error) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failed == nil {
		h.failed = fmt.Errorf("%w: %w", ErrBackground, err)
	}
	return h.failed
}

func (h *pipeHarness) failure() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.failed
}

// commit sends b through the pipeline as DB.write and Txn.Commit do.
func (h *pipeHarness) commit(b *Batch, sync bool, txn *readSet) error {
	w := waiterPool.Get().(*commitWaiter)
	w.batch, w.sync, w.txn = b, sync, txn
	err := h.p.commit(w)
	w.batch, w.txn = nil, nil
	waiterPool.Put(w)
	return err
}

// goCommit commits b in the background, and returns where its result
// arrives once cond (if not nil) holds.
func (h *pipeHarness) goCommit(t *testing.T, b *Batch, sync bool, txn *readSet, cond func() bool) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- h.commit(b, sync, txn) }()
	if cond != nil {
		require.Eventually(t, cond, 5*time.Second, time.Millisecond)
	}
	return done
}

// queued is a goCommit condition: a leader leads and n writers queue
// behind it.
func (h *pipeHarness) queued(n int) func() bool {
	return func() bool {
		h.p.queue.mu.Lock()
		defer h.p.queue.mu.Unlock()
		return h.p.queue.leading && len(h.p.queue.waiters) == n
	}
}

// assigned is a goCommit condition: seq is the last sequence number
// assigned.
func (h *pipeHarness) assigned(seq uint64) func() bool {
	return func() bool { return h.p.lastAssigned(nil) == seq }
}

// pipeBatch returns a batch that puts key.
func pipeBatch(key string) *Batch {
	b := new(Batch)
	b.Put([]byte(key), []byte("v-"+key))
	return b
}

// requireApplied checks whether the memstore holds keys.
func (h *pipeHarness) requireApplied(t *testing.T, applied bool, keys ...string) {
	t.Helper()
	for _, k := range keys {
		_, r := h.mem.m.Get([]byte(k))
		require.Equal(t, applied, r != memstore.Absent, "key %q applied", k)
	}
}

// logBatches replays the log: each batch's first sequence number and count
// of ops, in log order.
func (h *pipeHarness) logBatches(t *testing.T) [][2]uint64 {
	t.Helper()
	f, err := h.fs.Open(pipeLogPath)
	require.NoError(t, err)
	defer f.Close()
	r, err := recordio.NewReader(f, nil)
	require.NoError(t, err)
	var batches [][2]uint64
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return batches
		}
		require.NoError(t, err)
		seq, count, err := logformat.Decode(logformat.Current, rec, nil)
		require.NoError(t, err)
		batches = append(batches, [2]uint64{seq, uint64(count)})
	}
}

// requireResult returns what arrives on ch, failing rather than hanging.
func requireResult(t *testing.T, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("no result")
		return nil
	}
}

// requireWaiting checks that nothing arrives on chs for a while: writes,
// or waits, that must not end yet.
func requireWaiting(t *testing.T, chs ...<-chan error) {
	t.Helper()
	require.Never(t, func() bool {
		return slices.ContainsFunc(chs, func(ch <-chan error) bool { return len(ch) > 0 })
	}, 50*time.Millisecond, 5*time.Millisecond)
}

// Concurrent writers, synced and not: a write is acknowledged once applied
// at its own sequence numbers, each op once; the log holds exactly the
// acknowledged batches, numbered without gap; a synced write costs at most
// one fsync; and a reader sampling meanwhile never finds the visible
// sequence number going back, or ahead of what the memstore holds.
func TestCommitPipelineConcurrentWriters(t *testing.T) {
	seed := testseed.Seed(t)
	const writers, perWriter = 8, 150
	h := newPipeHarness(t, nil, nil)
	var ops, synced atomic.Int64
	errs := make(chan error, writers+1)
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(g)))
			var last uint64
			for i := range perWriter {
				b, n, sync := new(Batch), 1+rng.IntN(3), rng.IntN(2) == 0
				for j := range n {
					b.Put(fmt.Appendf(nil, "w%d-%d-%d", g, i, j), nil)
				}
				err := h.commit(b, sync, nil)
				// A writer's writes are acknowledged in turn, so numbered in
				// turn; each is applied at its own sequence numbers, and
				// visible, once acknowledged.
				seq, _, _ := logformat.Decode(logformat.Current, b.data, nil)
				key := fmt.Appendf(nil, "w%d-%d-0", g, i)
				_, before := h.mem.m.GetAt(key, seq-1)
				_, at := h.mem.m.GetAt(key, seq)
				if err == nil && (seq <= last || before != memstore.Absent || at != memstore.Found || h.p.visible() < seq+uint64(n)-1) {
					err = fmt.Errorf("writer %d's write %d at %d after %d, visible %d: %v before, %v at it",
						g, i, seq, last, h.p.visible(), before, at)
				}
				if err != nil {
					errs <- err
					return
				}
				last = seq + uint64(n) - 1
				ops.Add(int64(n))
				if sync {
					synced.Add(1)
				}
			}
		})
	}
	stop := make(chan struct{})
	var reader sync.WaitGroup
	reader.Go(func() { errs <- h.samplePublished(stop) })
	wg.Wait()
	close(stop)
	reader.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	require.False(t, h.misnumbered, "recordWrite saw every op in sequence order")
	last := h.p.lastAssigned(nil)
	require.EqualValues(t, ops.Load(), last)
	require.Equal(t, last, h.p.visible())
	require.EqualValues(t, ops.Load(), h.mem.m.Len(), "each op applied once")
	batches, next := h.logBatches(t), uint64(1)
	require.Len(t, batches, writers*perWriter)
	for _, b := range batches {
		require.Equal(t, next, b[0], "the log's batches in sequence order, without gap")
		next += b[1]
	}
	require.Equal(t, last+1, next)
	stats := h.p.writeStats()
	require.EqualValues(t, writers*perWriter, stats.writes)
	require.Positive(t, stats.syncs)
	require.LessOrEqual(t, stats.syncs, synced.Load())
}

// samplePublished samples the visible sequence number until stop, and
// returns an error if it goes back, or if a write at or below it is not in
// the memstore: a later batch published without an earlier one.
func (h *pipeHarness) samplePublished(stop <-chan struct{}) error {
	for checked := uint64(0); ; runtime.Gosched() {
		select {
		case <-stop:
			return nil
		default:
		}
		v := h.p.visible()
		if v < checked {
			return fmt.Errorf("visible went back from %d to %d", checked, v)
		}
		for ; checked < v; checked++ {
			h.mu.Lock()
			key, ok := h.keys[checked+1]
			h.mu.Unlock()
			if _, r := h.mem.m.GetAt([]byte(key), v); !ok || r == memstore.Absent {
				return fmt.Errorf("sequence number %d is visible (up to %d) but not applied", checked+1, v)
			}
		}
	}
}

// While a synced write waits for its fsync, the writes appended after it,
// synced or not, are neither applied nor acknowledged: a write is published
// with every write before it, a synced one once durable. The synced writes
// appended meanwhile, each a group of its own, then share the next fsync.
// waitPublished and whileQuiet wait for the fsync too.
func TestCommitPipelinePublishesInOrder(t *testing.T) {
	syncs := newGate(errorfs.OpSync, errorfs.Suffix(".log"))
	h := newPipeHarness(t, syncs, nil)
	require.NoError(t, h.commit(pipeBatch("a"), true, nil))
	syncs.armed.Store(true)
	pending := []<-chan error{h.goCommit(t, pipeBatch("b"), true, nil, nil)}
	requireHeld(t, syncs)
	for i, key := range []string{"c", "d", "e"} {
		pending = append(pending, h.goCommit(t, pipeBatch(key), key != "c", nil, h.assigned(uint64(3+i))))
	}
	waitPublished := func(seq uint64) <-chan error {
		done := make(chan error, 1)
		go func() { h.p.waitPublished(seq); done <- nil }()
		return done
	}
	require.NoError(t, requireResult(t, waitPublished(1)), "a is published")
	quiet := make(chan error, 1)
	go func() {
		quiet <- h.p.whileQuiet(func() error {
			h.p.pub.mu.Lock()
			defer h.p.pub.mu.Unlock()
			h.p.sync.mu.Lock()
			defer h.p.sync.mu.Unlock()
			if len(h.p.pub.pending) > 0 || h.p.sync.syncing || h.p.visible() != 5 {
				return fmt.Errorf("in flight: %d groups, an fsync %t, visible %d", len(h.p.pub.pending), h.p.sync.syncing, h.p.visible())
			}
			return nil
		})
	}()
	pending = append(pending, waitPublished(2), quiet)
	requireWaiting(t, pending...)
	require.EqualValues(t, 1, h.p.visible())
	h.requireApplied(t, true, "a")
	h.requireApplied(t, false, "b", "c", "d", "e")

	syncs.release <- nil
	for _, ch := range pending {
		require.NoError(t, requireResult(t, ch))
	}
	require.EqualValues(t, 5, h.p.visible())
	h.requireApplied(t, true, "b", "c", "d", "e")
	require.EqualValues(t, 3, h.p.writeStats().syncs, "a's fsync, b's, and one for d and e")
}

// A failure of the log, of its fsync or of an append, fails the write it
// hits and every write after it not yet durable, synced or not, as of
// unknown outcome; nothing of them is published, the database is failed,
// and a synced write acknowledged before stays.
func TestCommitPipelineLogFailure(t *testing.T) {
	for _, tc := range []struct {
		name string
		op   errorfs.Op
		// The write hit is synced for an fsync, unsynced for an append: a
		// synced write reaches the file only with its fsync.
		sync bool
		// held: the nth later write waits behind the held operation,
		// appended (behind an fsync) or queued (behind an append, which
		// holds the log).
		held func(h *pipeHarness, n int) func() bool
	}{
		{"fsync", errorfs.OpSync, true, func(h *pipeHarness, n int) func() bool { return h.assigned(uint64(2 + n)) }},
		{"append", errorfs.OpWrite, false, (*pipeHarness).queued},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fault := newGate(tc.op, errorfs.Suffix(".log"))
			h := newPipeHarness(t, fault, nil)
			require.NoError(t, h.commit(pipeBatch("a"), true, nil))
			fault.armed.Store(true)
			failed := []<-chan error{h.goCommit(t, pipeBatch("b"), tc.sync, nil, nil)}
			requireHeld(t, fault)
			for n, key := range []string{"c", "d"} {
				failed = append(failed, h.goCommit(t, pipeBatch(key), key == "d", nil, tc.held(h, n+1)))
			}
			fault.release <- syscall.EIO
			require.Eventually(t, func() bool { return h.p.logError() != nil }, 5*time.Second, time.Millisecond)
			failed = append(failed, h.goCommit(t, pipeBatch("e"), true, nil, nil))
			for _, ch := range failed {
				err := requireResult(t, ch)
				require.ErrorIs(t, err, ErrWriteOutcomeUnknown)
				require.ErrorIs(t, err, ErrBackground)
				require.ErrorIs(t, err, syscall.EIO)
			}
			require.ErrorIs(t, h.p.logError(), ErrWriteOutcomeUnknown)
			require.ErrorIs(t, h.p.logError(), syscall.EIO)
			require.ErrorIs(t, h.failure(), syscall.EIO, "the database is failed")
			require.EqualValues(t, 1, h.p.visible())
			h.requireApplied(t, true, "a")
			h.requireApplied(t, false, "b", "c", "d", "e")
			require.EqualValues(t, 1, h.p.writeStats().syncs)
			h.mu.Lock()
			recorded, misnumbered := slices.Collect(maps.Values(h.keys)), h.misnumbered
			h.mu.Unlock()
			require.NotContains(t, recorded, "e", "nothing is appended to a failed log")
			require.False(t, misnumbered, "no sequence number recorded twice")
			if !tc.sync {
				require.NotContains(t, recorded, "b", "a failed append records nothing")
			}
		})
	}
}

// A flush request whose group a stall refused, the database healthy, gets
// the stall's error: it was not served.
func TestCommitPipelineFlushRequestRefused(t *testing.T) {
	errStall := errors.New("stalled")
	var rotations atomic.Int32
	h := newPipeHarness(t, nil, func(h *pipeHarness, env *commitEnv) {
		env.waitForRoom = func() error { return errStall }
		env.rotateForFlush = func() (uint64, error) { rotations.Add(1); return 0, nil }
	})
	w := &commitWaiter{done: make(chan commitResult, 1)}
	require.ErrorIs(t, h.p.commit(w), errStall)
	require.Zero(t, rotations.Load())
	require.NoError(t, h.failure(), "the database did not fail")
}

// A group the env refuses before its append: a transaction refused by
// certify gets its refusal, the others of its group go on, certified
// against the writes kept ahead of them; a group refused room, by
// waitForRoom or makeRoom, fails whole with the env's error. Nothing
// refused is appended or numbered, the log has not failed, and the next
// group goes on. The first group's leader stalls, so that three
// transactions queue behind it as one group.
func TestCommitPipelineRefusedBeforeAppend(t *testing.T) {
	errRefused, errStall := errors.New("refused"), errors.New("stalled")
	for _, tc := range []struct {
		name     string
		refuse   []int // the transactions certify refuses
		roomErr  error // what the group's room function returns
		makeRoom bool  // the group is refused by makeRoom, else waitForRoom
	}{
		{name: "none"},
		{name: "leader", refuse: []int{0}},
		{name: "follower", refuse: []int{1}},
		{name: "all", refuse: []int{0, 1, 2}},
		{name: "waitForRoom", roomErr: errStall},
		{name: "makeRoom", roomErr: errStall, makeRoom: true},
		{name: "refused and no room", refuse: []int{2}, roomErr: errStall, makeRoom: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			txns := []*readSet{{}, {}, {}}
			batches := []*Batch{pipeBatch("t0"), pipeBatch("t1"), pipeBatch("t2")}
			ahead := map[int][]int{} // per transaction, the writes certified ahead of it
			// The first group to ask for room stalls, so that the
			// transactions queue behind it as one group, the second.
			var groups atomic.Int32
			room := make(chan struct{})
			h := newPipeHarness(t, nil, func(h *pipeHarness, env *commitEnv) {
				env.certify = func(txn *readSet, kept iter.Seq[*Batch]) error {
					i := slices.Index(txns, txn)
					for b := range kept {
						ahead[i] = append(ahead[i], slices.Index(batches, b))
					}
					if slices.Contains(tc.refuse, i) {
						return errRefused
					}
					return nil
				}
				env.waitForRoom = func() error {
					if n := groups.Add(1); n == 1 {
						<-room
					} else if n == 2 && !tc.makeRoom {
						return tc.roomErr
					}
					return nil
				}
				env.makeRoom = func() (*memTable, error) {
					if groups.Load() == 2 && tc.makeRoom {
						return nil, tc.roomErr
					}
					return h.mem, nil
				}
			})
			results := []<-chan error{h.goCommit(t, pipeBatch("x"), false, nil, h.queued(0))}
			for i := range txns {
				results = append(results, h.goCommit(t, batches[i], i == 1, txns[i], h.queued(i+1)))
			}
			close(room)
			// Every result first: certify runs before its transaction's
			// result, and ahead is read once no certify can run.
			errs := make([]error, len(results))
			for i, ch := range results {
				errs[i] = requireResult(t, ch)
			}
			require.NoError(t, errs[0])
			var kept []int
			for i := range txns {
				require.Equal(t, kept, ahead[i], "the writes certified ahead of t%d", i)
				want := tc.roomErr
				if slices.Contains(tc.refuse, i) {
					want = errRefused
				} else {
					kept = append(kept, i)
				}
				require.ErrorIs(t, errs[i+1], want) // nil: no error
				h.requireApplied(t, want == nil, fmt.Sprintf("t%d", i))
			}
			require.NoError(t, h.p.logError())
			require.NoError(t, h.commit(pipeBatch("y"), true, nil))
			written := 2
			if tc.roomErr == nil {
				written += len(kept)
			}
			require.EqualValues(t, written, h.p.visible())
			require.Len(t, h.logBatches(t), written)
		})
	}
}

// A flush request (a waiter without a batch) has rotateForFlush called,
// under the log's lock, and returns the log number it gives, or its
// error; the pipeline goes on either way.
func TestCommitPipelineFlushRequest(t *testing.T) {
	errRotate := errors.New("rotation failed")
	for _, tc := range []struct {
		name    string
		rotated uint64
		err     error
	}{
		{"rotated", 7, nil},
		{"nothing to rotate", 0, nil},
		{"rotation fails", 0, errRotate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			h := newPipeHarness(t, nil, func(h *pipeHarness, env *commitEnv) {
				env.rotateForFlush = func() (uint64, error) {
					calls.Add(1)
					if h.p.log.mu.TryLock() {
						h.p.log.mu.Unlock()
						return 0, errors.New("rotateForFlush without the log's lock")
					}
					return tc.rotated, tc.err
				}
			})
			require.NoError(t, h.commit(pipeBatch("a"), false, nil))
			w := &commitWaiter{done: make(chan commitResult, 1), rotated: 99}
			require.ErrorIs(t, h.p.commit(w), tc.err) // nil: no error
			require.Equal(t, tc.rotated, w.rotated)
			require.EqualValues(t, 1, calls.Load())
			require.NoError(t, h.commit(pipeBatch("b"), true, nil))
			require.EqualValues(t, 2, h.p.visible())
		})
	}
}

// A lone writer's commit, unsynced and with no transaction, allocates
// nothing: its waiter and group are pooled, and certification, which
// builds a closure over its group, runs only for a group that holds a
// transaction. (A closure built for every group cost two allocations a
// write, and a sequential fill 10-15% of its rate.)
func TestCommitPipelineAllocatesNothing(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector drops pooled items at random")
	}
	h := newPipeHarness(t, nil, nil)
	b := pipeBatch("k")
	require.NoError(t, h.commit(b, false, nil))
	allocs := testing.AllocsPerRun(200, func() {
		if err := h.commit(b, false, nil); err != nil {
			t.Fatal(err)
		}
	})
	require.Zero(t, allocs)
}

// The fold gate: a merge may fold above the newest snapshot's sequence
// number, and not at all while a snapshot is being taken; a snapshot
// raises the floor only upward.
func TestPipelineFoldGate(t *testing.T) {
	merge := func(_, older, newer []byte) ([]byte, error) { return append(slices.Clip(older), newer...), nil }
	p := newCommitPipeline(commitEnv{merge: merge})
	require.NotNil(t, p.folder(5).Merge)
	require.Zero(t, p.folder(5).Above)

	p.beginSnapshot() // the merge at 5 is not published, but no group awaits: it returns
	require.Nil(t, p.folder(6).Merge, "no fold while a snapshot is being taken")
	p.endSnapshot(10)
	require.Equal(t, uint64(10), p.folder(7).Above)

	p.beginSnapshot()
	p.endSnapshot(4) // an older snapshot's number lowers nothing
	f := p.folder(8)
	require.NotNil(t, f.Merge)
	require.Equal(t, uint64(10), f.Above)
	require.Zero(t, p.folds.starting.Load())

	require.Nil(t, newCommitPipeline(commitEnv{}).folder(1).Merge, "no merger, no fold")
}
