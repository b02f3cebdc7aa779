package simpledb

import (
	"iter"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/logformat"
)

// oracle decides whether a transaction may commit: it records what every
// write after the oldest open transaction's snapshot wrote, and refuses a
// transaction a later write touched what it read (ErrConflict).
//
// Writes are recorded at append, in sequence order, and only while
// transactions are open: with none, a write pays one atomic load. A
// transaction is checked by its group's leader before the group appends.
// The oracle calls nothing: the commit pipeline calls record and certify,
// a transaction begin, started and end. Its lock is innermost.
type oracle struct {
	cmp      func(a, b []byte) int // the database's key order
	open     atomic.Int32          // transactions open: writes are recorded while > 0
	recorded atomic.Uint64         // the last sequence number of the last write recorded

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

// begin registers a transaction, lastSeq being the last sequence number
// assigned and visible the last one published. It returns from, the
// sequence number above which every write is recorded, and held, a
// snapshot that holds the writes above it against end's forgetting them
// until started replaces it with the transaction's own. The caller holds
// the commit pipeline's log lock (see commitPipeline.lastAssigned): an
// append after it sees the transaction open and records.
func (o *oracle) begin(lastSeq, visible uint64) (from, held uint64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.open.Add(1) == 1 {
		o.from, o.dropped = lastSeq, 0
	}
	o.hold(visible)
	return o.from, visible
}

// join registers a transaction while others are open, as begin does,
// without the last sequence number assigned: writes are being recorded
// already, from o.from, and go on being so while it is open. It reports
// false, registering nothing, if no transaction is open; begin must then
// start the recording, under the commit pipeline's log lock.
func (o *oracle) join(visible func() uint64) (from, held uint64, ok bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.open.Load() == 0 {
		return 0, 0, false
	}
	o.open.Add(1)
	held = visible()
	o.hold(held)
	return o.from, held, true
}

// started replaces held, begin's, with snap, the transaction's snapshot:
// one taken once every write up to from was published or had failed, so
// that it misses none of the writes that are not recorded.
func (o *oracle) started(snap, held uint64) {
	if snap == held {
		return // the same hold
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.hold(snap)
	o.release(held)
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

// end unregisters a transaction of snapshot seq, and forgets the writes
// no open transaction needs.
func (o *oracle) end(seq uint64) {
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

// record notes what a batch numbered up to seq wrote, while transactions
// are open. The commit pipeline calls it as it appends, in sequence order.
func (o *oracle) record(b *Batch, seq uint64) {
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
	o.recorded.Store(seq)
	o.keyBytes += size
	for o.keyBytes > maxOracleBytes && len(o.writes) > 1 {
		o.dropped = o.writes[0].seq
		o.forget(o.dropped)
	}
}

// writeSet returns the keys a batch writes and its range deletions'
// bounds, copies if keep, else views of the batch.
func (b *Batch) writeSet(keep bool) (keys [][]byte, ranges []keyRange) {
	var copies []byte // the copies, in one allocation
	if keep {
		n := 0
		logformat.Ops(b.data, b.count, func(kind base.Kind, key, value []byte) {
			if n += len(key); kind == base.KindRangeDelete {
				n += len(value)
			}
		})
		copies = make([]byte, 0, n)
		keys = make([][]byte, 0, b.count)
	}
	clone := func(k []byte) []byte {
		if keep {
			at := len(copies)
			copies = append(copies, k...)
			return copies[at:len(copies):len(copies)]
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

// precertify checks t, sealed, against the writes recorded so far, before
// its commit joins the pipeline, and raises t.certified to the last one
// checked: certify then checks only the writes recorded after. It takes
// the oracle's lock for a bounded chunk of writes at a time, so that an
// append, which records under it, never waits long for a transaction that
// read much, or came after many writes.
func (o *oracle) precertify(t *readSet) error {
	if r := o.recorded.Load(); r <= t.certified || r-t.certified <= precertifyChunk {
		// Each write has a sequence number of its own: at most a chunk
		// is left to check, which certify may as well.
		return nil
	}
	for {
		o.mu.Lock()
		done, err := o.check(t, precertifyChunk)
		o.mu.Unlock()
		if done || err != nil {
			return err
		}
	}
}

// precertifyChunk is how many keys and ranges written precertify checks
// under one hold of the oracle's lock: some 100 µs against a read set of
// thousands of keys.
const precertifyChunk = 1024

// certify returns ErrConflict if a write numbered above t's snapshot
// touched what t read, and ErrTxnTooOld if the oracle no longer knows every
// such write. t is sealed; precertify checked the writes up to
// t.certified. ahead are the batches ahead of t in its group, not yet
// recorded. The commit pipeline's leader calls it before the group
// appends: groups append one after another, so every write numbered
// before the transaction's is recorded by then, and none can come between
// the check and the transaction's own append.
func (o *oracle) certify(t *readSet, ahead iter.Seq[*Batch]) error {
	o.mu.Lock()
	_, err := o.check(t, 0)
	o.mu.Unlock()
	if err != nil {
		return err
	}
	for b := range ahead {
		if keys, ranges := b.writeSet(false); t.touchedBy(o.cmp, keys, ranges) {
			return ErrConflict
		}
	}
	return nil
}

// check checks t against the writes recorded above t.certified, and
// raises it: all of them, or if limit > 0 at least limit keys and ranges'
// worth, done reporting whether it reached the last. The caller holds o.mu.
func (o *oracle) check(t *readSet, limit int) (done bool, err error) {
	if t.certified < o.dropped {
		return false, errs.Errorf("%w: writes above %d are not all checked, and those up to %d were dropped", ErrTxnTooOld, t.certified, o.dropped)
	}
	i := sort.Search(len(o.writes), func(i int) bool { return o.writes[i].seq > t.certified })
	for n := 0; i < len(o.writes); i++ {
		if limit > 0 && n >= limit {
			return false, nil
		}
		w := &o.writes[i]
		if t.touchedBy(o.cmp, w.keys, w.ranges) {
			return false, ErrConflict
		}
		t.certified = w.seq
		n += len(w.keys) + len(w.ranges)
	}
	return true, nil
}
