package sstables

import (
	"errors"
	"iter"
	"slices"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/errs"
	"github.com/stratadb/strata/internal/rangedel"
)

// EntryIterator is what a MergingIterator merges: anything that walks
// entries in key order, versions of a key from the newest, either way.
// Table iterators and memstore iterators both are. Key, Seq, Kind and Value
// describe the current entry; a MergingIterator calls them only while the
// child is at one. (This package's and memstore's iterators return zero
// values when not; other implementations need not.) It calls Next and Prev
// only on a child at an entry, and repositions one that ran off an end
// with First or Last, so a child need not turn back at its ends. Key and
// Value may alias the iterator's memory: MergingIterator never modifies
// them.
type EntryIterator interface {
	First() bool
	Last() bool
	SeekGE(key []byte) bool
	SeekLT(key []byte) bool
	Next() bool
	Prev() bool
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
	// RangeDeletions are the merged iterators' range tombstones:
	// RangeDeletions[i] are those of the i'th (the slice may be shorter
	// than the iterators). They hide the entries they cover: an entry, of
	// any iterator, is hidden when a tombstone at or below Seq covers its
	// key with a higher sequence number. Without AllVersions a key whose
	// newest visible entry is hidden disappears. They may come in any
	// order and overlap; the merge fragments them once, when it is
	// created. Default: none.
	//
	// The merge relies on the order of an LSM tree's levels: a tombstone
	// is newer than every entry it covers of an older iterator (one later
	// in the list). So once a tombstone hides an entry, without AllVersions
	// the merge moves every older iterator past the tombstone with one
	// seek, rather than through the entries it hides one by one.
	RangeDeletions [][]RangeTombstone
	// Fold, when set, folds merge operands (KindMerge) in newest-only
	// merging. A key whose newest visible entry is an operand shows its
	// visible versions from there down to the newest value, tombstone or
	// range deletion among them, folded from the oldest up: Fold(key,
	// older, newer) combines two adjacent versions, older a value or an
	// operand, into one. The entry shown is a value (KindSet) when a
	// value, a tombstone or a range deletion ended the fold, and an
	// operand (KindMerge) when the versions ran out first: data the merge
	// does not see may lie under it. Fold must neither modify nor keep
	// older and newer, and must return new memory. Its error stops the
	// merge (see Err). Default: nil, operands are shown as they are, as
	// they always are with AllVersions.
	Fold func(key, older, newer []byte) ([]byte, error)
	// Blobs reads, backward without AllVersions, the values that lie in
	// blob files when Value asks for them: the merge keeps the handle of
	// the newest visible entry (see Iterator.BlobHandle) rather than a copy
	// of its value. Default: nil, the merge copies each value as it passes,
	// reading it from its blob file.
	Blobs BlobSource
}

// blobEntries is an EntryIterator whose values may lie in blob files, a
// table's: see Iterator.BlobHandle and Iterator.BlobTable.
type blobEntries interface {
	BlobHandle() (BlobHandle, bool)
	BlobTable() string
}

// MergingIterator merges any number of EntryIterators (k-way, on a heap),
// forward or backward. Entries order by key, then sequence number
// descending; entries with equal key and sequence number (tables written
// without sequence numbers) rank by position in the argument list: earlier
// iterators are newer. Backward, the order is exactly reversed. Next and
// Prev may alternate at any entry (the merge then moves every child to the
// other side of the current entry, as Pebble's does); once a move runs off
// one end, a move the other way comes back to the entry at that end.
//
// It is not safe for concurrent use. Key and Value alias memory the
// iterator and its children own: they must not be modified and are valid
// only until the next move or Close; copy them to keep them. Forward, Value
// is the child's; backward, without AllVersions, it is a copy the merge
// makes, since the merge must step past a key's newest entry to know that
// no newer one follows; a folded key's (see MergeOptions.Fold) is the
// fold's, either way.
type MergingIterator struct {
	cmp      func(a, b []byte) int
	opts     MergeOptions
	children []EntryIterator
	heap     mergeHeap
	// reverse: the heap is a max-heap, and the walk goes backward.
	reverse bool
	// inHeap marks, while the walk turns, the children in the heap.
	inHeap []bool

	// The entry shown, when valid: key is the merge's own copy.
	valid bool
	key   []byte
	seq   uint64
	kind  Kind
	value []byte
	// from is, forward, the child at the entry shown: its Value, which
	// may lie in a blob file, is read when Value asks (loaded). Backward,
	// blobPending says the value lies at blob, named by table blobTable,
	// read the same way.
	from        EntryIterator
	loaded      bool
	blob        BlobHandle
	blobTable   string
	blobPending bool
	valueBuf    []byte    // backward, newest-only: value's copy
	foldBuf     []byte    // forward: the first operand of a fold, copied
	edge        base.Edge // where the last move ran off the entries, when not valid
	err         error

	// rangeDels are opts.RangeDeletions visible at opts.Seq, fragmented:
	// each fragment's first seq is its newest visible one, and
	// rangeDelSource[i] the position of the iterator that holds fragment
	// i's. rangeDel is the fragment a lookup found last, which the next
	// entries of a walk most likely fall in too.
	rangeDels      rangedel.List
	rangeDelSource []int
	rangeDel       int
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
	if len(m.opts.RangeDeletions) > 0 {
		m.initRangeDels()
	}
	return m
}

