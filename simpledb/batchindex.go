package simpledb

import (
	"cmp"
	"slices"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/rangedel"
	"github.com/stratadb/strata/memstore"
	"github.com/stratadb/strata/sstables"
)

// smallIndex is how many writes a batch index keeps in a sorted slice
// before it moves them to a memstore. Most transactions write a handful of
// keys: a memstore's arena and head cost them about 4 KB and a fifth of
// their time (BenchmarkSimpleDBCounter's transactions), a slice almost
// nothing; past a few dozen writes the slice's inserts, which move its
// tail, would cost more than a memstore's.
const smallIndex = 32

// batchIndex is an indexed batch's writes, readable by key and in key
// order: a sorted slice while they are few, a memstore after. Both live in
// the Go heap, never unmapped or reused: a slice read from them, or an
// iterator over them, stays valid however the batch changes after (Reset
// drops the index for a new one), which is what lets a transaction's
// iterators outlive its later writes.
type batchIndex struct {
	comp *sstables.Comparator
	// entries are the writes, sorted by key and then newest first, and
	// tombs the range deletions, until mem takes them over.
	entries []indexEntry
	tombs   []rangedel.Tombstone
	buf     []byte // holds the entries' keys and values, and the tombs' bounds
	mem     *memstore.Memstore
	lastSeq uint64
}

// indexEntry is one write of a batch index.
type indexEntry struct {
	key, value []byte
	seq        uint64
	kind       base.Kind
}

func newBatchIndex(c *sstables.Comparator) *batchIndex {
	return &batchIndex{comp: c}
}

// apply adds a write at seq, above every earlier one: a range deletion's
// key and value are its start and end, nil or empty where open.
func (x *batchIndex) apply(seq uint64, kind base.Kind, key, value []byte) error {
	if x.mem == nil && len(x.entries)+len(x.tombs) >= smallIndex {
		if err := x.grow(); err != nil {
			return err
		}
	}
	x.lastSeq = seq
	if x.mem != nil {
		return x.mem.Apply(seq, kind, key, value)
	}
	if kind == base.KindRangeDelete {
		x.tombs = append(x.tombs, rangedel.Tombstone{Start: x.keep(key), End: x.keep(value), Seq: seq})
		return nil
	}
	e := indexEntry{key: x.keep(key), seq: seq, kind: kind}
	if kind != base.KindDelete {
		e.value = x.keep(value)
	}
	// Before the key's older versions: at the first entry at or after key.
	x.entries = slices.Insert(x.entries, x.search(x.entries, key), e)
	return nil
}

// keep returns a copy of b in the index's buffer, nil for nil. Slices
// handed out stay valid when the buffer grows: they keep its old array.
func (x *batchIndex) keep(b []byte) []byte {
	if b == nil {
		return nil
	}
	at := len(x.buf)
	x.buf = append(x.buf, b...)
	return x.buf[at:len(x.buf):len(x.buf)]
}

// grow moves the writes to a memstore, in the order they were made.
func (x *batchIndex) grow() error {
	m := memstore.New(&memstore.Options{Comparator: x.comp})
	type write struct {
		seq        uint64
		kind       base.Kind
		key, value []byte
	}
	writes := make([]write, 0, len(x.entries)+len(x.tombs))
	for _, e := range x.entries {
		writes = append(writes, write{e.seq, e.kind, e.key, e.value})
	}
	for _, t := range x.tombs {
		writes = append(writes, write{t.Seq, base.KindRangeDelete, t.Start, t.End})
	}
	slices.SortFunc(writes, func(a, b write) int { return cmp.Compare(a.seq, b.seq) })
	for _, w := range writes {
		if err := m.Apply(w.seq, w.kind, w.key, w.value); err != nil {
			return err
		}
	}
	x.mem, x.entries, x.tombs, x.buf = m, nil, nil, nil
	return nil
}

