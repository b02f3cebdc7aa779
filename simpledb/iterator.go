package simpledb

import (
	"bytes"
	"iter"
	"slices"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/rangedel"
	"github.com/stratadb/strata/memstore"
	"github.com/stratadb/strata/sstables"
)

// Iterator walks the live keys in [lower, upper), forward or backward, as
// of the moment it was created: writes after that are not seen, and flushes
// and compactions do not disturb it. A new iterator is at no key: Next
// moves it to the first, as First does, and Prev to the last, as Last
// does, so that
//
//	for it.Next() {
//		...
//	}
//
// walks every key. Next and Prev may alternate at any key; once a move
// runs off one end, a move the other way comes back to the key at that end
// (Pebble's semantics). It is not safe for concurrent use.
//
// Key and Value return slices of the database's own memory (a memstore's
// entries, which the iterator's read state keeps until Close; a table's
// block, copied into the iterator's buffer or in a mapped file it pins;
// backward, its copy of the value): they are valid until the next move or
// Close, and must not be modified.
// Writing into a value changes what other readers see and what the next
// flush persists; writing into a key can break the order the iterator
// walks. Copy them to keep or change them.
type Iterator struct {
	db           *DB
	rs           *readState
	m            *sstables.MergingIterator
	lower, upper []byte
	err          error
	closed       bool
	// positioned: a move has been made. Until then Next is First, and
	// Prev is Last.
	positioned bool
}

// NewIterator returns an iterator over the live keys in [lower, upper). A
// nil bound is open; any other slice, the empty one too, is a bound (see
// Ranges in the package documentation): in bytewise order an empty upper
// bound, before every key, yields none. The iterator copies the bounds.
// It starts at no key: First, Last, SeekGE or SeekLT positions it, and so
// do Next, at the first key, and Prev, at the last. Close it when done.
func (d *DB) NewIterator(lower, upper []byte) (*Iterator, error) {
	if err := d.checkOpen(); err != nil {
		return nil, err
	}
	rs, err := d.reads.acquire()
	if err != nil {
		return nil, err
	}
	return d.newIterator(rs, lower, upper, d.commits.visible(), nil), nil // in this order: see readState.get
}

// NewPrefixIterator returns an iterator over the live keys that start with
// prefix: NewIterator(prefix, PrefixUpperBound(prefix)). An empty or nil
// prefix gives every key. Prefixes are bytewise: a database whose
// Options.Comparator is not bytewise, where the keys with a prefix need
// not be one range, refuses with ErrPrefixOrder.
func (d *DB) NewPrefixIterator(prefix []byte) (*Iterator, error) {
	if err := d.opts.checkPrefixOrder(); err != nil {
		return nil, err
	}
	return d.NewIterator(prefix, PrefixUpperBound(prefix))
}

// checkPrefixOrder returns ErrPrefixOrder unless the database orders keys
// bytewise.
func (o *Options) checkPrefixOrder() error {
	if o.Comparator.Name != sstables.Bytewise.Name {
		return errs.Errorf("%w: the database orders keys by %q", ErrPrefixOrder, o.Comparator.Name)
	}
	return nil
}

// PrefixUpperBound returns the least key after every key that starts with
// prefix, in bytewise order: prefix with its trailing 0xff bytes dropped
// and its last byte then incremented, so "ab" gives "ac" and "a\xff" gives
// "b". It returns nil, an open bound, when no such key exists: for an empty
// prefix, or one of 0xff bytes only. The result is a new slice, never
// prefix's memory. With NewIterator(prefix, PrefixUpperBound(prefix)) an
// iterator walks the keys with the prefix, as NewPrefixIterator does.
func PrefixUpperBound(prefix []byte) []byte {
	end := len(prefix)
	for end > 0 && prefix[end-1] == 0xff {
		end--
	}
	if end == 0 {
		return nil
	}
	upper := bytes.Clone(prefix[:end])
	upper[end-1]++
	return upper
}

