package simpledb

import (
	"bytes"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/logformat"
)

// oracle decides whether a transaction may commit: it records what every
// write after the oldest open transaction's snapshot wrote, and refuses a
// transaction a later write touched what it read (ErrConflict).
//
// Writes are recorded at append, under walMu, in sequence order, and only
// while transactions are open: with none, a write pays one atomic load. A
// transaction is checked by its group's leader before the group appends:
// groups append one after another, so every write numbered before the
// transaction's is recorded by then, and none can come between the check
// and the transaction's own append.
type oracle struct {
	open atomic.Int32 // transactions open: writes are recorded while > 0

	mu sync.Mutex
	// from: every write numbered above it is recorded, from when
	// recording started; dropped: the highest sequence number of the
	// writes dropped to stay within maxOracleBytes since.
	from, dropped uint64
	writes        []recordedWrite // ascending sequence numbers
	keyBytes      int             // the keys writes holds, for maxOracleBytes
	snaps         map[uint64]int  // open transactions' snapshots: sequence number -> count
}

// maxOracleBytes bounds the keys the oracle keeps: beyond it, it drops the
// oldest writes, and transactions whose snapshots predate what it keeps
// fail with ErrTxnTooOld. A variable for tests.
var maxOracleBytes = 64 << 20

// recordedWrite is what one batch wrote: its last sequence number, its keys
// and its range deletions' bounds.
type recordedWrite struct {
	seq    uint64
	keys   [][]byte
	ranges []keyRange
}

// keyRange is [lo, hi); nil is open, as everywhere.
type keyRange struct{ lo, hi []byte }

func (r keyRange) contains(cmp func(a, b []byte) int, k []byte) bool {
	return (r.lo == nil || cmp(k, r.lo) >= 0) && (r.hi == nil || cmp(k, r.hi) < 0)
}

func (r keyRange) overlaps(cmp func(a, b []byte) int, o keyRange) bool {
	return (r.hi == nil || o.lo == nil || cmp(o.lo, r.hi) < 0) && (o.hi == nil || r.lo == nil || cmp(r.lo, o.hi) < 0)
}

// beginTxn registers a transaction and returns its snapshot: one above
// which every write is recorded.
func (d *DB) beginTxn() (*Snapshot, error) {
	o := &d.oracle
	// walMu first, as appends take it before o.mu: an append after this
	// sees the count and records. Until its snapshot is taken, the
	// transaction holds the writes above the visible sequence number, which
	// its snapshot will not see, against endTxn's forget.
	d.walMu.Lock()
	o.mu.Lock()
	if o.open.Add(1) == 1 {
		o.from, o.dropped = d.lastSeq, 0
	}
	from, held := o.from, d.visibleSeq.Load()
	o.hold(held)
	o.mu.Unlock()
	d.walMu.Unlock()
	// The snapshot must not miss what is not recorded: wait for the writes
	// appended before recording started to be published (or fail).
	if err := d.waitResolved(from); err != nil {
		d.endTxn(held)
		return nil, err
	}
	snap := d.NewSnapshot() // registered, so that compaction keeps what it sees
	o.mu.Lock()
	defer o.mu.Unlock()
	o.hold(snap.seq)
	o.release(held)
	return snap, nil
}

// waitResolved waits until every write numbered up to seq is published or
// has failed (a failed write is never published, so the visible sequence
// number need not reach it), or the database closes or fails: then it
// returns why. Appended writes are resolved within an fsync.
func (d *DB) waitResolved(seq uint64) error {
	for {
		d.pubMu.Lock()
		waiting := false
		for _, g := range d.pending {
			if g.lastSeq != 0 && g.lastSeq <= seq {
				waiting = true
				break
			}
		}
		d.pubMu.Unlock()
		if !waiting {
			return nil
		}
		err := d.checkOpen()
		if err == nil {
			err = d.backgroundError()
		}
		if err != nil {
			return err
		}
		time.Sleep(20 * time.Microsecond)
	}
}

// waitAppended waits until every write appended so far is resolved: a
// transaction that conflicted with one retries on a snapshot that holds
// it, rather than conflict with it again.
func (d *DB) waitAppended() error {
	d.walMu.Lock()
	last := d.lastSeq
	d.walMu.Unlock()
	return d.waitResolved(last)
}

// hold and release count a transaction that needs the writes above seq.
// The caller holds o.mu.
func (o *oracle) hold(seq uint64) {
	if o.snaps == nil {
		o.snaps = map[uint64]int{}
	}
	o.snaps[seq]++
}

