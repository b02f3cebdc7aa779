package memstore

import (
	"bytes"
	"iter"
	"unsafe"

	"github.com/stratadb/strata/internal/base"
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

// Iterator walks a memstore's entries in key order as of one sequence
// number, the iterator's snapshot: writes that land while it runs have later
// sequence numbers and stay invisible to it. It is not safe for concurrent
// use, but any number of iterators may run concurrently with each other and
// with writers, without locking. Key and Value alias the memstore's memory
// (see Key): they must not be modified, and stay valid after the iterator
// moves or closes.
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
	// closed: Close ran, and First and SeekGE return false.
	closed bool
	// lower and upper are the bounds, nil when unbounded.
	lower, upper []byte
	// touched holds what Next reads ahead, so that the read stays.
	touched uint32
}

// NewIterator returns an iterator over the live view: for each key within
// the bounds, its newest version visible at the iterator's sequence number,
// skipping keys whose newest visible version is a tombstone. Call First or
// SeekGE to position it. The iterator keeps o's bound slices: do not modify
// them while it is in use. A nil o selects the defaults.
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
	return it
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

// SeekGE moves to the first entry whose key is greater than or equal to key
// (the newest visible version of key, if any) and reports whether there is
// one. A key below the lower bound seeks to the lower bound.
func (it *Iterator) SeekGE(key []byte) bool {
	if it.closed {
		return false
	}
	if it.lower != nil && bytes.Compare(key, it.lower) < 0 {
		key = it.lower
	}
	it.table = it.list.arena.load()
	it.n, _ = it.list.find(key, seekTrailer(it.seq), nil)
	return it.settle()
}

// Next moves to the next entry and reports whether there is one. On an
// iterator that is not valid it returns false.
func (it *Iterator) Next() bool {
	if it.n == nil {
		return false
	}
	if it.versions {
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

// settle moves forward, from the current node, to the first entry the view
// shows, and invalidates the iterator past the upper bound.
func (it *Iterator) settle() bool {
	for it.n != nil {
		n := it.n
		trailer := n.tail().trailer
		switch {
		case it.upper != nil && bytes.Compare(n.key(), it.upper) >= 0:
			it.n = nil
		case base.TrailerSeq(trailer) > it.seq:
			// Written after the snapshot.
			it.table, it.n = it.list.next(it.table, n)
		case !it.versions && base.TrailerKind(trailer) == KindDelete:
			// The newest visible version deletes the key.
			it.skipVersions(n.key())
		default:
			return true
		}
	}
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
	it.table, v = it.list.arena.value(it.table, it.n)
	return v
}

// Seq returns the current entry's sequence number, or 0 when the iterator
// is not valid.
func (it *Iterator) Seq() uint64 {
	if it.n == nil {
		return 0
	}
	return it.n.seq()
}

// Kind returns the current entry's kind. When the iterator is not valid it
// returns 0, which reads as KindDelete: check Valid, or the last move's
// result, first.
func (it *Iterator) Kind() Kind {
	if it.n == nil {
		return 0
	}
	return it.n.kind()
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
	return func(yield func(key, value []byte) bool) {
		it := m.NewIterator(nil)
		defer it.Close()
		for ok := it.First(); ok; ok = it.Next() {
			if !yield(it.Key(), it.Value()) {
				return
			}
		}
	}
}