// get returns key's newest write, as memstore.Memstore.Get does.
func (x *batchIndex) get(key []byte) ([]byte, memstore.Result) {
	if x.mem != nil {
		return x.mem.Get(key)
	}
	var tomb uint64 // the newest range deletion of key
	for _, t := range x.tombs {
		if t.Seq > tomb && (len(t.Start) == 0 || x.comp.Compare(t.Start, key) <= 0) && (len(t.End) == 0 || x.comp.Compare(key, t.End) < 0) {
			tomb = t.Seq
		}
	}
	i := x.search(x.entries, key)
	switch found := i < len(x.entries) && x.comp.Compare(x.entries[i].key, key) == 0; {
	case !found || x.entries[i].seq < tomb:
		if tomb > 0 {
			return nil, memstore.Deleted
		}
		return nil, memstore.Absent
	case x.entries[i].kind == base.KindDelete:
		return nil, memstore.Deleted
	case x.entries[i].kind == base.KindMerge:
		return x.entries[i].value, memstore.Merge
	}
	return x.entries[i].value, memstore.Found
}

// child returns an iterator over the writes so far within the bounds, for a
// merge over the database, and the range deletions among them: later
// writes to the index do not show in it.
func (x *batchIndex) child(lower, upper []byte) (sstables.EntryIterator, []rangedel.Tombstone) {
	if x.mem != nil {
		it := x.mem.NewEntryIterator(&memstore.IterOptions{LowerBound: lower, UpperBound: upper, Seq: x.lastSeq})
		return it, rangedel.List(x.mem.RangeDeletions()).Newest(x.comp.Compare, nil, x.lastSeq, lower, upper)
	}
	from, to := 0, len(x.entries)
	if lower != nil {
		from = x.search(x.entries, lower)
	}
	if upper != nil {
		to = x.search(x.entries, upper)
	}
	it := &indexIter{search: x.search, entries: slices.Clone(x.entries[from:max(from, to)])}
	return it, rangedel.Build(x.comp.Compare, x.tombs).Newest(x.comp.Compare, nil, x.lastSeq, lower, upper)
}

// search returns the index of the first of entries at or after key.
func (x *batchIndex) search(entries []indexEntry, key []byte) int {
	i, _ := slices.BinarySearchFunc(entries, key, func(e indexEntry, k []byte) int { return x.comp.Compare(e.key, k) })
	return i
}

// indexIter is an EntryIterator over a small index's entries.
type indexIter struct {
	search  func(entries []indexEntry, key []byte) int
	entries []indexEntry
	pos     int
}

func (it *indexIter) First() bool { it.pos = 0; return it.Valid() }
func (it *indexIter) Last() bool  { it.pos = len(it.entries) - 1; return it.Valid() }
func (it *indexIter) Next() bool  { it.pos++; return it.Valid() }
func (it *indexIter) Prev() bool  { it.pos--; return it.Valid() }

func (it *indexIter) SeekGE(key []byte) bool { it.pos = it.search(it.entries, key); return it.Valid() }
func (it *indexIter) SeekLT(key []byte) bool {
	it.pos = it.search(it.entries, key) - 1
	return it.Valid()
}

func (it *indexIter) Valid() bool { return it.pos >= 0 && it.pos < len(it.entries) }

// The accessors return zero values off the entries, as the memstore's do.
func (it *indexIter) Key() []byte {
	if !it.Valid() {
		return nil
	}
	return it.entries[it.pos].key
}

func (it *indexIter) Seq() uint64 {
	if !it.Valid() {
		return 0
	}
	return it.entries[it.pos].seq
}

func (it *indexIter) Kind() base.Kind {
	if !it.Valid() {
		return 0
	}
	return it.entries[it.pos].kind
}

func (it *indexIter) Value() []byte {
	if !it.Valid() {
		return nil
	}
	return it.entries[it.pos].value
}

func (it *indexIter) Err() error   { return nil }
func (it *indexIter) Close() error { return nil }
