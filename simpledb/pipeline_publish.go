package simpledb

import (
	"cmp"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/logformat"
)

// publishReady is stage 3: it applies and publishes, in order, every group
// at the head of the pending list that is ready, and hands each writer its
// result. A group is ready once it failed, or did not ask for durability,
// or the log is synced past it. After a log failure every group the log
// had not made durable fails, synced or not, and once a group that reached
// the log has failed no later one succeeds: a write is never visible or
// acknowledged without every write before it.
//
// If it publishes the group of self, the caller's own waiter (nil for
// none), it leaves self's result in self.result rather than sending it
// through self.done, and reports true: for a lone writer, which publishes
// its own writes, the channel's round trip cost a tenth of a Put.
func (p *commitPipeline) publishReady(self *commitWaiter) (published bool) {
	p.pub.mu.Lock()
	defer p.pub.mu.Unlock()
	synced := p.syncedTo.Load()
	var logErr error
	if p.logFailed.Load() {
		p.sync.mu.Lock()
		synced, logErr = p.syncedTo.Load(), p.sync.err
		p.sync.mu.Unlock()
	}
	n := 0
	for ; n < len(p.pub.pending); n++ {
		g := p.pub.pending[n]
		if g.err == nil && g.mem != nil && g.logEnd > synced {
			if logErr != nil {
				g.err = logErr
			} else if g.sync {
				break // awaits its fsync
			}
		}
		if g.err == nil && g.logged && p.pub.err != nil {
			g.err = p.pub.err
		}
		p.apply(g)
		if g.err == nil && g.sync {
			p.gather.released(g.waiters)
		}
		if g.err != nil && g.logged && p.pub.err == nil {
			p.pub.err = g.err
		}
		// The first waiter, the group's leader, last: once woken it
		// recycles the group.
		for i := len(g.waiters) - 1; i >= 0; i-- {
			w := g.waiters[i]
			err := g.err
			if w.batch == nil {
				// A flush request fails with its rotation or the database,
				// not with its group's batches; or with the group, if it
				// failed before the request was served (a stall refused).
				err = w.err
				if err == nil && g.err != nil {
					err = cmp.Or(p.env.failure(), g.err)
				}
			}
			if w == self {
				w.result, published = err, true
				continue
			}
			w.done <- commitResult{err: err}
		}
	}
	clear(p.pub.pending[:n])
	p.pub.pending = append(p.pub.pending[:0], p.pub.pending[n:]...)
	// For waitPublished and quiesce, whose wait may also end with an fsync
	// that published nothing. (With no waiter it costs an atomic load.)
	p.pub.cond.Broadcast()
	return published
}

// apply applies a group's batches to its memstore and publishes them,
// unless the group failed. A group that reached the log, and its fsync if
// it asked for one, is applied even if the database has failed since: a
// flush or compaction failure does not undo a durable write. The caller
// holds p.pub.mu.
func (p *commitPipeline) apply(g *commitGroup) {
	if g.mem == nil {
		return
	}
	defer g.mem.writes.Done()
	if g.err != nil {
		return
	}
	for _, w := range g.waiters {
		if w.batch == nil {
			continue
		}
		_, _, err := logformat.Decode(logformat.Current, w.batch.data, func(seq uint64, kind base.Kind, key, value []byte) error {
			if kind == base.KindMerge && p.env.merge != nil {
				folded, err := g.mem.m.ApplyMerge(seq, key, value, p.folder(seq))
				if folded {
					p.counters.mergesFolded.Add(1)
				}
				return err
			}
			return g.mem.m.Apply(seq, kind, key, value)
		})
		if err != nil {
			// Some of its entries may be in the memstore, unpublished:
			// nothing later may publish them.
			g.err = p.failLog(errs.Errorf("apply: %w", err))
			return
		}
	}
	p.visibleSeq.Store(g.lastSeq)
}
