package sstables

import (
	"container/heap"
	"errors"
	"iter"
)

// EntryIterator is what a MergingIterator merges: anything that walks
// entries in key order, versions of a key from the newest. Table iterators
// and memstore iterators both are. Key, Seq, Kind and Value describe the
// current entry; a MergingIterator calls them only while the child is at
// one. (This package's and memstore's iterators return zero values when
// not; other implementations need not.) Key and Value may alias the
// iterator's memory: MergingIterator never modifies them, and passes Value
// on without a copy.
type EntryIterator interface {
	First() bool
	SeekGE(key []byte) bool
	Next() bool
	Valid() bool
	Key() []byte
	Seq() uint64
	Kind() Kind
	Value() []byte
	Err() error
	Close() error
}

// MergeOptions configure a MergingIterator. The zero value merges bytewise
// keys into a view of each key's newest entry, tombstones kept.
type MergeOptions struct {
	// Comparator orders keys. Default: Bytewise.
	Comparator *Comparator
	// Seq hides entries with a higher sequence number: a read at a
	// snapshot. Default: 0, which hides nothing.
	Seq uint64
	// AllVersions shows every visible entry instead of each key's newest.
	// Compaction uses it to keep versions a snapshot still needs.
	// Default: false, each key's newest visible entry only.
	AllVersions bool
	// DropTombstones hides tombstones. With newest-only merging a key whose
	// newest visible entry is a tombstone disappears: the live view. With
	// AllVersions only the tombstone entries themselves are hidden.
	// Default: false, tombstones are shown (Kind is KindDelete).
	DropTombstones bool
}

// MergingIterator merges any number of EntryIterators (k-way, on a heap).
// Entries order by key, then sequence number descending; entries with equal
// key and sequence number (tables written without sequence numbers) rank
// by position in the argument list: earlier iterators are newer. It is not
// safe for concurrent use. Key and Value alias memory the iterator and its
// children own: they must not be modified and are valid only until the next
// move or Close; copy them to keep them.
type MergingIterator struct {
	cmp      func(a, b []byte) int
	opts     MergeOptions
	children []EntryIterator
	heap     mergeHeap
	cur      EntryIterator
	curKey   []byte // the key being shown, kept across child moves
	err      error
}

// NewMergingIterator returns an unpositioned iterator over iters, ordered
// from newest to oldest. It owns them: Close closes them.
func NewMergingIterator(opts *MergeOptions, iters ...EntryIterator) *MergingIterator {
	m := &MergingIterator{children: iters}
	if opts != nil {
		m.opts = *opts
	}
	if m.opts.Comparator == nil {
		m.opts.Comparator = Bytewise
	}
	if m.opts.Seq == 0 {
		m.opts.Seq = MaxSeq
	}
	m.cmp = m.opts.Comparator.Compare
	m.heap.m = m
	return m
}

// First moves to the first entry.
func (m *MergingIterator) First() bool {
	return m.reset(func(it EntryIterator) bool { return it.First() })
}

// SeekGE moves to the first entry at or after key.
func (m *MergingIterator) SeekGE(key []byte) bool {
	return m.reset(func(it EntryIterator) bool { return it.SeekGE(key) })
}

func (m *MergingIterator) reset(position func(EntryIterator) bool) bool {
	m.heap.items = m.heap.items[:0]
	m.cur = nil
	for i, it := range m.children {
		if position(it) {
			m.heap.items = append(m.heap.items, mergeItem{it: it, rank: i})
		} else if err := it.Err(); err != nil {
			return m.stop(err)
		}
	}
	heap.Init(&m.heap)
	return m.settle(nil)
}

// Next moves to the next entry.
func (m *MergingIterator) Next() bool {
	if m.cur == nil {
		return false
	}
	if m.opts.AllVersions {
		if !m.advanceTop() {
			return false
		}
		return m.settle(nil)
	}
	// Newest-only: skip the other versions of the key just shown.
	return m.settle(m.curKey)
}

// advanceTop moves the heap's top iterator on.
func (m *MergingIterator) advanceTop() bool {
	top := m.heap.items[0].it
	if top.Next() {
		heap.Fix(&m.heap, 0)
		return true
	}
	if err := top.Err(); err != nil {
		return m.stop(err)
	}
	heap.Pop(&m.heap)
	return true
}

