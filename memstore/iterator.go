package memstore

import (
	"bytes"
	"iter"
	"unsafe"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/rangedel"
)

// IterOptions configures an iterator. The zero value iterates over every key
// as of the iterator's creation.
type IterOptions struct {
	// LowerBound, if not nil, is the smallest key the iterator visits
	// (inclusive). The default, nil, is unbounded.
	LowerBound []byte
	// UpperBound, if not nil, is the key at which the iterator stops
	// (exclusive). The default, nil, is unbounded.
	UpperBound []byte
	// Seq is the sequence number the iterator reads at: it sees the
	// entries with sequence numbers up to Seq and none of the writes
	// after. The default, 0, is LastSeq() when the iterator is created. A
	// Seq above LastSeq() also sees the writes up to Seq that land while
	// the iterator runs, each from the moment it lands.
	Seq uint64
}

// Iterator walks a memstore's entries in key order, forward or backward, as
// of one sequence number, the iterator's snapshot: writes that land while it
// runs have later sequence numbers and stay invisible to it. Next and Prev
// may alternate at any point; once a move runs off one end, a move the
// other way comes back to the entry at that end. It is not safe for
// concurrent use, but any number of iterators may run concurrently with
// each other and with writers, without locking. Key and Value alias the
// memstore's memory (see Key): they must not be modified, and stay valid
// after the iterator moves or closes.
type Iterator struct {
	list *list
	// table is the arena's table as the iterator last loaded it.
	table []unsafe.Pointer
	// n is the current entry, nil when the iterator is not valid.
	n   *node
	seq uint64
	// versions: every version of every key (NewEntryIterator), or only the
	// newest version of each key, without tombstones (NewIterator).
	versions bool
	// closed: Close ran, and every move returns false.
	closed bool
	// edge is where the last move ran off the entries, when n is nil.
	edge base.Edge
	// lower and upper are the bounds, nil when unbounded.
	lower, upper []byte
	// touched holds what Next reads ahead, so that the read stays.
	touched uint32
	// run is what backward moves step through.
	run backRun
	// rangeDels are the memstore's range deletions when the live view was
	// created (nil for the raw view): they hide the versions they cover.
	rangeDels rangedel.List
	// rec is, in the raw view at a stack's entry (see Memstore.Apply),
	// the record of the version the iterator is at; 0 elsewhere.
	rec addr
}

const (
	// runLevel is the level whose gaps a backward walk collects: it seeks
	// the last node at that level before where it is, then walks forward
	// at level 0, so it searches once per 2^runLevel (16) entries on
	// average rather than once per entry.
	runLevel = 4
	// runCap is the number of nodes a run holds. Of a longer gap, which
	// one in 60 is, the run keeps the nodes nearest its end, and the walk
	// searches again once it has stepped through them.
	runCap = 64
)

// backRun is the run of nodes a backward walk steps through, the skiplist
// having no backward links: nodes[:n] are consecutive nodes at level 0, as
// they were when collected, the first perhaps the head, and the last
// linked to anchor, the node the walk is at (nil: past the last node).
// Writes may have landed between them since; each step checks the link it
// crosses, so a backward walk sees the list as a forward one does.
type backRun struct {
	anchor *node
	nodes  [runCap]addr
	n      int
}

// push appends x to the run; a full run first drops its older half.
func (r *backRun) push(x addr) {
	if r.n == runCap {
		r.n = copy(r.nodes[:], r.nodes[runCap/2:])
	}
	r.nodes[r.n] = x
	r.n++
}

// NewIterator returns an iterator over the live view: for each key within
// the bounds, its newest version visible at the iterator's sequence number,
// skipping keys whose newest visible version is a tombstone. Call First,
// Last, SeekGE or SeekLT to position it. The iterator keeps o's bound
// slices: do not modify them while it is in use. A nil o selects the
// defaults.
func (m *Memstore) NewIterator(o *IterOptions) *Iterator {
	return m.newIterator(o, false)
}

// NewEntryIterator returns an iterator over the raw view: every version of
// every key within the bounds, tombstones included, with a sequence number
// up to the iterator's, ordered by key ascending, then sequence number
// descending. It is what a flush writes out and what a merging iterator
// merges. Options are as for NewIterator.
func (m *Memstore) NewEntryIterator(o *IterOptions) *Iterator {
	return m.newIterator(o, true)
}

func (m *Memstore) newIterator(o *IterOptions, versions bool) *Iterator {
	var opts IterOptions
	if o != nil {
		opts = *o
	}
	it := &Iterator{list: &m.list, seq: opts.Seq, versions: versions, lower: opts.LowerBound, upper: opts.UpperBound}
	if it.seq == 0 {
		it.seq = m.LastSeq()
	}
	if !versions {
		it.rangeDels = m.RangeDeletions()
	}
	return it
}

