package memstore

import (
	"bytes"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/bloom"
	"github.com/stratadb/strata/internal/rangedel"
)

// Kind says what an entry holds: a value (KindSet), a tombstone
// (KindDelete) or a merge operand (KindMerge).
type Kind = base.Kind

const (
	// KindSet marks a value, possibly empty.
	KindSet = base.KindSet
	// KindDelete marks a tombstone.
	KindDelete = base.KindDelete
	// KindMerge marks a merge operand. A memstore keeps it as it keeps a
	// value; folding operands is its reader's business (see GetAt).
	KindMerge = base.KindMerge
	// KindRangeDelete marks a range tombstone, for Apply: the key is the
	// range's start and the value its end.
	KindRangeDelete = base.KindRangeDelete
)

// RangeFragment is a piece [Start, End) of the memstore's range deletions
// and the sequence numbers, newest first, of the tombstones covering all
// of it. An empty Start or End leaves that side unbounded.
type RangeFragment = rangedel.Fragment

// MaxSeq is the largest sequence number.
const MaxSeq = base.MaxSeq

const (
	// MaxKeySize is the largest key, in bytes: 64 KiB, the limit of every
	// layer.
	MaxKeySize = base.MaxKeySize
	// MaxValueSize is the largest value, in bytes.
	MaxValueSize = 256 << 20
)

// Memstore is an in-memory, multi-version sorted store of keys and values:
// the write buffer of an LSM tree. Writes are safe for concurrent use and
// serialised internally; reads never wait for them. See the package comment.
type Memstore struct {
	// mu serialises writers: it guards the list's writer side.
	mu      sync.Mutex
	list    list
	lastSeq atomic.Uint64
	// rangeDels holds the range tombstones, fragmented, apart from the
	// entries: they are few, and a point read asks them which tombstone
	// covers its key. The writer replaces the list, copied with the new
	// tombstone, so readers load it without a lock. rangeDelBytes is its
	// size, which SizeBytes counts.
	rangeDels     atomic.Pointer[rangedel.List]
	rangeDelBytes atomic.Int64
	// writes counts the writes, up to newestAfter; the writer's.
	writes int
}

// New returns an empty memstore. A nil opts selects the defaults.
func New(opts *Options) *Memstore {
	var o Options
	if opts != nil {
		o = *opts
	}
	m := &Memstore{}
	if o.OffHeap {
		mem := &offHeap{}
		m.list.arena.mem = mem
		runtime.AddCleanup(m, (*offHeap).release, mem)
	}
	m.list.init(o.Seed, o.Comparator)
	return m
}

// Release frees the memory of a memstore created with Options.OffHeap at
// once, rather than when the garbage collector finds the memstore
// unreachable. The caller must know that nothing reads the memstore, or
// any slice a read of it returned, any more, and that nothing can start
// to: such a read would fault. The owner that calls it is the one that
// hands out access (a count of references, say), and releases when the
// last access is given back. A memstore in the Go heap ignores it.
// Release may be called more than once.
func (m *Memstore) Release() {
	if mem := m.list.arena.mem; mem != nil {
		mem.release()
	}
}

// Put sets key to value at sequence number LastSeq()+1. It copies key and
// value. A nil or empty value is stored as an empty value, distinct from a
// deletion.
func (m *Memstore) Put(key, value []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.writeLocked(m.lastSeq.Load()+1, KindSet, key, value)
}

// Delete writes a tombstone for key at sequence number LastSeq()+1.
func (m *Memstore) Delete(key []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.writeLocked(m.lastSeq.Load()+1, KindDelete, key, nil)
}

// DeleteRange writes a range tombstone at sequence number LastSeq()+1: it
// deletes every version written before it of every key in [start, end).
// An empty start or end leaves that side unbounded; a start not before end
// is ErrBadRangeDel. Its cost grows with the number of range tombstones the
// memstore holds (see the package comment), not with the keys it covers.
func (m *Memstore) DeleteRange(start, end []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.writeLocked(m.lastSeq.Load()+1, KindRangeDelete, start, end)
}

