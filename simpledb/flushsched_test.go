package simpledb

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratadb/strata/memstore"
)

// fakeFlushes is a flushEnv that records each flush, can hold one back at
// a gate, and fails the flushes asked to.
type fakeFlushes struct {
	mu     sync.Mutex
	s      *flushScheduler
	failed bool
	closed bool
	fails  []error // what the database recorded
	// flushes counts the flushes of each memstore, by log number, started
	// and not; running counts those under way.
	flushes map[uint64]int
	running int
	// gate, if not nil, holds every flush until it is closed; held is
	// sent the memstore's log number as a flush reaches it.
	gate chan struct{}
	held chan uint64
	// errs are the errors the next flushes return, in turn.
	errs []error
}

func newFakeFlushes() *fakeFlushes {
	f := &fakeFlushes{flushes: map[uint64]int{}}
	f.s = &flushScheduler{cond: sync.NewCond(&f.mu), env: flushEnv{
		flush:  f.flush,
		failed: func() bool { return f.failed },
		closed: func() bool { return f.closed },
		fail:   func(err error) { f.failed = true; f.fails = append(f.fails, err) },
	}}
	f.s.reset(&memTable{logNum: 1})
	return f
}

func (f *fakeFlushes) flush(mt *memTable) error {
	f.flushes[mt.logNum]++
	f.running++
	defer func() { f.running-- }()
	if f.running > 1 {
		panic("two flushes at once")
	}
	if f.gate != nil {
		f.mu.Unlock()
		f.held <- mt.logNum
		<-f.gate
		f.mu.Lock()
	}
	if len(f.errs) > 0 {
		err := f.errs[0]
		f.errs = f.errs[1:]
		if err != nil {
			return err
		}
	}
	f.s.flushed(mt)
	return nil
}

// rotate freezes the active memstore and starts log num.
func (f *fakeFlushes) rotate(num uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.s.rotate(&memTable{logNum: num}, false)
}

// start runs the loop; the returned function closes and waits for it.
func (f *fakeFlushes) start(t *testing.T) (stop func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.s.loop()
	}()
	return func() {
		f.mu.Lock()
		f.closed = true
		f.s.cond.Broadcast()
		f.mu.Unlock()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("the flush loop did not stop at close")
		}
	}
}

func (f *fakeFlushes) waitFlushed(rotated uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.s.waitFlushed(rotated, func() error {
		if f.failed {
			return ErrBackground
		}
		return nil
	})
}

func TestFlushSchedulerFlushesOldestFirstOnce(t *testing.T) {
	f := newFakeFlushes()
	defer f.start(t)()
	for num := uint64(2); num <= 6; num++ {
		f.rotate(num)
	}
	require.NoError(t, f.waitFlushed(5))
	f.mu.Lock()
	defer f.mu.Unlock()
	require.Equal(t, map[uint64]int{1: 1, 2: 1, 3: 1, 4: 1, 5: 1}, f.flushes, "each memstore flushed once")
	require.Zero(t, f.s.immutable())
	require.EqualValues(t, 6, f.s.active().logNum)
}

// A flush under way when the database fails and Resume asks for its
// memstores: the flush under way counts, no second flush of its memstore
// starts beside it, and Resume returns once every memstore is flushed.
func TestFlushSchedulerResumeBesideRunningFlush(t *testing.T) {
	f := newFakeFlushes()
	f.gate, f.held = make(chan struct{}), make(chan uint64, 8)
	defer f.start(t)()
	f.rotate(2)
	require.EqualValues(t, 1, <-f.held, "the loop's flush of memstore 1 is under way")

	f.mu.Lock()
	f.failed = true // a log fsync failed meanwhile
	f.s.rotate(&memTable{logNum: 3}, true)
	f.mu.Unlock()
	resumed := make(chan error, 1)
	go func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		resumed <- f.s.flushForResume()
	}()
	select {
	case err := <-resumed:
		t.Fatalf("Resume returned %v with a flush under way", err)
	case <-time.After(20 * time.Millisecond):
	}
	close(f.gate)
	require.EqualValues(t, 2, <-f.held)
	require.NoError(t, <-resumed)
	f.mu.Lock()
	defer f.mu.Unlock()
	require.Equal(t, map[uint64]int{1: 1, 2: 1}, f.flushes, "one flush per memstore, the running one included")
	require.Empty(t, f.fails, "flushes through a failure fail nothing")
}