// newIterator returns an iterator over rs as of seq, under the writes an
// indexed batch's index holds if it is not nil; it takes over the caller's
// reference on rs.
func (d *DB) newIterator(rs *readState, lower, upper []byte, seq uint64, index *batchIndex) *Iterator {
	it := &Iterator{db: d, rs: rs, lower: bytes.Clone(lower), upper: bytes.Clone(upper)}
	// Sized once: the index, a memstore each, a table per L0 table, a level
	// each.
	children := make([]sstables.EntryIterator, 0, 2+len(rs.imm)+len(rs.v.levels[0])+NumLevels-1)
	// The range tombstones each child holds, visible at seq, within the
	// bounds: they are few, so the iterator collects them all now, and
	// its merge hides the entries they cover, either way. A version lists
	// the tables that hold any, so without them this costs nothing.
	var tombs [][]rangedel.Tombstone
	addTombs := func(l rangedel.List) {
		if len(l) == 0 {
			return
		}
		if visible := l.Newest(it.rs.v.cmp, nil, seq, it.lower, it.upper); len(visible) > 0 {
			for len(tombs) <= len(children) {
				tombs = append(tombs, nil)
			}
			tombs[len(children)] = append(tombs[len(children)], visible...)
		}
	}
	// Over an index, whose writes are numbered above the database's, the
	// merge cannot hide what is above seq: the memstores hide it
	// themselves, and a filter the tables'.
	mergeSeq, table := seq, func(it sstables.EntryIterator) sstables.EntryIterator { return it }
	if index != nil {
		child, t := index.child(it.lower, it.upper)
		if len(t) > 0 {
			tombs = [][]rangedel.Tombstone{t}
		}
		children = append(children, child)
		mergeSeq = 0
		table = func(it sstables.EntryIterator) sstables.EntryIterator { return &seqFilter{it, seq} }
	}
	if seq > 0 { // at sequence number 0 nothing is visible yet
		mopts := &memstore.IterOptions{LowerBound: it.lower, UpperBound: it.upper, Seq: seq}
		addTombs(it.rs.mem.m.RangeDeletions())
		children = append(children, it.rs.mem.m.NewEntryIterator(mopts))
		for i := len(it.rs.imm) - 1; i >= 0; i-- {
			addTombs(it.rs.imm[i].m.RangeDeletions())
			children = append(children, it.rs.imm[i].m.NewEntryIterator(mopts))
		}
		topts := &sstables.IterOptions{LowerBound: it.lower, UpperBound: it.upper}
		for _, t := range it.rs.v.levels[0] {
			if t.overlaps(it.rs.v.cmp, it.lower, it.upper) {
				addTombs(t.rangeDels)
				children = append(children, table(t.newIterator(topts)))
			}
		}
		for level := 1; level < NumLevels; level++ {
			if len(it.rs.v.levels[level]) > 0 {
				for _, t := range it.rs.v.rangeDelTables[level] {
					if t.overlaps(it.rs.v.cmp, it.lower, it.upper) {
						addTombs(t.rangeDels)
					}
				}
				children = append(children, table(&levelIter{cmp: it.rs.v.cmp, tables: it.rs.v.levels[level], opts: *topts}))
			}
		}
	}
	it.m = sstables.NewMergingIterator(&sstables.MergeOptions{Comparator: d.opts.Comparator, Seq: mergeSeq, DropTombstones: true,
		RangeDeletions: tombs, Fold: d.fold, Blobs: d.tables}, children...)
	return it
}

// First moves to the first key.
func (it *Iterator) First() bool {
	it.positioned = true
	return !it.closed && it.settle(it.m.First())
}

// Last moves to the last key.
func (it *Iterator) Last() bool {
	it.positioned = true
	return !it.closed && it.settle(it.m.Last())
}