// Apply writes an entry of the given kind at the caller's sequence number
// seq, which must be above LastSeq() and at most MaxSeq: it is how a
// database replays and applies batches whose sequence numbers it assigned.
// It copies key and value; for KindDelete, value is ignored; for
// KindRangeDelete, key is the range's start and value its end, as
// DeleteRange takes them.
func (m *Memstore) Apply(seq uint64, kind Kind, key, value []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.writeLocked(seq, kind, key, value)
}

// writeLocked checks a write and adds its entry at seq. Every write goes
// through it, so there is one place that checks sequence numbers. The
// caller holds mu, so that LastSeq() cannot change between the caller's
// choice of seq and the check.
func (m *Memstore) writeLocked(seq uint64, kind Kind, key, value []byte) error {
	if kind == KindRangeDelete {
		return m.deleteRangeLocked(seq, key, value)
	}
	if err := validate(kind, key, value); err != nil {
		return err
	}
	if kind == KindDelete {
		value = nil
	}
	if err := m.checkSeq(seq); err != nil {
		return err
	}
	// The new version goes on the stack of the key's newest entry if
	// there is room, found without a search if the key is hot; else
	// right before that entry.
	trailer, h := base.MakeTrailer(seq, kind), bloom.Hash(key)
	m.wrote()
	if n := m.list.newestOf(key, h); n == nil || !m.stack(n, key, value, trailer) {
		var preds [maxHeight]addr
		next, x := m.list.position(key, trailer, &preds)
		switch {
		case n != nil: // n is next, and took no stack
			m.list.insertAt(key, value, trailer, &preds, h)
		case m.stack(next, key, value, trailer):
			m.list.noteNewest(next, x, h)
		default:
			m.list.insertAt(key, value, trailer, &preds, h)
		}
	}
	// Publish the sequence number after the entry, so that a reader that
	// sees LastSeq() finds every entry up to it.
	m.lastSeq.Store(seq)
	return nil
}

// maxStack bounds the versions a stack holds: a read at an old sequence
// number walks at most that many records, below a search that finds the
// right entry among the key's.
const maxStack = 32

// stack adds (trailer, value) to the versions of n, the key's newest entry
// (nil: the key has none), and reports whether it could: when n holds no
// fold (see ApplyMerge) and fewer than maxStack versions. A hot key then
// grows its entry, not the index: the searches of every read and write of
// it stay short, where thousands of entries of one key would make each a
// walk through cold memory. The caller holds mu.
func (m *Memstore) stack(n *node, key, value []byte, trailer uint64) bool {
	if n == nil || !bytes.Equal(n.key(), key) {
		return false
	}
	a := &m.list.arena
	_, depth := a.stackDepth(a.bases, n)
	if depth == 0 && addr(n.valueField().Load())&foldTag != 0 || depth >= maxStack {
		return false
	}
	a.addVersion(n, trailer, value, max(depth, 1)+1)
	m.list.length.Add(1)
	return true
}

// checkSeq checks that seq may follow LastSeq.
func (m *Memstore) checkSeq(seq uint64) error {
	last := m.lastSeq.Load()
	switch {
	case seq <= last:
		return errs.Errorf("%w: sequence number %d, last %d", ErrSeqNotIncreasing, seq, last)
	case seq > MaxSeq:
		return errs.Errorf("%w: sequence number %d, MaxSeq %d", ErrSeqTooLarge, seq, MaxSeq)
	}
	return nil
}

// deleteRangeLocked adds a range tombstone at seq. The caller holds mu.
func (m *Memstore) deleteRangeLocked(seq uint64, start, end []byte) error {
	t := rangedel.Tombstone{Start: bytes.Clone(start), End: bytes.Clone(end), Seq: seq}
	if err := rangedel.Check(m.list.keyCompare(), t); err != nil {
		return err
	}
	if err := m.checkSeq(seq); err != nil {
		return err
	}
	var l rangedel.List
	if p := m.rangeDels.Load(); p != nil {
		l = *p
	}
	l = l.Add(m.list.keyCompare(), t)
	m.rangeDels.Store(&l)
	m.rangeDelBytes.Store(int64(l.Size()))
	m.lastSeq.Store(seq)
	return nil
}