// settle moves the top of the heap to the next entry to show: visible at
// opts.Seq, not a version of skip (the key just shown, in newest-only
// mode), and not a tombstone when they are dropped.
func (m *MergingIterator) settle(skip []byte) bool {
	for len(m.heap.items) > 0 {
		top := m.heap.items[0].it
		switch {
		case top.Seq() > m.opts.Seq:
		case skip != nil && m.cmp(top.Key(), skip) == 0:
		case top.Kind() == KindDelete && m.opts.DropTombstones:
			if !m.opts.AllVersions {
				// The key's newest visible entry is a tombstone: hide the key.
				m.curKey = append(m.curKey[:0], top.Key()...)
				skip = m.curKey
			}
		default:
			m.cur = top
			m.curKey = append(m.curKey[:0], top.Key()...)
			return true
		}
		if !m.advanceTop() {
			return false
		}
	}
	m.cur = nil
	return false
}

func (m *MergingIterator) stop(err error) bool {
	m.cur = nil
	if m.err == nil {
		m.err = err
	}
	return false
}

// Valid reports whether the iterator is at an entry.
func (m *MergingIterator) Valid() bool { return m.cur != nil }

// Key returns the current entry's key, or nil when the iterator is not
// valid (unpositioned, exhausted, failed or closed). The key is the
// iterator's buffer, not a copy: it must not be modified, because Next
// (unless AllVersions) compares the next entries with it to skip the older
// versions of the key, and it is valid only until the next move or Close.
func (m *MergingIterator) Key() []byte {
	// Every accessor checks cur: once the merge stops there is no child to
	// ask, and curKey still holds the last key shown.
	if m.cur == nil {
		return nil
	}
	return m.curKey
}

// Seq returns the current entry's sequence number, or 0 when the iterator
// is not valid.
func (m *MergingIterator) Seq() uint64 {
	if m.cur == nil {
		return 0
	}
	return m.cur.Seq()
}

// Kind returns the current entry's kind. When the iterator is not valid it
// returns 0, which reads as KindDelete: check Valid, or the last move's
// result, first.
func (m *MergingIterator) Kind() Kind {
	if m.cur == nil {
		return 0
	}
	return m.cur.Kind()
}

// Value returns the current entry's value, or nil when the iterator is not
// valid. It is the child iterator's Value, not a copy: the memory of a
// memstore or a table (see Iterator.Value), not to be modified, and valid
// only until the next move or Close.
func (m *MergingIterator) Value() []byte {
	if m.cur == nil {
		return nil
	}
	return m.cur.Value()
}

// Err returns the first error of any merged iterator.
func (m *MergingIterator) Err() error { return m.err }

// Close closes every merged iterator and returns the first error.
func (m *MergingIterator) Close() error {
	var errs []error
	for _, it := range m.children {
		errs = append(errs, it.Close())
	}
	m.children, m.heap.items, m.cur = nil, nil, nil
	return errors.Join(errs...)
}

// All returns the entries from the first on, for range loops; check Err
// after the loop (see Iterator.All). The slices are Key's and Value's: not
// to be modified, valid only until the loop's next iteration.
func (m *MergingIterator) All() iter.Seq2[[]byte, []byte] {
	return func(yield func([]byte, []byte) bool) {
		for ok := m.First(); ok; ok = m.Next() {
			if !yield(m.Key(), m.Value()) {
				return
			}
		}
	}
}

type mergeItem struct {
	it   EntryIterator
	rank int // position among the children: lower is newer
}

type mergeHeap struct {
	m     *MergingIterator
	items []mergeItem
}

func (h *mergeHeap) Len() int      { return len(h.items) }
func (h *mergeHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *mergeHeap) Push(x any)    { h.items = append(h.items, x.(mergeItem)) }
func (h *mergeHeap) Pop() any {
	last := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return last
}

func (h *mergeHeap) Less(i, j int) bool {
	a, b := h.items[i], h.items[j]
	if c := compareInternal(h.m.cmp, a.it.Key(), a.it.Seq(), b.it.Key(), b.it.Seq()); c != 0 {
		return c < 0
	}
	return a.rank < b.rank
}
