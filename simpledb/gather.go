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
// serves them all, but never longer than maxWait.
//
// A lone writer never waits: it is the writer its own fsync released.
// Writers that do not come back at once (they work between writes, or
// stopped) cost the others one wait of maxWait, after which the next
// gatherBackoff fsyncs start without waiting.
type syncGather struct {
	// returning counts synced writers the last fsync released that have
	// not appended since; never below zero. Claiming an fsync resets it.
	returning atomic.Int64
	// until is when the wait for them ends, in UnixNano.
	until atomic.Int64
	// maxWait bounds a wait: maxGatherWait, or a test's own.
	maxWait time.Duration
	// skip counts the fsyncs still to start without waiting, after a wait
	// that ended before every writer came back. Under syncMu.
	skip int
	// timer wakes the waiters of syncCond at until.
	timer *time.Timer
}

const (
	// maxGatherWait bounds how long an fsync waits for returning writers:
	// about the time 64 goroutines take to be woken and append on two
	// cores, and under the cost of an fsync here (120-200 µs).
	maxGatherWait = 100 * time.Microsecond
	// gatherBackoff is how many fsyncs start at once after a wait in vain.
	gatherBackoff = 8
)

func (g *syncGather) init(cond *sync.Cond) {
	g.maxWait = maxGatherWait
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
		g.until.Store(time.Now().Add(g.maxWait).UnixNano())
	}
}

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
// arms the timer that ends the wait. The caller holds syncMu.
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
// some did not, the next fsyncs do not wait. The caller holds syncMu.
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