// RangeDeletions returns the memstore's range deletions, fragmented:
// sorted, disjoint, each with the sequence numbers of the tombstones that
// cover it. The slice is a snapshot that later writes do not change; it and
// its keys must not be modified.
func (m *Memstore) RangeDeletions() []RangeFragment {
	if p := m.rangeDels.Load(); p != nil {
		return *p
	}
	return nil
}

// rangeDelSeq returns the sequence number of the newest range tombstone at
// or below seq that covers key, or 0.
func (m *Memstore) rangeDelSeq(key []byte, seq uint64) uint64 {
	p := m.rangeDels.Load()
	if p == nil {
		return 0
	}
	return p.SeqAt(m.list.keyCompare(), key, seq)
}

// validate checks a write's arguments.
func validate(kind Kind, key, value []byte) error {
	if err := base.CheckKind(kind); err != nil {
		return err
	}
	if err := base.CheckKey(key); err != nil {
		return err
	}
	if kind != KindDelete && len(value) > MaxValueSize {
		return errs.Errorf("%w: %d bytes, the limit is %d", ErrValueTooLarge, len(value), MaxValueSize)
	}
	return nil
}

// Get returns the newest entry of key: its value and Found, or nil and
// Deleted for a tombstone or a range tombstone newer than every entry of
// key, or nil and Absent. The value is the stored
// entry's, not a copy (see Iterator.Key): it must not be modified, and
// stays valid.
func (m *Memstore) Get(key []byte) ([]byte, Result) {
	return m.GetAt(key, MaxSeq)
}

// GetAt is Get as of sequence number seq: it returns the newest entry of
// key whose sequence number is at most seq, ignoring later writes. It is how
// a snapshot reads.
func (m *Memstore) GetAt(key []byte, seq uint64) ([]byte, Result) {
	return m.GetAtHash(key, bloom.Hash(key), seq)
}

// GetAtHash is GetAt for a key whose hash the caller has computed: the
// XXH64 hash of key, which sstables.HashKey returns too, so that a read
// across memstores and tables hashes the key once. The memory of hot keys'
// entries answers with it; another hash may miss the key's entry there,
// and search for it.
func (m *Memstore) GetAtHash(key []byte, hash, seq uint64) ([]byte, Result) {
	// A hot key's newest entry holds the version if it is not too new
	// for seq; else the search finds the entry that does.
	n := m.list.newestOf(key, hash)
	same := n != nil && n.seq() <= seq
	if !same {
		n, same = m.list.find(key, seekTrailer(seq), nil)
	}
	var ver version
	var t []unsafe.Pointer
	if same {
		t, ver, _ = m.list.arena.version(m.list.arena.load(), n, seq)
	}
	if tomb := m.rangeDelSeq(key, seq); tomb > 0 && (!same || ver.seq() < tomb) {
		return nil, Deleted
	}
	if !same {
		return nil, Absent
	}
	kind := ver.kind()
	if kind == KindDelete {
		return nil, Deleted
	}
	_, v := m.list.arena.bytesOf(t, n, ver)
	if kind == KindMerge {
		return v, Merge
	}
	return v, Found
}

// Len returns the number of entries held: every version of every key,
// tombstones included, range tombstones not.
func (m *Memstore) Len() int {
	return int(m.list.length.Load())
}

// SizeBytes returns the memory the memstore holds: the arena chunks that
// hold its entries (whole chunks, used or not), the allocations of large
// entries, the table that addresses them, the range deletions and the
// memory of hot keys' entries. It is what a database compares with its
// flush threshold.
func (m *Memstore) SizeBytes() int64 {
	size := m.list.arena.allocated.Load() + m.rangeDelBytes.Load()
	if m.list.newest.Load() != nil {
		size += int64(unsafe.Sizeof(newestTable{}))
	}
	return size
}

// LastSeq returns the sequence number of the latest write, 0 for an empty
// memstore.
func (m *Memstore) LastSeq() uint64 {
	return m.lastSeq.Load()
}
