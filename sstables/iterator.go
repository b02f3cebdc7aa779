package sstables

import (
	"iter"

	"github.com/stratadb/strata/internal/base"
)

// IterOptions bound an iterator to the keys in [LowerBound, UpperBound).
// The zero value iterates over the whole table.
type IterOptions struct {
	// LowerBound is the smallest key shown. Default: nil, no lower bound.
	LowerBound []byte
	// UpperBound is the first key not shown; a scan reads no block past
	// it. Default: nil, no upper bound.
	UpperBound []byte
}

// Iterator walks a table's entries in order, forward or backward: keys
// ascending and, within a key, versions from the newest. It shows every
// entry, tombstones included (Kind tells them apart); a merging iterator
// turns entries into a live view. Next and Prev may alternate at any
// entry; once a move runs off one end, a move the other way comes back to
// the entry at that end. It is not safe for concurrent use.
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
	blobBuf      []byte      // where a value read from a blob file lands
	readahead    *blobReadahead
	valid        bool
	edge         base.Edge // where the last move ran off the entries, when not valid
	err          error
	closed       bool
}

// NewIterator returns an iterator over the table, unpositioned: call First,
// Last, SeekGE or SeekLT.
func (r *Reader) NewIterator(opts *IterOptions) *Iterator {
	it := &Iterator{r: r}
	if opts != nil {
		it.lower, it.upper = opts.LowerBound, opts.UpperBound
	}
	switch {
	case r.closed.Load():
		it.err = ErrClosed
	default:
		// A failed load of the index is the first move's error.
		if it.err = r.indexReady(); it.err == nil {
			it.index = r.index
		}
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
		return it.stop(it.r.indexError(it.index.err), base.EdgeEnd)
	}
	return it.loadBlock() && it.settle(it.data.first())
}

// Last moves to the last entry before the upper bound.
func (it *Iterator) Last() bool {
	if it.upper != nil {
		return it.SeekLT(it.upper)
	}
	if !it.ready() {
		return false
	}
	if !it.index.last() {
		return it.stop(it.r.indexError(it.index.err), base.EdgeStart)
	}
	return it.loadBlock() && it.settleBack(it.data.last())
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
		return it.stop(it.r.indexError(it.index.err), base.EdgeEnd)
	}
	return it.loadBlock() && it.settle(it.data.seekGE(key, MaxSeq))
}

// SeekLT moves to the last entry whose key is before key (and the upper
// bound): the oldest version of the last key before it.
func (it *Iterator) SeekLT(key []byte) bool {
	if !it.ready() {
		return false
	}
	if it.upper != nil && it.r.cmp(key, it.upper) > 0 {
		key = it.upper
	}
	// The block that holds the first entry at or after key, if any; else
	// every entry is before key.
	if !it.index.seekGE(key, MaxSeq) && (it.index.err != nil || !it.index.last()) {
		return it.stop(it.r.indexError(it.index.err), base.EdgeStart)
	}
	return it.loadBlock() && it.settleBack(it.data.seekLT(key, MaxSeq))
}

// Next moves to the next entry. After a backward move that found no entry
// it moves to the first.
func (it *Iterator) Next() bool {
	if !it.valid {
		return it.edge == base.EdgeStart && it.First()
	}
	// The block may alias the reader's mapping, gone once it is closed.
	if it.r.closed.Load() {
		return it.stop(ErrClosed, base.NoEdge)
	}
	return it.settle(it.data.nextEntry())
}

// Prev moves to the previous entry. After a forward move that found no
// entry it moves to the last. Within a block it costs about what Next
// does: see blockIter.
func (it *Iterator) Prev() bool {
	if !it.valid {
		return it.edge == base.EdgeEnd && it.Last()
	}
	if it.r.closed.Load() {
		return it.stop(ErrClosed, base.NoEdge)
	}
	return it.settleBack(it.data.prevEntry())
}

// settle finishes a forward move within a block: on to the next block when
// this one is exhausted, then the upper bound and the entry's kind are
// checked.
func (it *Iterator) settle(ok bool) bool {
	for !ok {
		if it.data.err != nil {
			return it.stop(it.r.blockError(it.h, it.data.err), base.EdgeEnd)
		}
		// Later blocks hold keys at or after this block's separator: when
		// that is past the bound, do not read the next block to find out.
		if it.upper != nil && it.r.cmp(it.index.key, it.upper) >= 0 {
			return it.stop(nil, base.EdgeEnd)
		}
		if !it.index.nextEntry() {
			return it.stop(it.r.indexError(it.index.err), base.EdgeEnd)
		}
		if !it.loadBlock() {
			return false
		}
		ok = it.data.first()
	}
	if it.upper != nil && it.r.cmp(it.data.key, it.upper) >= 0 {
		return it.stop(nil, base.EdgeEnd)
	}
	return it.found()
}