// initRangeDels fragments the visible range tombstones and notes where
// each fragment's newest comes from.
func (m *MergingIterator) initRangeDels() {
	var visible []RangeTombstone
	source := map[uint64]int{} // seq -> the last iterator holding a tombstone at it
	for i, tombs := range m.opts.RangeDeletions {
		for _, t := range tombs {
			if t.Seq <= m.opts.Seq {
				visible = append(visible, t)
				source[t.Seq] = max(source[t.Seq], i)
			}
		}
	}
	m.opts.RangeDeletions = nil
	m.rangeDels = rangedel.Build(m.cmp, visible)
	m.rangeDelSource = make([]int, len(m.rangeDels))
	for i, f := range m.rangeDels {
		m.rangeDelSource[i] = source[f.Seqs[0]]
	}
}

// skipHidden moves the iterators older than the tombstone that hid the
// entry covered found last past the tombstone's fragment, in the walk's
// direction: everything of theirs it covers is older, and hidden too. An
// iterator that the fragment's open end leaves nothing leaves the heap.
// It reports false if a seek failed.
func (m *MergingIterator) skipHidden() bool {
	f, src := &m.rangeDels[m.rangeDel], m.rangeDelSource[m.rangeDel]
	items, moved := m.heap.items[:0], false
	for _, item := range m.heap.items {
		if item.rank > src {
			var ok, within bool
			switch key := item.it.Key(); {
			case !m.reverse && (len(f.End) == 0 || m.cmp(key, f.End) < 0):
				within, ok = true, len(f.End) > 0 && item.it.SeekGE(f.End)
			case m.reverse && (len(f.Start) == 0 || m.cmp(key, f.Start) >= 0):
				within, ok = true, len(f.Start) > 0 && item.it.SeekLT(f.Start)
			}
			if within {
				moved = true
				if !ok {
					if err := item.it.Err(); err != nil {
						return m.stop(err)
					}
					continue
				}
				item.note()
			}
		}
		items = append(items, item)
	}
	m.heap.items = items
	if moved {
		m.heap.init()
	}
	return true
}

// covered reports whether a range deletion hides the entry of key at seq.
func (m *MergingIterator) covered(key []byte, seq uint64) bool {
	if m.rangeDel >= len(m.rangeDels) || !m.rangeDels[m.rangeDel].Contains(m.cmp, key) {
		i := m.rangeDels.Find(m.cmp, key)
		if i < 0 {
			return false
		}
		m.rangeDel = i
	}
	return m.rangeDels[m.rangeDel].Seqs[0] > seq
}

// First moves to the first entry.
func (m *MergingIterator) First() bool {
	return m.reset(false, EntryIterator.First)
}

// Last moves to the last entry.
func (m *MergingIterator) Last() bool {
	return m.reset(true, EntryIterator.Last)
}

// SeekGE moves to the first entry at or after key.
func (m *MergingIterator) SeekGE(key []byte) bool {
	return m.reset(false, func(it EntryIterator) bool { return it.SeekGE(key) })
}

// SeekLT moves to the last entry before key: the newest visible version of
// the last key before it (without AllVersions), or that key's oldest
// visible entry (with).
func (m *MergingIterator) SeekLT(key []byte) bool {
	return m.reset(true, func(it EntryIterator) bool { return it.SeekLT(key) })
}

// reset positions every child and walks from there, backward if reverse.
func (m *MergingIterator) reset(reverse bool, position func(EntryIterator) bool) bool {
	m.reverse = reverse
	m.heap.items = m.heap.items[:0]
	for i, it := range m.children {
		if position(it) {
			m.heap.items = append(m.heap.items, newMergeItem(it, i))
		} else if err := it.Err(); err != nil {
			return m.stop(err)
		}
	}
	m.heap.init()
	return m.settle(nil)
}

