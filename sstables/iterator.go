package sstables

import "iter"

// IterOptions bound an iterator to the keys in [LowerBound, UpperBound).
// The zero value iterates over the whole table.
type IterOptions struct {
	// LowerBound is the smallest key shown. Default: nil, no lower bound.
	LowerBound []byte
	// UpperBound is the first key not shown; a scan reads no block past
	// it. Default: nil, no upper bound.
	UpperBound []byte
}

// Iterator walks a table's entries in order: keys ascending and, within a
// key, versions from the newest. It shows every entry, tombstones included
// (Kind tells them apart); a merging iterator turns entries into a live
// view. It is not safe for concurrent use.
//
// Key and Value alias memory the iterator and the Reader own (see Key and
// Value): they must not be modified, are valid only until the next move or
// Close, and must not be used once the Reader is closed; copy them to keep
// them. After the Reader's Close the next move fails with ErrClosed.
type Iterator struct {
	r            *Reader
	lower, upper []byte
	index, data  blockIter
	h            BlockHandle // the data block's handle
	buf          []byte      // block buffer, reused across blocks
	valid        bool
	err          error
	closed       bool
}

// NewIterator returns an iterator over the table, unpositioned: call First
// or SeekGE.
func (r *Reader) NewIterator(opts *IterOptions) *Iterator {
	it := &Iterator{r: r, index: r.index}
	if opts != nil {
		it.lower, it.upper = opts.LowerBound, opts.UpperBound
	}
	if r.closed.Load() {
		it.err = ErrClosed
	}
	return it
}

// First moves to the first entry at or after the lower bound.
func (it *Iterator) First() bool {
	if it.lower != nil {
		return it.SeekGE(it.lower)
	}
	if !it.ready() {
		return false
	}
	if !it.index.first() {
		return it.stop(it.r.indexError(it.index.err))
	}
	return it.loadBlock() && it.settle(it.data.first())
}

// SeekGE moves to the first entry whose key is at or after key (and the
// lower bound).
func (it *Iterator) SeekGE(key []byte) bool {
	if !it.ready() {
		return false
	}
	if it.lower != nil && it.r.cmp(key, it.lower) < 0 {
		key = it.lower
	}
	if !it.index.seekGE(key, MaxSeq) {
		return it.stop(it.r.indexError(it.index.err))
	}
	return it.loadBlock() && it.settle(it.data.seekGE(key, MaxSeq))
}

// Next moves to the next entry.
func (it *Iterator) Next() bool {
	if !it.valid {
		return false
	}
	// The block may alias the reader's mapping, gone once it is closed.
	if it.r.closed.Load() {
		return it.stop(ErrClosed)
	}
	return it.settle(it.data.nextEntry())
}

// settle finishes a move within a block: on to the next block when this one
// is exhausted, then the upper bound and the entry's kind are checked.
func (it *Iterator) settle(ok bool) bool {
	for !ok {
		if it.data.err != nil {
			return it.stop(it.r.blockError(it.h, it.data.err))
		}
		// Later blocks hold keys at or after this block's separator: when
		// that is past the bound, do not read the next block to find out.
		if it.upper != nil && it.r.cmp(it.index.key, it.upper) >= 0 {
			return it.stop(nil)
		}
		if !it.index.nextEntry() {
			return it.stop(it.r.indexError(it.index.err))
		}
		if !it.loadBlock() {
			return false
		}
		ok = it.data.first()
	}
	if it.upper != nil && it.r.cmp(it.data.key, it.upper) >= 0 {
		return it.stop(nil)
	}
	if _, err := it.r.entryKind(&it.data, it.h); err != nil {
		return it.stop(err)
	}
	it.valid = true
	return true
}

// loadBlock reads the block the index iterator is at.
func (it *Iterator) loadBlock() bool {
	h, err := it.r.loadBlock(&it.index, &it.data, &it.buf, false)
	it.h = h
	if err != nil {
		return it.stop(err)
	}
	return true
}

func (it *Iterator) ready() bool {
	it.valid = false
	if it.closed || it.r.closed.Load() {
		it.err = ErrClosed
	}
	return it.err == nil
}

func (it *Iterator) stop(err error) bool {
	it.valid = false
	if err != nil && it.err == nil {
		it.err = err
	}
	return false
}

// Valid reports whether the iterator is at an entry.
func (it *Iterator) Valid() bool { return it.valid }

// Key returns the current entry's key, or nil when the iterator is not
// valid (unpositioned, exhausted, failed or closed). The key is the
// iterator's buffer, not a copy: it must not be modified, because the next
// key is decoded on top of it (keys share prefixes), and it is valid only
// until the next move or Close.
func (it *Iterator) Key() []byte {
	// Every accessor checks valid: once the iterator stops, data still
	// holds the entry it was last at, or one past the upper bound.
	if !it.valid {
		return nil
	}
	return it.data.key
}

// Seq returns the current entry's sequence number, or 0 when the iterator
// is not valid.
func (it *Iterator) Seq() uint64 {
	if !it.valid {
		return 0
	}
	return it.data.seq()
}

// Kind returns whether the current entry is a value or a tombstone. When
// the iterator is not valid it returns 0, which reads as KindDelete: check
// Valid, or the last move's result, first.
func (it *Iterator) Kind() Kind {
	if !it.valid {
		return 0
	}
	return it.data.kind()
}

// Value returns the current entry's value (empty for a tombstone), or nil
// when the iterator is not valid. The value is not a copy: it lies in the
// block, which is the table's read-only memory mapping (a write faults), a
// block of the Cache that other readers share, or a buffer the iterator
// reuses. It must not be modified, and is valid only until the next move or
// Close, and never after the Reader's Close.
func (it *Iterator) Value() []byte {
	if !it.valid {
		return nil
	}
	return it.data.value
}

// Err returns the error that stopped the iterator, if any. An iterator that
// stops at the end of its range has no error.
func (it *Iterator) Err() error { return it.err }

// Close releases the iterator. Further moves return false with ErrClosed.
func (it *Iterator) Close() error {
	if it.closed {
		return ErrClosed
	}
	it.closed, it.valid, it.buf = true, false, nil
	return nil
}

// All returns the entries from the first on, for range loops. Entries are
// those Key and Value show, tombstones included, and the slices are theirs:
// not to be modified, valid only until the loop's next iteration. A read
// error ends the loop early and stays in Err, so check it after the loop:
//
//	for k, v := range it.All() {
//		...
//	}
//	if err := it.Err(); err != nil {
//		...
//	}
func (it *Iterator) All() iter.Seq2[[]byte, []byte] {
	return func(yield func([]byte, []byte) bool) {
		for ok := it.First(); ok; ok = it.Next() {
			if !yield(it.Key(), it.Value()) {
				return
			}
		}
	}
}
