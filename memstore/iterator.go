package memstore

import (
	"bytes"
	"iter"

	"github.com/stratadb/strata/skiplist"
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
	list *skiplist.Iterator[entry, struct{}]
	seq  uint64
	// versions: every version of every key (NewEntryIterator), or only the
	// newest version of each key, without tombstones (NewIterator).
	versions bool
	// closed: Close ran, and First and SeekGE return false.
	closed bool
	// lower and upper are the skiplist bounds, which list points at.
	lower, upper entry
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
	it := &Iterator{seq: opts.Seq, versions: versions}
	if it.seq == 0 {
		it.seq = m.LastSeq()
	}
	// A bound sorts before every version of its key.
	var lower, upper *entry
	if opts.LowerBound != nil {
		it.lower = searchEntry(opts.LowerBound, MaxSeq)
		lower = &it.lower
	}
	if opts.UpperBound != nil {
		it.upper = searchEntry(opts.UpperBound, MaxSeq)
		upper = &it.upper
	}
	it.list = m.list.NewIterator(lower, upper)
	return it
}

// First moves to the first entry and reports whether there is one.
func (it *Iterator) First() bool {
	if it.closed {
		return false
	}
	it.list.First()
	return it.settle()
}

// SeekGE moves to the first entry whose key is greater than or equal to key
// (the newest visible version of key, if any) and reports whether there is
// one. A key below the lower bound seeks to the lower bound.
func (it *Iterator) SeekGE(key []byte) bool {
	if it.closed {
		return false
	}
	it.list.SeekGE(searchEntry(key, it.seq))
	return it.settle()
}

// Next moves to the next entry and reports whether there is one. On an
// iterator that is not valid it returns false.
func (it *Iterator) Next() bool {
	if !it.list.Valid() {
		return false
	}
	if it.versions {
		it.list.Next()
	} else {
		it.skipVersions(it.list.Key().key())
	}
	return it.settle()
}

// settle moves the skiplist iterator forward, from where it is, to the
// first entry the view shows; the skiplist iterator's position is the
// iterator's.
func (it *Iterator) settle() bool {
	for it.list.Valid() {
		e := it.list.Key()
		switch {
		case e.seq() > it.seq:
			// Written after the snapshot.
			it.list.Next()
		case !it.versions && e.kind() == KindDelete:
			// The newest visible version deletes the key.
			it.skipVersions(e.key())
		default:
			return true
		}
	}
	return false
}

// skipVersions moves the skiplist iterator past the versions of key.
func (it *Iterator) skipVersions(key []byte) {
	for it.list.Next() && bytes.Equal(it.list.Key().key(), key) {
	}
}

// Valid reports whether the iterator is positioned at an entry.
func (it *Iterator) Valid() bool {
	return it.list.Valid()
}

// Key returns the current entry's key, or nil when the iterator is not
// valid (unpositioned, exhausted or closed). The key is the stored entry's,
// not a copy: it must not be modified, which would change the entry for
// every reader and the table the next flush writes, and break the order
// that searches and iterators rely on. The memstore never overwrites or
// frees it, so it stays valid after the iterator moves or closes.
func (it *Iterator) Key() []byte {
	// A skiplist iterator that is not valid returns the zero entry, whose
	// key and value are nil and sequence number and kind 0: no check here.
	return it.list.Key().key()
}

// Value returns the current entry's value: nil for a tombstone, a non-nil
// slice otherwise, empty for an empty value. It returns nil when the
// iterator is not valid. Like Key, it is the stored entry's: not to be
// modified (the next flush would write the change), and valid after the
// iterator moves or closes.
func (it *Iterator) Value() []byte {
	return it.list.Key().value()
}

// Seq returns the current entry's sequence number, or 0 when the iterator
// is not valid.
func (it *Iterator) Seq() uint64 {
	return it.list.Key().seq()
}

// Kind returns the current entry's kind. When the iterator is not valid it
// returns 0, which reads as KindDelete: check Valid, or the last move's
// result, first.
func (it *Iterator) Kind() Kind {
	return it.list.Key().kind()
}

// Err returns nil: an iterator over memory meets no errors. It exists so
// that an Iterator satisfies the same interface as iterators over tables.
func (it *Iterator) Err() error {
	return nil
}

// Close releases the iterator. Afterwards it is not valid, its moves
// return false and its accessors zero values. It always returns nil.
func (it *Iterator) Close() error {
	// Drop every reference into the memstore, but keep an empty skiplist
	// iterator, so that Valid, Next and the accessors on a closed iterator
	// report false or zero values rather than panic.
	*it.list = skiplist.Iterator[entry, struct{}]{}
	*it = Iterator{list: it.list, closed: true}
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