func (o *oracle) release(seq uint64) {
	if o.snaps[seq]--; o.snaps[seq] <= 0 {
		delete(o.snaps, seq)
	}
}

// endTxn unregisters a transaction of snapshot seq, and forgets the writes
// no open transaction needs.
func (d *DB) endTxn(seq uint64) {
	o := &d.oracle
	o.mu.Lock()
	defer o.mu.Unlock()
	o.release(seq)
	if o.open.Add(-1) == 0 {
		clear(o.writes)
		o.writes, o.keyBytes = o.writes[:0], 0
		return
	}
	oldest := uint64(1<<64 - 1)
	for s := range o.snaps {
		oldest = min(oldest, s)
	}
	o.forget(oldest)
}

// forget drops the writes at or below seq. The caller holds o.mu.
func (o *oracle) forget(seq uint64) {
	n := 0
	for n < len(o.writes) && o.writes[n].seq <= seq {
		for _, k := range o.writes[n].keys {
			o.keyBytes -= len(k)
		}
		for _, r := range o.writes[n].ranges {
			o.keyBytes -= len(r.lo) + len(r.hi)
		}
		n++
	}
	clear(o.writes[:n])
	o.writes = append(o.writes[:0], o.writes[n:]...)
}

// recordWrite notes what a batch numbered up to seq wrote, while transactions
// are open. The caller holds d.walMu.
func (d *DB) recordWrite(b *Batch, seq uint64) {
	o := &d.oracle
	if o.open.Load() == 0 {
		return
	}
	keys, ranges := b.writeSet(true)
	w := recordedWrite{seq: seq, keys: keys, ranges: ranges}
	size := 0
	for _, k := range keys {
		size += len(k)
	}
	for _, r := range ranges {
		size += len(r.lo) + len(r.hi)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.writes = append(o.writes, w)
	o.keyBytes += size
	for o.keyBytes > maxOracleBytes && len(o.writes) > 1 {
		o.dropped = o.writes[0].seq
		o.forget(o.dropped)
	}
}

// writeSet returns the keys a batch writes and its range deletions'
// bounds, copies if keep, else views of the batch.
func (b *Batch) writeSet(keep bool) (keys [][]byte, ranges []keyRange) {
	clone := func(k []byte) []byte {
		if keep {
			return bytes.Clone(k)
		}
		return k
	}
	bound := func(k []byte) []byte { // the log holds an open bound as empty
		if len(k) == 0 {
			return nil
		}
		return clone(k)
	}
	logformat.Ops(b.data, b.count, func(kind base.Kind, key, value []byte) {
		if kind == base.KindRangeDelete {
			ranges = append(ranges, keyRange{lo: bound(key), hi: bound(value)})
		} else {
			keys = append(keys, clone(key))
		}
	})
	return keys, ranges
}

// certify refuses the transactions of a group that may not commit, which
// leave it with their error; the others go on. The leader calls it before
// the group appends.
func (d *DB) certify(g *commitGroup) {
	if d.oracle.open.Load() == 0 {
		return // no transaction is open, so none is in the group
	}
	kept := g.waiters[:0]
	for _, w := range g.waiters {
		if w.txn != nil {
			if err := d.checkTxn(w.txn, kept); err != nil {
				w.done <- commitResult{err: err}
				continue
			}
		}
		kept = append(kept, w)
	}
	clear(g.waiters[len(kept):])
	g.waiters = kept
}

// checkTxn returns ErrConflict if a write numbered above t's snapshot touched
// what t read, and ErrTxnTooOld if the oracle no longer knows every such
// write. pending are the writes ahead of t in its group, not yet recorded.
func (d *DB) checkTxn(t *Txn, pending []*commitWaiter) error {
	o := &d.oracle
	cmp := d.opts.Comparator.Compare
	o.mu.Lock()
	defer o.mu.Unlock()
	if t.snapSeq < o.dropped {
		return fmt.Errorf("%w: its snapshot is at %d; writes up to %d were dropped", ErrTxnTooOld, t.snapSeq, o.dropped)
	}
	for i := len(o.writes) - 1; i >= 0 && o.writes[i].seq > t.snapSeq; i-- {
		if t.touchedBy(cmp, o.writes[i].keys, o.writes[i].ranges) {
			return ErrConflict
		}
	}
	for _, w := range pending {
		if w.batch == nil {
			continue
		}
		if keys, ranges := w.batch.writeSet(false); t.touchedBy(cmp, keys, ranges) {
			return ErrConflict
		}
	}
	return nil
}