// Next moves to the next entry. After a backward move that found no entry
// it moves to the first.
func (m *MergingIterator) Next() bool {
	if !m.valid || m.reverse {
		return m.step(false)
	}
	return m.advance()
}

// Prev moves to the previous entry. After a forward move that found no
// entry it moves to the last.
func (m *MergingIterator) Prev() bool {
	if !m.valid || !m.reverse {
		return m.step(true)
	}
	return m.advance()
}

// advance moves on from the entry shown, in the walk's direction.
func (m *MergingIterator) advance() bool {
	if !m.opts.AllVersions {
		// Skip the other versions of the key shown.
		return m.settle(m.key)
	}
	// The top child is at the entry shown.
	return m.advanceTop() && m.settle(nil)
}

// step is Next (reverse false) or Prev (true) off their fast path: it
// turns the walk around at the entry shown, or back from the end it ran
// off.
func (m *MergingIterator) step(reverse bool) bool {
	switch {
	case m.valid:
		if !m.turn() {
			return false
		}
		if !m.opts.AllVersions {
			return m.settle(m.key)
		}
		return m.settle(nil)
	case reverse && m.edge == base.EdgeEnd:
		return m.Last()
	case !reverse && m.edge == base.EdgeStart:
		return m.First()
	}
	return false
}

// turn reverses the walk at the entry shown, e. Each child in the heap is
// at its nearest entry beyond e in the walk's direction, the top child at e
// itself (unless the walk went backward without AllVersions: then every
// child is past e's key, see settleNewestBack); one step the other way
// puts it at its nearest entry on the other side of e (in that case, at
// e's key or beyond). A child not in the heap ran off the end ahead, so
// all of its entries lie behind e: it starts again from its end on that
// side.
func (m *MergingIterator) turn() bool {
	m.reverse = !m.reverse
	m.inHeap = slices.Grow(m.inHeap[:0], len(m.children))[:len(m.children)]
	clear(m.inHeap)
	for _, item := range m.heap.items {
		m.inHeap[item.rank] = true
	}
	m.heap.items = m.heap.items[:0]
	for i, it := range m.children {
		var ok bool
		switch {
		case m.inHeap[i] && m.reverse:
			ok = it.Prev()
		case m.inHeap[i]:
			ok = it.Next()
		case m.reverse:
			ok = it.Last()
		default:
			ok = it.First()
		}
		if ok {
			m.heap.items = append(m.heap.items, newMergeItem(it, i))
		} else if err := it.Err(); err != nil {
			return m.stop(err)
		}
	}
	m.heap.init()
	return true
}

// advanceTop moves the heap's top iterator on, in the walk's direction.
func (m *MergingIterator) advanceTop() bool {
	top := m.heap.items[0].it
	var ok bool
	if m.reverse {
		ok = top.Prev()
	} else {
		ok = top.Next()
	}
	if ok {
		m.heap.items[0].note()
		m.heap.down(0)
		return true
	}
	if err := top.Err(); err != nil {
		return m.stop(err)
	}
	m.heap.popTop()
	return true
}

// settle moves the top of the heap to the next entry to show, in the walk's
// direction: visible at opts.Seq, after skip (the key just shown, in
// newest-only mode), and not a tombstone when they are dropped. (An
// iterator that skipHidden moved past a range tombstone can come back, when
// the walk turns, to hidden entries on the far side of the key shown: the
// walk passes over them.)
func (m *MergingIterator) settle(skip []byte) bool {
	if m.reverse && !m.opts.AllVersions {
		return m.settleNewestBack(skip)
	}
	for len(m.heap.items) > 0 {
		item := &m.heap.items[0]
		top := item.it
		if seq := item.seq; seq <= m.opts.Seq && (skip == nil || m.cmp(item.key, skip) > 0) {
			kind := top.Kind()
			hidden := len(m.rangeDels) > 0 && m.covered(item.key, seq)
			if !hidden && (kind != KindDelete || !m.opts.DropTombstones) {
				m.key = append(m.key[:0], item.key...)
				if kind == KindMerge && m.opts.Fold != nil && !m.opts.AllVersions {
					return m.foldForward(seq, top.Value())
				}
				m.showFrom(seq, kind, top)
				return true
			}
			if !m.opts.AllVersions {
				// The key's newest visible entry is a tombstone or covered
				// by one: hide the key.
				m.key = append(m.key[:0], item.key...)
				skip = m.key
				if hidden {
					if !m.skipHidden() {
						return false
					}
					continue // the heap changed: look at its top again
				}
			}
		}
		if !m.advanceTop() {
			return false
		}
	}
	return m.ranOff()
}