// settleBack finishes a backward move within a block: back to the previous
// block when this one is exhausted, then the lower bound and the entry's
// kind are checked.
func (it *Iterator) settleBack(ok bool) bool {
	for !ok {
		if it.data.err != nil {
			return it.stop(it.r.blockError(it.h, it.data.err), base.EdgeStart)
		}
		if !it.index.prevEntry() {
			return it.stop(it.r.indexError(it.index.err), base.EdgeStart)
		}
		// The previous block holds keys at or before its separator: when
		// that is below the bound, do not read the block to find out.
		if it.lower != nil && it.r.cmp(it.index.key, it.lower) < 0 {
			return it.stop(nil, base.EdgeStart)
		}
		if !it.loadBlock() {
			return false
		}
		ok = it.data.last()
	}
	if it.lower != nil && it.r.cmp(it.data.key, it.lower) < 0 {
		return it.stop(nil, base.EdgeStart)
	}
	return it.found()
}

// found finishes a move that reached an entry within the bounds. It is
// small enough to inline into every move; badKind is not.
func (it *Iterator) found() bool {
	if !base.PointKind(it.data.kind()) {
		return it.badKind()
	}
	it.valid = true
	return true
}

// badKind stops at an entry of no known kind, damage, and shows one whose
// value lies in a blob file.
func (it *Iterator) badKind() bool {
	if _, err := it.r.entryKind(&it.data, it.h); err != nil {
		return it.stop(err, base.NoEdge)
	}
	it.valid = true
	return true
}

// loadBlock reads the block the index iterator is at.
func (it *Iterator) loadBlock() bool {
	h, err := it.r.loadBlock(&it.index, &it.data, &it.buf, nil, nil)
	it.h = h
	if err != nil {
		return it.stop(err, base.NoEdge)
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

// stop ends a move that found no entry: err, if not nil, is why, and stays;
// else the move ran off the entries at edge.
func (it *Iterator) stop(err error, edge base.Edge) bool {
	it.valid, it.edge = false, edge
	if err != nil {
		it.edge = base.NoEdge
		if it.err == nil {
			it.err = err
		}
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
	if k := it.data.kind(); k != kindSetBlob {
		return k
	}
	return KindSet
}

// Value returns the current entry's value (empty for a tombstone), or nil
// when the iterator is not valid. The value is not a copy: it lies in the
// block, which is the table's read-only memory mapping (a write faults), a
// block of the Cache that other readers share, or a buffer the iterator
// reuses. It must not be modified, and is valid only until the next move or
// Close, and never after the Reader's Close.
//
// A value that lies in a blob file is read now, not before: a scan of keys
// alone reads none. If it cannot be read, Value returns nil and stops the
// iterator, with the reason in Err.
func (it *Iterator) Value() []byte {
	if !it.valid {
		return nil
	}
	if it.data.kind() == kindSetBlob {
		return it.blobValue()
	}
	return it.data.value
}

func (it *Iterator) blobValue() []byte {
	if it.readahead == nil {
		it.readahead = new(blobReadahead)
	}
	var value []byte
	err := it.r.blobValue(it.data.value, it.h, &it.blobBuf, false, it.readahead, func(v []byte) {
		it.blobBuf = append(it.blobBuf[:0], v...)
		value = it.blobBuf
	})
	if err != nil {
		it.stop(err, base.NoEdge)
		return nil
	}
	return value
}

// BlobHandle returns the handle of the current entry's value when it lies
// in a blob file, without reading it: a compaction moves the handle to the
// table it writes (Writer.AddBlobRef).
func (it *Iterator) BlobHandle() (BlobHandle, bool) {
	if !it.valid || it.data.kind() != kindSetBlob {
		return BlobHandle{}, false
	}
	h, err := DecodeBlobHandle(it.data.value)
	if err != nil {
		it.stop(it.r.blockError(it.h, err), base.NoEdge)
		return BlobHandle{}, false
	}
	return h, true
}

// BlobTable returns the name of the iterator's table, which BlobHandle's
// handles are of: a merge that reads a value later names it in errors.
func (it *Iterator) BlobTable() string { return it.r.name }

// Err returns the error that stopped the iterator, if any. An iterator that
// stops at the end of its range has no error.
func (it *Iterator) Err() error { return it.err }

// Close releases the iterator. Further moves return false with ErrClosed.
func (it *Iterator) Close() error {
	if it.closed {
		return ErrClosed
	}
	it.closed, it.valid, it.edge, it.buf = true, false, base.NoEdge, nil
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
	return it.walk(it.First, false)
}

// Backward returns the entries from the last down, for range loops, on the
// terms of All.
func (it *Iterator) Backward() iter.Seq2[[]byte, []byte] {
	return it.walk(it.Last, true)
}

// walk returns the entries from where start puts the iterator on, forward
// or backward. The loop calls Next or Prev, Key and Value directly:
// through function values they cost a scan 8 to 10%.
func (it *Iterator) walk(start func() bool, backward bool) iter.Seq2[[]byte, []byte] {
	return func(yield func([]byte, []byte) bool) {
		for ok := start(); ok; {
			k, v := it.Key(), it.Value()
			if !it.Valid() {
				return // the value, in a blob file, did not read: Err says why
			}
			if !yield(k, v) {
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
