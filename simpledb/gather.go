package simpledb

import (
	"sync"
	"sync/atomic"
	"time"
)

// Synced writers that write again as soon as they are acknowledged split,
// with fsyncs run back to back, into two cohorts that take turns: the one
// an fsync releases comes back while the next fsync, claimed at once by
// the other, already runs, and waits for the one after. Each fsync then
// serves half the writers. syncGather holds the next fsync back until the
// writers the last one released have appended again, so that one fsync
// serves them all, but never longer than the last fsync took: gathering
// pays while writers come back faster than an fsync runs.
//
// A lone writer never waits: it is the writer its own fsync released.
// Writers that do not come back at once (they work between writes, or
// stopped) cost the others one such wait, after which the next
// gatherBackoff fsyncs start without waiting.
type syncGather struct {
	// returning counts synced writers the last fsync released that have
	// not appended since; never below zero. Claiming an fsync resets it.
	returning atomic.Int64
	// until is when the wait for them ends, in UnixNano.
	until atomic.Int64
	// lastSync is how long the last fsync took, in nanoseconds.
	lastSync atomic.Int64
	// A wait lasts lastSync, within [minWait, maxWait]: minGatherWait
	// and maxGatherWait, or a test's own.
	minWait, maxWait time.Duration
	// skip counts the fsyncs still to start without waiting, after a wait
	// that ended before every writer came back. Under the pipeline's sync lock.
	skip int
	// timer wakes the waiters of syncCond at until.
	timer *time.Timer
}

const (
	// minGatherWait and maxGatherWait bound how long an fsync waits for
	// returning writers. On two cores, 64 writers take some 100-250 µs to
	// be woken and append again: measured against a fixed 100 µs, waiting
	// as long as an fsync (350-500 µs under that load) took 32 writers
	// from 24 to 30 writes per fsync and 64 from 34 to 55.
	minGatherWait = 50 * time.Microsecond
	maxGatherWait = 2 * time.Millisecond
	// gatherBackoff is how many fsyncs start at once after a wait in vain.
	gatherBackoff = 8
)

func (g *syncGather) init(cond *sync.Cond) {
	g.minWait, g.maxWait = minGatherWait, maxGatherWait
	g.timer = time.AfterFunc(time.Hour, func() {
		cond.L.Lock()
		cond.Broadcast()
		cond.L.Unlock()
	})
	g.timer.Stop()
}

// released records, before they are woken, the synced writers of a group
// an fsync made durable.
func (g *syncGather) released(waiters []*commitWaiter) {
	var n int64
	for _, w := range waiters {
		if w.batch != nil && w.sync {
			n++
		}
	}
	if n > 0 {
		g.returning.Add(n)
		wait := min(max(time.Duration(g.lastSync.Load()), g.minWait), g.maxWait)
		g.until.Store(time.Now().Add(wait).UnixNano())
	}
}

// synced records how long an fsync took.
func (g *syncGather) synced(d time.Duration) { g.lastSync.Store(int64(d)) }

// appended records that n synced writers appended.
func (g *syncGather) appended(n int64) {
	for {
		r := g.returning.Load()
		if r <= 0 || g.returning.CompareAndSwap(r, max(r-n, 0)) {
			return
		}
	}
}

// wait reports whether an fsync should wait for returning writers, and
// arms the timer that ends the wait. The caller holds the pipeline's sync lock.
func (g *syncGather) wait() bool {
	if g.skip > 0 || g.returning.Load() <= 0 {
		return false
	}
	left := time.Duration(g.until.Load() - time.Now().UnixNano())
	if left <= 0 {
		return false
	}
	g.timer.Reset(left)
	return true
}

// claimed records that an fsync started: it covers whoever came back. If
// some did not, the next fsyncs do not wait. The caller holds the pipeline's sync lock.
func (g *syncGather) claimed() {
	missed := g.returning.Swap(0) > 0
	switch {
	case g.skip > 0:
		g.skip--
	case missed:
		g.skip = gatherBackoff
	}
}

// stop stops the timer, at Close.
func (g *syncGather) stop() { g.timer.Stop() }