// foldForward shows the key m.key, whose newest visible entry, at the top
// of the heap with seq, is the merge operand operand, folded with its
// older visible versions down to the first value, tombstone or entry a
// range deletion hides (see MergeOptions.Fold). It leaves the top at the
// entry that ended the fold, or past the key: settle skips the rest of
// its versions.
func (m *MergingIterator) foldForward(seq uint64, operand []byte) bool {
	acc, kind := append(m.foldBuf[:0], operand...), KindMerge
	for kind == KindMerge {
		if !m.advanceTop() {
			return false
		}
		if len(m.heap.items) == 0 {
			break
		}
		top := m.heap.items[0].it
		if m.cmp(top.Key(), m.key) != 0 {
			break
		}
		older := top.Seq()
		if older > m.opts.Seq {
			continue
		}
		if top.Kind() == KindDelete || len(m.rangeDels) > 0 && m.covered(m.key, older) {
			kind = KindSet // the operands, on nothing, are the value
			break
		}
		v, err := m.opts.Fold(m.key, top.Value(), acc)
		if err != nil {
			return m.stop(err)
		}
		acc = v
		if top.Kind() == KindSet {
			kind = KindSet
		}
	}
	if kind == KindMerge && m.underRangeDel() {
		kind = KindSet
	}
	m.foldBuf = acc
	m.show(seq, kind, acc)
	return true
}

// underRangeDel reports whether a visible range deletion covers m.key.
// Once the versions of a fold run out, one that does is older than every
// operand folded (or it would hide them), and hides every older version:
// the merge may have skipped them (see skipHidden), and the fold is
// complete.
func (m *MergingIterator) underRangeDel() bool {
	return len(m.rangeDels) > 0 && m.covered(m.key, 0)
}

// foldBack folds the merge operand newer, of the key m.key at seq, onto the
// visible version shown so far, which is older, in a backward walk (see
// settleNewestBack); found says whether there is one.
func (m *MergingIterator) foldBack(found bool, seq uint64, newer []byte) bool {
	switch {
	case !found && !m.underRangeDel(): // the versions ran out: data the merge does not see may lie under it
		m.show(seq, KindMerge, m.copyValue(newer))
		return true
	case !found, m.kind == KindDelete || len(m.rangeDels) > 0 && m.covered(m.key, m.seq):
		m.show(seq, KindSet, m.copyValue(newer)) // on a deletion: the operand is the value
		return true
	}
	older := m.loadValue()
	if m.err != nil {
		return false
	}
	v, err := m.opts.Fold(m.key, older, newer)
	if err != nil {
		return m.stop(err)
	}
	m.show(seq, m.kind, v)
	return true
}

// settleNewestBack is settle backward without AllVersions. The versions of
// a key come oldest first, and the newest visible one is the last visible
// one before the key changes: the merge reads every version of the key,
// keeping a copy of the newest visible so far, before it knows which to
// show or that the key is deleted. Every child is then past the key.
func (m *MergingIterator) settleNewestBack(skip []byte) bool {
	// The versions of skip come first, if any, or after a turn hidden
	// entries past it (see settle). (skip may be m.key, which the loop
	// below overwrites.)
	for skip != nil && len(m.heap.items) > 0 && m.cmp(m.heap.items[0].it.Key(), skip) >= 0 {
		if !m.advanceTop() {
			return false
		}
	}
	for len(m.heap.items) > 0 {
		top := m.heap.items[0].it
		m.key = append(m.key[:0], top.Key()...)
		found := false
		for {
			if seq := top.Seq(); seq <= m.opts.Seq {
				if kind := top.Kind(); kind == KindMerge && m.opts.Fold != nil {
					if !m.foldBack(found, seq, top.Value()) {
						return false
					}
				} else if !m.showBack(seq, kind, top) {
					return false
				}
				found = true
			}
			if !m.advanceTop() {
				return false
			}
			if len(m.heap.items) == 0 {
				break
			}
			if top = m.heap.items[0].it; m.cmp(top.Key(), m.key) != 0 {
				break
			}
		}
		hidden := found && len(m.rangeDels) > 0 && m.covered(m.key, m.seq)
		if found && (m.kind != KindDelete || !m.opts.DropTombstones) && !hidden {
			return true
		}
		m.valid = false
		if hidden && !m.skipHidden() {
			return false
		}
	}
	return m.ranOff()
}

