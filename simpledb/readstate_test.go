package simpledb

import (
	"bytes"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/memstore"
	"github.com/stretchr/testify/require"
)

// These tests drive readStates and the references of read states without
// a database: states are built and published as installReadState and
// applyEdit do, over memstores and versions made by hand.

// newTestVersion returns a version holding one table, numbered num, with
// the version set's reference. Its table is marked obsolete, so that the
// table cache retires it, which the test observes, once the version goes.
func newTestVersion(tc *tableCache, num uint64) *version {
	v := &version{cmp: bytes.Compare}
	t := newTestTable(tc, num, "a", "z", num)
	t.obsolete.Store(true)
	v.levels[1] = []*table{t}
	v.refs.Store(1)
	return v
}

// publish installs the state of mem, imm and v as installReadState does:
// the state takes a reference on each (newReadState).
func publish(r *readStates, mem *memTable, imm []*memTable, v *version) *readState {
	rs := newReadState(mem, imm, v)
	r.swap(rs)
	return rs
}

func TestReadStatesAcquireAfterClose(t *testing.T) {
	var r readStates
	_, err := r.acquire()
	require.ErrorIs(t, err, ErrClosed, "before a state is published")
	var retired retiredTables
	v := newTestVersion(newTestTableCache(&retired), 1)
	rs := publish(&r, &memTable{m: memstore.New(nil)}, nil, v)
	v.unref() // the version set's: the state holds it alone
	got, err := r.acquire()
	require.NoError(t, err)
	require.Same(t, rs, got)
	got.unref()
	r.swap(nil)
	_, err = r.acquire()
	require.ErrorIs(t, err, ErrClosed)
	require.Zero(t, rs.refs.Load())
	require.Zero(t, rs.mem.refs.Load())
	require.Equal(t, []uint64{1}, retired.list(), "the state's version is released with it")
}

// A state swapped out stays whole while readers hold it: its memstores and
// its version's tables are released when the last of them drops it, and a
// memstore the next state holds too stays.
func TestReadStateHeldUntilLastReader(t *testing.T) {
	for _, readers := range []int{0, 1, 3} {
		t.Run(fmt.Sprintf("%d readers", readers), func(t *testing.T) {
			var retired retiredTables
			tc := newTestTableCache(&retired)
			var r readStates
			mt0, mt1, mt2 := &memTable{m: memstore.New(nil)}, &memTable{m: memstore.New(nil)}, &memTable{m: memstore.New(nil)}
			v1, v2 := newTestVersion(tc, 1), newTestVersion(tc, 2)
			rs1 := publish(&r, mt1, []*memTable{mt0}, v1)
			var held []*readState
			for range readers {
				rs, err := r.acquire()
				require.NoError(t, err)
				require.Same(t, rs1, rs)
				held = append(held, rs)
			}
			// A flush: mt1 becomes immutable under a new memstore, mt0's
			// table replaces v1, which the version set then drops.
			publish(&r, mt2, []*memTable{mt1}, v2)
			v1.unref()
			for i, rs := range held {
				require.Equal(t, []int32{1, 2, 1}, []int32{mt0.refs.Load(), mt1.refs.Load(), v1.refs.Load()},
					"the swapped-out state is held by %d readers", len(held)-i)
				require.Empty(t, retired.list())
				rs.unref()
			}
			require.Equal(t, []int32{0, 1, 0}, []int32{mt0.refs.Load(), mt1.refs.Load(), v1.refs.Load()},
				"released with its last reader, but for what the current state holds")
			require.Equal(t, []uint64{1}, retired.list())

			r.swap(nil) // Close
			v2.unref()
			require.Equal(t, []int32{0, 0, 0}, []int32{mt1.refs.Load(), mt2.refs.Load(), v2.refs.Load()})
			require.Equal(t, []uint64{1, 2}, retired.list())
		})
	}
}

// Readers acquire and drop states while a writer publishes new ones, as
// flushes do, and finally closes: no state, memstore or table is released
// while a reader holds it, and every one is released once, at the end.
// The memstores are off the Go heap, so a read of one released faults.
func TestReadStatesConcurrentSwaps(t *testing.T) {
	const states, readers = 1500, 2
	var retired retiredTables
	tc := newTestTableCache(&retired)
	var r readStates
	var mems []*memTable
	newMem := func() *memTable {
		m := memstore.New(&memstore.Options{OffHeap: true})
		require.NoError(t, m.Put([]byte("state"), fmt.Appendf(nil, "%d", len(mems))))
		mems = append(mems, &memTable{m: m, logNum: uint64(len(mems))})
		return mems[len(mems)-1]
	}
	// State i is memstore i over memstore i-1, and a version that changes
	// every other state, as a rotation and its flush do.
	v := newTestVersion(tc, 0)
	versions := []*version{v}
	publish(&r, newMem(), nil, v)

	var wg, started sync.WaitGroup
	var acquired atomic.Int64
	errs := make(chan error, readers)
	started.Add(readers)
	for range readers {
		wg.Go(func() {
			for first := true; ; first = false {
				rs, err := r.acquire()
				if err != nil {
					errs <- nil
					return
				}
				acquired.Add(1)
				if first {
					started.Done()
				}
				if err := checkHeld(rs, &retired); err != nil {
					rs.unref()
					errs <- err
					return
				}
				rs.unref()
			}
		})
	}
	started.Wait() // every reader in its loop before the first swap
	start := time.Now()
	for i := 1; i < states; i++ {
		old := v
		if i%2 == 0 {
			v = newTestVersion(tc, uint64(i))
			versions = append(versions, v)
		}
		prev := mems[i-1]
		publish(&r, newMem(), []*memTable{prev}, v)
		if old != v {
			old.unref()
		}
	}
	r.swap(nil)
	v.unref()
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	t.Logf("%d acquisitions over %d states in %v", acquired.Load(), states, time.Since(start))
	require.Positive(t, acquired.Load())
	for i, mt := range mems {
		require.Zero(t, mt.refs.Load(), "memstore %d", i)
	}
	var want []uint64
	for _, v := range versions {
		require.Zero(t, v.refs.Load())
		want = append(want, v.levels[1][0].Num)
	}
	require.Equal(t, want, retired.list(), "every table retired, once")
}

// checkHeld checks that what a held state reaches is not released.
func checkHeld(rs *readState, retired *retiredTables) error {
	if rs.refs.Load() < 1 || rs.v.refs.Load() < 1 {
		return fmt.Errorf("a held state of memstore %d, or its version, is released", rs.mem.logNum)
	}
	for _, mt := range append([]*memTable{rs.mem}, rs.imm...) {
		if mt.refs.Load() < 1 {
			return fmt.Errorf("a held state of memstore %d reaches released memstore %d", rs.mem.logNum, mt.logNum)
		}
		if v, res := mt.m.Get([]byte("state")); res != memstore.Found || string(v) != fmt.Sprint(mt.logNum) {
			return fmt.Errorf("memstore %d reads %q", mt.logNum, v)
		}
	}
	if num := rs.v.levels[1][0].Num; retired.has(num) {
		return fmt.Errorf("a held state's table %d is retired", num)
	}
	return nil
}