// version returns n's version visible at the iterator's sequence number
// (see Memstore.ApplyMerge).
func (it *Iterator) version(n *node) version {
	var v version
	it.table, v, _ = it.list.arena.version(it.table, n, it.seq)
	return v
}

// current returns the version the iterator is at.
func (it *Iterator) current() version {
	if it.rec == 0 {
		return it.version(it.n)
	}
	var r *foldRecord
	it.table, r = it.list.arena.record(it.table, it.rec)
	return r.version()
}

// newest returns the record of n's newest version visible at the
// iterator's sequence number if the raw view shows n's versions one by
// one (n holds a stack), 0 if it shows one version of n.
func (it *Iterator) newest(n *node) addr {
	if !it.versions {
		return 0
	}
	var depth int
	if it.table, depth = it.list.arena.stackDepth(it.table, n); depth == 0 {
		return 0
	}
	var rec addr
	it.table, _, rec = it.list.arena.version(it.table, n, it.seq)
	return rec
}

// olderInStack moves to the next older version of the stack the iterator
// is at, and reports whether there is one.
func (it *Iterator) olderInStack() bool {
	if it.rec == 0 {
		return false
	}
	var r *foldRecord
	it.table, r = it.list.arena.record(it.table, it.rec)
	if r.prev == 0 {
		return false
	}
	it.rec = r.prev
	return true
}

// newerInStack moves to the next newer version, visible at the iterator's
// sequence number, of the stack the iterator is at, and reports whether
// there is one: the record whose prev is the current one, which a walk
// from the newest visible finds within maxStack steps.
func (it *Iterator) newerInStack() bool {
	if it.rec == 0 {
		return false
	}
	x := it.newest(it.n)
	for x != it.rec {
		var r *foldRecord
		it.table, r = it.list.arena.record(it.table, x)
		if r.prev == it.rec {
			it.rec = x
			return true
		}
		x = r.prev
	}
	return false
}

// deleted reports whether n's visible version is a tombstone, or a range
// tombstone visible to the live view hides it.
func (it *Iterator) deleted(n *node) bool {
	v := it.version(n)
	return v.kind() == KindDelete ||
		len(it.rangeDels) > 0 && it.rangeDels.SeqAt(it.list.keyCompare(), n.key(), it.seq) > v.seq()
}

// First moves to the first entry and reports whether there is one.
func (it *Iterator) First() bool {
	if it.closed {
		return false
	}
	it.table = it.list.arena.load()
	if it.lower != nil {
		it.n, _ = it.list.find(it.lower, seekTrailer(it.seq), nil)
	} else {
		it.n = it.list.head
		it.table, it.n = it.list.next(it.table, it.n)
	}
	return it.settle()
}

// Last moves to the last entry and reports whether there is one.
func (it *Iterator) Last() bool {
	if it.closed {
		return false
	}
	if it.upper != nil {
		return it.SeekLT(it.upper)
	}
	it.table = it.list.arena.load()
	it.collectRun(nil)
	return it.settleBack(nil, nil)
}

// SeekGE moves to the first entry whose key is greater than or equal to key
// (the newest visible version of key, if any) and reports whether there is
// one. A key below the lower bound seeks to the lower bound.
func (it *Iterator) SeekGE(key []byte) bool {
	if it.closed {
		return false
	}
	if it.lower != nil && it.list.less(key, it.lower) {
		key = it.lower
	}
	it.table = it.list.arena.load()
	it.n, _ = it.list.find(key, seekTrailer(it.seq), nil)
	return it.settle()
}

// SeekLT moves to the last entry whose key is less than key and reports
// whether there is one: in the live view, the newest visible version of the
// last live key before key; in the raw view, the oldest version of that
// key. A key above the upper bound seeks to the upper bound.
func (it *Iterator) SeekLT(key []byte) bool {
	if it.closed {
		return false
	}
	if it.upper != nil && it.list.less(it.upper, key) {
		key = it.upper
	}
	it.table = it.list.arena.load()
	return it.settleBack(it.seekRun(key, seekTrailer(MaxSeq)), nil)
}