// copyValue copies v into the merge's buffer; nil stays nil.
func (m *MergingIterator) copyValue(v []byte) []byte {
	if v == nil {
		return nil
	}
	m.valueBuf = append(m.valueBuf[:0], v...)
	return m.valueBuf
}

// show makes the entry of key m.key with seq, kind and value the one shown.
func (m *MergingIterator) show(seq uint64, kind Kind, value []byte) {
	m.valid, m.seq, m.kind, m.value = true, seq, kind, value
	m.from, m.blobPending = nil, false
}

// showFrom shows the entry of key m.key with seq and kind that child is
// at, whose value is read when asked for.
func (m *MergingIterator) showFrom(seq uint64, kind Kind, child EntryIterator) {
	m.show(seq, kind, nil)
	m.from, m.loaded = child, false
}

// showBack shows, backward, the entry child is at: its value's handle when
// the value lies in a blob file and the merge has Blobs to read it later,
// else a copy of it, which child's next move would overwrite.
func (m *MergingIterator) showBack(seq uint64, kind Kind, child EntryIterator) bool {
	if b, ok := child.(blobEntries); ok && m.opts.Blobs != nil && kind == KindSet {
		if h, ok := b.BlobHandle(); ok {
			m.show(seq, kind, nil)
			m.blob, m.blobTable, m.blobPending = h, b.BlobTable(), true
			return true
		}
	}
	v := child.Value()
	if v == nil {
		if err := child.Err(); err != nil {
			return m.stop(err)
		}
	}
	m.show(seq, kind, m.copyValue(v))
	return true
}

// loadValue returns the value of the entry shown, reading it where it was
// left to be read; a failure stops the merge, with the reason in Err.
func (m *MergingIterator) loadValue() []byte {
	switch {
	case m.from != nil && !m.loaded:
		m.value, m.loaded = m.from.Value(), true
		if m.value == nil {
			if err := m.from.Err(); err != nil {
				m.stop(err)
			}
		}
	case m.blobPending:
		m.blobPending = false
		err := readBlob(m.opts.Blobs, m.blob, &m.valueBuf, false, nil, func(v []byte) {
			m.valueBuf = append(m.valueBuf[:0], v...)
			m.value = m.valueBuf
		})
		if err != nil {
			m.stop(errs.Errorf("sstables: %s: key %q names a value in blob file %d: %w", m.blobTable, truncate(m.key), m.blob.FileNum, err))
		}
	}
	return m.value
}

// ranOff ends a move that found no entry, at the end it walked to.
func (m *MergingIterator) ranOff() bool {
	m.valid, m.edge = false, base.EdgeEnd
	if m.reverse {
		m.edge = base.EdgeStart
	}
	return false
}

func (m *MergingIterator) stop(err error) bool {
	m.valid, m.edge = false, base.NoEdge
	if m.err == nil {
		m.err = err
	}
	return false
}

// Valid reports whether the iterator is at an entry.
func (m *MergingIterator) Valid() bool { return m.valid }

// Key returns the current entry's key, or nil when the iterator is not
// valid (unpositioned, exhausted, failed or closed). The key is the
// iterator's buffer, not a copy: it must not be modified, because Next and
// Prev (unless AllVersions) compare the next entries with it to skip the
// other versions of the key, and it is valid only until the next move or
// Close.
func (m *MergingIterator) Key() []byte {
	// Every accessor checks valid: once the merge stops, key still holds
	// the last key shown.
	if !m.valid {
		return nil
	}
	return m.key
}

// Seq returns the current entry's sequence number, or 0 when the iterator
// is not valid.
func (m *MergingIterator) Seq() uint64 {
	if !m.valid {
		return 0
	}
	return m.seq
}

// Kind returns the current entry's kind. When the iterator is not valid it
// returns 0, which reads as KindDelete: check Valid, or the last move's
// result, first.
func (m *MergingIterator) Kind() Kind {
	if !m.valid {
		return 0
	}
	return m.kind
}

// Value returns the current entry's value, or nil when the iterator is not
// valid. Forward, and with AllVersions, it is the child iterator's Value,
// not a copy: the memory of a memstore or a table (see Iterator.Value).
// Backward without AllVersions it is the merge's copy, and for a folded
// key the fold's result. Either way it is not to be modified, and valid
// only until the next move or Close.
//
// A value that lies in a blob file is read now, not before, so that a
// scan of keys alone reads none; if it cannot be read, Value returns nil
// and stops the merge, with the reason in Err.
func (m *MergingIterator) Value() []byte {
	if !m.valid {
		return nil
	}
	return m.loadValue()
}