// SeekGE moves to the first key at or after key.
func (it *Iterator) SeekGE(key []byte) bool {
	if it.closed {
		return false
	}
	it.positioned = true
	if it.lower != nil && it.rs.v.cmp(key, it.lower) < 0 {
		key = it.lower
	}
	return it.settle(it.m.SeekGE(key))
}

// SeekLT moves to the last key before key.
func (it *Iterator) SeekLT(key []byte) bool {
	if it.closed {
		return false
	}
	it.positioned = true
	if it.upper != nil && it.rs.v.cmp(key, it.upper) > 0 {
		key = it.upper
	}
	return it.settle(it.m.SeekLT(key))
}

// Next moves to the next key. On a new iterator, and after a backward
// move that found no key, it moves to the first.
func (it *Iterator) Next() bool {
	if !it.positioned {
		return it.First()
	}
	return !it.closed && it.settle(it.m.Next())
}

// Prev moves to the previous key. On a new iterator, and after a forward
// move that found no key, it moves to the last.
func (it *Iterator) Prev() bool {
	if !it.positioned {
		return it.Last()
	}
	return !it.closed && it.settle(it.m.Prev())
}

func (it *Iterator) settle(ok bool) bool {
	if !ok {
		it.err = it.m.Err()
	}
	return ok
}

// Valid reports whether the iterator is at a key.
func (it *Iterator) Valid() bool { return !it.closed && it.m.Valid() }

// Key returns the current key, or nil when the iterator is not at one
// (before the first move, past either end, after Close). The slice must not
// be modified: see Iterator.
func (it *Iterator) Key() []byte { return it.m.Key() }

// Value returns the current value, or nil when the iterator is not at a
// key. The slice must not be modified: see Iterator. A value kept in a
// blob file (Options.BlobThreshold) is read now, not when the iterator
// moved, so that a walk over keys alone reads none; if it cannot be read,
// Value returns nil and ends the iteration: Valid turns false and Err says
// why. A range loop over All or Backward stops there, before the entry.
func (it *Iterator) Value() []byte {
	v := it.m.Value()
	if v == nil && it.err == nil {
		it.err = it.m.Err()
	}
	return v
}

// Err returns the error that ended the iteration, if any; reaching either
// end of the range is not an error.
func (it *Iterator) Err() error {
	if it.closed && it.err == nil {
		return ErrClosed
	}
	return it.err
}

// Close releases the iterator. Further calls return ErrClosed.
func (it *Iterator) Close() error {
	if it.closed {
		return ErrClosed
	}
	it.closed = true
	err := it.m.Close()
	it.rs.unref()
	return err
}

// All returns the keys and values from the first on, for range loops. It
// starts from the first key whatever the iterator's position: AllFrom
// starts from a key. Each pair is valid only during its turn of the loop
// and must not be modified (see Iterator). A read error ends the loop
// early; it stays in Err, so check it after the loop:
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

// AllFrom returns, on the terms of All, the keys and values from the first
// key at or after key on: SeekGE(key), then Next.
func (it *Iterator) AllFrom(key []byte) iter.Seq2[[]byte, []byte] {
	return it.walk(func() bool { return it.SeekGE(key) }, false)
}

// Backward returns, on the terms of All, the keys and values from the last
// down.
func (it *Iterator) Backward() iter.Seq2[[]byte, []byte] {
	return it.walk(it.Last, true)
}

// BackwardBefore returns, on the terms of All, the keys and values before
// key, from the last of them down: SeekLT(key), then Prev. Key itself is
// not included, so that AllFrom(k) and BackwardBefore(k) together visit
// every key once.
func (it *Iterator) BackwardBefore(key []byte) iter.Seq2[[]byte, []byte] {
	return it.walk(func() bool { return it.SeekLT(key) }, true)
}

// walk returns the keys and values from where start puts the iterator on,
// forward or backward. The loop calls Next or Prev, Key and Value
// directly: through function values they cost a scan 8 to 10%.
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