// Next moves to the next entry and reports whether there is one. After a
// backward move that found no entry it moves to the first entry; on an
// iterator that is otherwise not valid it returns false.
func (it *Iterator) Next() bool {
	if it.n == nil {
		if it.edge == base.EdgeStart {
			return it.First()
		}
		return false
	}
	if it.versions {
		if it.olderInStack() {
			return true
		}
		it.table, it.n = it.list.next(it.table, it.n)
	} else {
		it.skipVersions(it.n.key())
	}
	if !it.settle() {
		return false
	}
	// A scan is a chain of cache misses, each node's address in the node
	// before. Reading the next node now, while the caller works on this
	// one (and waits for its value), starts the next miss early.
	if x := addr(it.n.link(0).Load()); x != 0 {
		var n *node
		it.table, n = it.list.arena.node(it.table, x)
		it.touched ^= n.keyLen
	}
	return true
}

// Prev moves to the previous entry and reports whether there is one. After
// a forward move that found no entry it moves to the last entry; on an
// iterator that is otherwise not valid it returns false. It costs about
// what Next does (see backRun).
func (it *Iterator) Prev() bool {
	if it.n == nil {
		if it.edge == base.EdgeEnd {
			return it.Last()
		}
		return false
	}
	var skip []byte
	if !it.versions {
		// Newer versions of the key, invisible here, come before it.
		skip = it.n.key()
	} else if it.newerInStack() {
		return true
	}
	return it.settleBack(it.n, skip)
}

// settle moves forward, from the current node, to the first entry the view
// shows, and invalidates the iterator past the upper bound.
func (it *Iterator) settle() bool {
	for it.n != nil {
		n := it.n
		switch {
		case it.upper != nil && !it.list.less(n.key(), it.upper):
			it.n = nil
		case n.seq() > it.seq:
			// Written after the snapshot (its oldest version: see
			// Memstore.ApplyMerge).
			it.table, it.n = it.list.next(it.table, n)
		case !it.versions && it.deleted(n):
			// The newest visible version deletes the key, or a range
			// tombstone does.
			it.skipVersions(n.key())
		default:
			it.rec = it.newest(n)
			return true
		}
	}
	it.edge, it.rec = base.EdgeEnd, 0
	return false
}

// skipVersions moves past the versions of key.
func (it *Iterator) skipVersions(key []byte) {
	for {
		it.table, it.n = it.list.next(it.table, it.n)
		if it.n == nil || !bytes.Equal(it.n.key(), key) {
			return
		}
	}
}

// settleBack moves backward from c (nil: past the last node), where the run
// ends, to the last entry before it that the view shows, past the versions
// of skip, and invalidates the iterator below the lower bound.
//
// Backward, the live view meets the versions of a key oldest first: it
// must reach the newest visible one, the last before the key changes or a
// version is too new for the snapshot, before it knows whether the key is
// deleted.
func (it *Iterator) settleBack(c *node, skip []byte) bool {
	for {
		p := it.before(c)
		if p == nil || it.lower != nil && it.list.less(p.key(), it.lower) {
			it.n, it.edge, it.rec = nil, base.EdgeStart, 0
			return false
		}
		it.stepBack(p)
		c = p
		switch {
		case skip != nil && bytes.Equal(p.key(), skip):
		case p.seq() > it.seq:
			// Written after the snapshot.
		case it.versions:
			// A stack's oldest version, the last the raw view shows
			// of it.
			it.n, it.rec = p, it.newest(p)
			for it.olderInStack() { // at most maxStack steps
			}
			return true
		default:
			// p is the oldest visible version of its key.
			for {
				q := it.before(c)
				if q == nil || q.seq() > it.seq || !bytes.Equal(q.key(), p.key()) {
					break
				}
				it.stepBack(q)
				c = q
			}
			if it.deleted(c) {
				skip = c.key()
				continue
			}
			it.n, it.rec = c, 0
			return true
		}
	}
}

// before returns the node before c (nil: past the last node) at level 0,
// nil when c is the first node. It reads it from the run, collected anew
// when the run does not end at c, and extended when a write has landed
// between the run's last node and c.
func (it *Iterator) before(c *node) *node {
	r := &it.run
	if r.n == 0 || r.anchor != c {
		it.collectRun(c)
	}
	for {
		x := r.nodes[r.n-1]
		var p *node
		it.table, p = it.list.arena.node(it.table, x)
		if it.linksTo(p, c) {
			if x == it.list.headX {
				return nil
			}
			return p
		}
		it.extendRun(c)
	}
}

// stepBack moves the run's end to p, the node before its anchor.
func (it *Iterator) stepBack(p *node) {
	it.run.n--
	it.run.anchor = p
}

// linksTo reports whether p's next node at level 0 is c (nil: p is the
// last node).
func (it *Iterator) linksTo(p, c *node) bool {
	x := addr(p.link(0).Load())
	if x == 0 || c == nil {
		return x == 0 && c == nil
	}
	var n *node
	it.table, n = it.list.arena.node(it.table, x)
	return n == c
}