// BlobHandle returns the handle of the current entry's value when it lies
// in a blob file, without reading it (see Iterator.BlobHandle): forward,
// or backward with MergeOptions.Blobs.
func (m *MergingIterator) BlobHandle() (BlobHandle, bool) {
	switch {
	case !m.valid:
	case m.blobPending:
		return m.blob, true
	case m.from != nil:
		if b, ok := m.from.(blobEntries); ok {
			return b.BlobHandle()
		}
	}
	return BlobHandle{}, false
}

// BlobTable returns the name of the table whose entry BlobHandle gives.
func (m *MergingIterator) BlobTable() string {
	switch {
	case !m.valid:
	case m.blobPending:
		return m.blobTable
	case m.from != nil:
		if b, ok := m.from.(blobEntries); ok {
			return b.BlobTable()
		}
	}
	return ""
}

// Err returns the first error of any merged iterator.
func (m *MergingIterator) Err() error { return m.err }

// Close closes every merged iterator and returns the first error.
func (m *MergingIterator) Close() error {
	var errs []error
	for _, it := range m.children {
		errs = append(errs, it.Close())
	}
	m.children, m.heap.items, m.valid, m.edge = nil, nil, false, base.NoEdge
	return errors.Join(errs...)
}

// All returns the entries from the first on, for range loops; check Err
// after the loop (see Iterator.All). The slices are Key's and Value's: not
// to be modified, valid only until the loop's next iteration.
func (m *MergingIterator) All() iter.Seq2[[]byte, []byte] {
	return m.walk(m.First, false)
}

// Backward returns the entries from the last down, for range loops, on the
// terms of All.
func (m *MergingIterator) Backward() iter.Seq2[[]byte, []byte] {
	return m.walk(m.Last, true)
}

// walk is Iterator.walk's twin.
func (m *MergingIterator) walk(start func() bool, backward bool) iter.Seq2[[]byte, []byte] {
	return func(yield func([]byte, []byte) bool) {
		for ok := start(); ok; {
			k, v := m.Key(), m.Value()
			if !m.Valid() {
				return // the value, in a blob file, did not read: Err says why
			}
			if !yield(k, v) {
				return
			}
			if backward {
				ok = m.Prev()
			} else {
				ok = m.Next()
			}
		}
	}
}

type mergeItem struct {
	it   EntryIterator
	rank int // position among the children: lower is newer
	// key and seq are its child's position, noted after every move, so
	// that the heap's comparisons make no call through the interface
	// (through a level's iterator, a table's and its block's): they were
	// a third of a scan's time.
	key []byte
	seq uint64
}

func newMergeItem(it EntryIterator, rank int) mergeItem {
	item := mergeItem{it: it, rank: rank}
	item.note()
	return item
}

// note records the child's position after a move.
func (item *mergeItem) note() { item.key, item.seq = item.it.Key(), item.it.Seq() }

// mergeHeap orders the children by their positions, the walk's next
// entry on top. It is a binary heap written out rather than a
// container/heap.Interface: a scan moves the top once per entry, and the
// interface's calls to Less and Swap were a fifth of a scan's time.
type mergeHeap struct {
	m     *MergingIterator
	items []mergeItem
}

// init orders the items as a heap.
func (h *mergeHeap) init() {
	for i := len(h.items)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

// down moves item i down to where its children come after it.
func (h *mergeHeap) down(i int) {
	items := h.items
	for {
		c := 2*i + 1
		if c >= len(items) {
			return
		}
		if r := c + 1; r < len(items) && h.before(&items[r], &items[c]) {
			c = r
		}
		if !h.before(&items[c], &items[i]) {
			return
		}
		items[i], items[c] = items[c], items[i]
		i = c
	}
}

// popTop removes the top item.
func (h *mergeHeap) popTop() {
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items[last] = mergeItem{}
	h.items = h.items[:last]
	h.down(0)
}

// before reports whether a comes before b in the walk: the lesser entry
// forward, the greater backward; between equal entries, the newer child.
func (h *mergeHeap) before(a, b *mergeItem) bool {
	if c := compareInternal(h.m.cmp, a.key, a.seq, b.key, b.seq); c != 0 {
		return (c < 0) != h.m.reverse
	}
	return (a.rank < b.rank) != h.m.reverse
}