// levelIter walks the tables of one level (L1 and below), which are sorted
// and disjoint, opening one table iterator at a time, either way.
type levelIter struct {
	cmp    func(a, b []byte) int
	tables []*table
	opts   sstables.IterOptions
	idx    int
	cur    *tableIter
	err    error
}

func (l *levelIter) First() bool {
	if l.opts.LowerBound != nil {
		return l.SeekGE(l.opts.LowerBound)
	}
	return l.open(0) && l.settle(l.cur.First(), false)
}

func (l *levelIter) Last() bool {
	if l.opts.UpperBound != nil {
		return l.SeekLT(l.opts.UpperBound)
	}
	return l.open(len(l.tables)-1) && l.settle(l.cur.Last(), true)
}

func (l *levelIter) SeekGE(key []byte) bool {
	return l.open(searchLevel(l.cmp, l.tables, key)) && l.settle(l.cur.SeekGE(key), false)
}

// SeekLT starts from the last table whose smallest key is before key.
func (l *levelIter) SeekLT(key []byte) bool {
	i, _ := slices.BinarySearchFunc(l.tables, key, func(t *table, k []byte) int { return l.cmp(t.Smallest, k) })
	return l.open(i-1) && l.settle(l.cur.SeekLT(key), true)
}

func (l *levelIter) Next() bool { return l.cur != nil && l.settle(l.cur.Next(), false) }
func (l *levelIter) Prev() bool { return l.cur != nil && l.settle(l.cur.Prev(), true) }

// settle moves on to the next table, or back to the previous one, while
// the current one has no entry left that way.
func (l *levelIter) settle(ok, backward bool) bool {
	for !ok {
		if err := l.cur.Err(); err != nil {
			l.err = err
			return false
		}
		if backward {
			ok = l.open(l.idx-1) && l.cur.Last()
		} else {
			ok = l.open(l.idx+1) && l.cur.First()
		}
		if l.cur == nil {
			return false
		}
	}
	return true
}

// open switches to table i, unless it is outside the tables or the bounds.
func (l *levelIter) open(i int) bool {
	if l.cur != nil {
		l.cur.Close()
		l.cur = nil
	}
	l.idx = i
	if i < 0 || i >= len(l.tables) ||
		l.opts.UpperBound != nil && l.cmp(l.tables[i].Smallest, l.opts.UpperBound) >= 0 ||
		l.opts.LowerBound != nil && l.cmp(l.tables[i].Largest, l.opts.LowerBound) < 0 {
		return false
	}
	l.cur = l.tables[i].newIterator(&l.opts)
	return true
}

// The accessors return zero values once the level is exhausted (no table
// open), as the table iterator's do past its end.
func (l *levelIter) Valid() bool { return l.cur != nil && l.cur.Valid() }

func (l *levelIter) Key() []byte {
	if l.cur == nil {
		return nil
	}
	return l.cur.Key()
}

func (l *levelIter) Seq() uint64 {
	if l.cur == nil {
		return 0
	}
	return l.cur.Seq()
}

func (l *levelIter) Kind() base.Kind {
	if l.cur == nil {
		return 0
	}
	return l.cur.Kind()
}

func (l *levelIter) Value() []byte {
	if l.cur == nil {
		return nil
	}
	v := l.cur.Value()
	if v == nil && l.err == nil {
		l.err = l.cur.Err() // a value in a blob file that did not read
	}
	return v
}

// BlobHandle is the current table's (see sstables.Iterator.BlobHandle).
func (l *levelIter) BlobHandle() (sstables.BlobHandle, bool) {
	if l.cur == nil {
		return sstables.BlobHandle{}, false
	}
	return l.cur.BlobHandle()
}

// BlobTable is the current table's name.
func (l *levelIter) BlobTable() string {
	if l.cur == nil {
		return ""
	}
	return l.cur.BlobTable()
}

func (l *levelIter) Err() error { return l.err }

func (l *levelIter) Close() error {
	if l.cur != nil {
		return l.cur.Close()
	}
	return nil
}