// collectRun collects the run of nodes before c (nil: past the last node).
func (it *Iterator) collectRun(c *node) {
	if c != nil {
		it.seekRun(c.key(), c.tail().trailer)
		return
	}
	it.run.n = 0
	it.run.push(it.list.lastAt(runLevel))
	it.extendRun(nil)
}

// seekRun collects the run of nodes before the first node at or after
// (key, trailer), and returns that node (nil: there is none): from the
// last node before it at runLevel, which a search from the top finds, at
// level 0 up to it.
func (it *Iterator) seekRun(key []byte, trailer uint64) *node {
	var preds [maxHeight]addr
	c, _ := it.list.find(key, trailer, &preds)
	it.run.n = 0
	it.run.push(preds[runLevel])
	it.extendRun(c)
	return c
}

// extendRun walks at level 0 from the run's last node to c (nil: the end),
// adding every node it passes to the run, and anchors the run at c. c must
// follow the run's last node.
func (it *Iterator) extendRun(c *node) {
	r := &it.run
	var p *node
	it.table, p = it.list.arena.node(it.table, r.nodes[r.n-1])
	for {
		x := addr(p.link(0).Load())
		if x == 0 {
			break
		}
		var n *node
		it.table, n = it.list.arena.node(it.table, x)
		if n == c {
			break
		}
		r.push(x)
		p = n
	}
	r.anchor = c
}

// Valid reports whether the iterator is positioned at an entry.
func (it *Iterator) Valid() bool {
	return it.n != nil
}

// Key returns the current entry's key, or nil when the iterator is not
// valid (unpositioned, exhausted or closed). The key is the stored entry's,
// not a copy: it must not be modified, which would change the entry for
// every reader and the table the next flush writes, and break the order
// that searches and iterators rely on. The memstore never overwrites or
// frees it, so it stays valid after the iterator moves or closes.
func (it *Iterator) Key() []byte {
	if it.n == nil {
		return nil
	}
	return it.n.key()
}

// Value returns the current entry's value: nil for a tombstone, a non-nil
// slice otherwise, empty for an empty value. It returns nil when the
// iterator is not valid. Like Key, it is the stored entry's: not to be
// modified (the next flush would write the change), and valid after the
// iterator moves or closes.
func (it *Iterator) Value() []byte {
	if it.n == nil {
		return nil
	}
	var v []byte
	it.table, v = it.list.arena.bytesOf(it.table, it.n, it.current())
	return v
}

// Seq returns the current entry's sequence number, or 0 when the iterator
// is not valid.
func (it *Iterator) Seq() uint64 {
	if it.n == nil {
		return 0
	}
	return it.current().seq()
}

// Kind returns the current entry's kind. When the iterator is not valid it
// returns 0, which reads as KindDelete: check Valid, or the last move's
// result, first.
func (it *Iterator) Kind() Kind {
	if it.n == nil {
		return 0
	}
	return it.current().kind()
}

// Err returns nil: an iterator over memory meets no errors. It exists so
// that an Iterator satisfies the same interface as iterators over tables.
func (it *Iterator) Err() error {
	return nil
}

// Close releases the iterator. Afterwards it is not valid, its moves
// return false and its accessors zero values. It always returns nil.
func (it *Iterator) Close() error {
	// Drop every reference into the memstore.
	*it = Iterator{closed: true}
	return nil
}

// All returns the live view as of the start of the loop, for use in a range
// loop: each key with its newest value, in key order, without deleted keys.
// The slices are the stored entries' (see Iterator.Key): they must not be
// modified, and stay valid after the loop.
func (m *Memstore) All() iter.Seq2[[]byte, []byte] {
	return m.walk(false)
}

// Backward returns what All does, from the last key down.
func (m *Memstore) Backward() iter.Seq2[[]byte, []byte] {
	return m.walk(true)
}

// walk returns the live view as of the start of the loop, forward or
// backward. The loop calls the iterator's methods directly: through
// function values they cost a scan 8 to 10%.
func (m *Memstore) walk(backward bool) iter.Seq2[[]byte, []byte] {
	return func(yield func(key, value []byte) bool) {
		it := m.NewIterator(nil)
		defer it.Close()
		var ok bool
		if backward {
			ok = it.Last()
		} else {
			ok = it.First()
		}
		for ok {
			if !yield(it.Key(), it.Value()) {
				return
			}
			if backward {
				ok = it.Prev()
			} else {
				ok = it.Next()
			}
		}
	}
}