func TestFlushSchedulerFailures(t *testing.T) {
	errFlush := errors.New("flush failed")
	tests := []struct {
		name      string
		failed    bool // the database failed before the flush
		resume    bool // Resume asks for the flushes
		errs      []error
		wantFails int   // failures recorded as the database's
		wantErr   error // Resume's
		flushed   int   // memstores flushed
	}{
		{name: "a healthy database flushes", flushed: 2},
		{name: "a flush failure fails the database", errs: []error{errFlush}, wantFails: 1},
		{name: "a failed database is not flushed", failed: true},
		{name: "Resume flushes through the failure", failed: true, resume: true, flushed: 2},
		{name: "a flush failure fails Resume, not the database", failed: true, resume: true, errs: []error{nil, errFlush},
			wantErr: errFlush, flushed: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeFlushes()
			f.failed, f.errs = tt.failed, tt.errs
			f.rotate(2)
			f.rotate(3)
			stop := f.start(t)
			defer stop()
			if tt.resume {
				f.mu.Lock()
				err := f.s.flushForResume()
				f.mu.Unlock()
				if tt.wantErr != nil {
					require.ErrorIs(t, err, tt.wantErr)
				} else {
					require.NoError(t, err)
				}
			} else {
				// Whatever the loop does, it does it at once.
				require.Eventually(t, func() bool {
					f.mu.Lock()
					defer f.mu.Unlock()
					return tt.failed || f.failed || f.s.immutable() == 0
				}, 5*time.Second, time.Millisecond)
				time.Sleep(10 * time.Millisecond)
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			require.Len(t, f.fails, tt.wantFails)
			require.Equal(t, tt.flushed, 2-f.s.immutable(), "memstores flushed")
		})
	}
}

func TestFlushSchedulerClose(t *testing.T) {
	f := newFakeFlushes()
	f.failed = true // nothing flushes
	stop := f.start(t)
	f.rotate(2)
	stop()
	require.ErrorIs(t, f.waitFlushed(1), ErrBackground, "the failure comes first")
	f.mu.Lock()
	f.failed = false
	err := f.s.flushForResume()
	f.mu.Unlock()
	require.ErrorIs(t, err, ErrClosed, "a memstore is left unflushed")
	require.ErrorIs(t, f.waitFlushed(1), ErrClosed)
}

func TestFlushSchedulerFlushedOutOfOrderPanics(t *testing.T) {
	f := newFakeFlushes()
	f.rotate(2)
	f.rotate(3)
	require.Panics(t, func() { f.s.flushed(&memTable{logNum: 2}) })
}

func TestFlushSchedulerMemstores(t *testing.T) {
	newMem := func(num uint64, entries int) *memTable {
		m := memstore.New(&memstore.Options{})
		for i := range entries {
			require.NoError(t, m.Apply(uint64(i+1), 1, []byte{byte(i)}, make([]byte, 100)))
		}
		return &memTable{m: m, logNum: num, logID: num * 10, logSize: num * 100}
	}
	f := newFakeFlushes()
	f.s.reset(newMem(1, 10))
	require.Zero(t, f.s.newestImmutable())
	require.EqualValues(t, 1, f.s.nextLog())
	f.s.rotate(newMem(2, 20), false)
	f.s.rotate(newMem(3, 0), true)

	require.EqualValues(t, 2, f.s.newestImmutable())
	require.EqualValues(t, 2, f.s.nextLog(), "the log after the oldest immutable memstore's")
	require.True(t, f.s.imm[1].abandoned)
	var order []uint64
	for _, mt := range f.s.all() {
		order = append(order, mt.logNum)
	}
	require.Equal(t, []uint64{3, 2, 1}, order, "the order a read looks in")
	var logs []uint64
	for _, l := range f.s.logs() {
		require.Equal(t, l.Num*10, l.ID)
		require.Equal(t, l.Num*100, l.Size)
		logs = append(logs, l.Num)
	}
	require.Equal(t, []uint64{1, 2, 3}, logs, "oldest first")

	held := f.s.held()
	require.Positive(t, held)
	require.Equal(t, held, f.s.charge(0, 0), "read-only: each at its size")
	const size = 1 << 20
	require.EqualValues(t, 3*size+2*size, f.s.charge(size, 4), "each at MemstoreSize, and the slots still free")
	require.EqualValues(t, 3*size, f.s.charge(size, 1), "no free slot")
}
