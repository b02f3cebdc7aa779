package memstore

import (
	"bytes"
	"sync/atomic"
	"unsafe"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/bloom"
)

// Folder says how ApplyMerge folds an operand into the newest version of
// its key.
type Folder struct {
	// Merge combines older, a value or an operand, with newer, an operand
	// written after it, into new memory; it must be associative. An error
	// leaves the operand unfolded.
	Merge func(key, older, newer []byte) ([]byte, error)
	// Above: only a version with a sequence number above it takes the
	// fold. A database passes the newest sequence number any snapshot of
	// it reads at, so that no snapshot needs the version the fold
	// replaces once the memstore is flushed.
	Above uint64
}

// ApplyMerge writes the merge operand at sequence number seq, as Apply
// does, but folds it into the newest version of key when it can: when the
// memstore holds a version of key numbered above f.Above, no range
// tombstone of the memstore came after it, and f.Merge succeeds. The key
// then keeps one entry, which reads at seq or above see as the fold (a
// value, or onto an operand an operand), and reads below seq as it was:
// a fold adds a small record to the entry rather than an entry to the
// index, so a hot counter keeps the index small and its searches short.
// A flush writes the fold alone, at seq. It reports whether it folded.
func (m *Memstore) ApplyMerge(seq uint64, key, operand []byte, f Folder) (folded bool, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := validate(KindMerge, key, operand); err != nil {
		return false, err
	}
	if err := m.checkSeq(seq); err != nil {
		return false, err
	}
	// The key's newest entry takes the fold: found without a search if
	// the key is hot, else by the search that also places the operand,
	// numbered above every version, right before it if it does not fold.
	trailer, h := base.MakeTrailer(seq, KindMerge), bloom.Hash(key)
	m.wrote()
	n := m.list.newestOf(key, h)
	folded = n != nil && m.fold(n, seq, key, operand, f)
	if !folded {
		var preds [maxHeight]addr
		next, x := m.list.position(key, trailer, &preds)
		folded = n == nil && next != nil && bytes.Equal(next.key(), key) && m.fold(next, seq, key, operand, f)
		if folded {
			m.list.noteNewest(next, x, h)
		} else {
			m.list.insertAt(key, operand, trailer, &preds, h)
		}
	}
	m.lastSeq.Store(seq)
	return folded, nil
}

// fold folds operand into n, the newest version of key, if it may (see
// ApplyMerge). The caller holds mu.
func (m *Memstore) fold(n *node, seq uint64, key, operand []byte, f Folder) bool {
	if f.Merge == nil {
		return false
	}
	a := &m.list.arena
	if _, depth := a.stackDepth(a.bases, n); depth > 0 {
		return false // a stack's versions are entries, which a fold would sum twice
	}
	t, newest, _ := a.version(a.bases, n, MaxSeq)
	below := base.TrailerSeq(newest.trailer)
	if below <= f.Above || m.rangeDelSeq(key, seq) > below {
		return false
	}
	kind := KindSet
	var value []byte
	switch base.TrailerKind(newest.trailer) {
	case KindDelete:
		value = operand // onto nothing: the operand is the value
	case KindMerge:
		kind = KindMerge
		fallthrough
	default:
		_, older := a.bytesOf(t, n, newest)
		var err error
		if value, err = f.Merge(key, older, operand); err != nil {
			return false
		}
	}
	a.addVersion(n, base.MakeTrailer(seq, kind), value, 0)
	return true
}

// foldRecord is a version of a node's key that a fold or a stack left: the
// node's value field then holds foldTag | the addr of the newest record,
// and each record links to the version below it. The oldest record is the
// node's own first version, moved there by the first fold or stack.
//
// A node's records are all a fold's (stack 0), each taking in the one below
// it, or all a stack's (stack > 0, the record's depth, 1 for the oldest),
// each a version of its own (see Memstore.Apply). The raw view shows one
// version of a fold's node, and every version of a stack's.
type foldRecord struct {
	trailer uint64
	prev    addr // 0: the oldest
	value   addr
	valLen  uint32
	stack   uint32
}

// foldTag marks a node's value field as the addr of a foldRecord.
const foldTag addr = 1 << 63

var foldRecordSize = int(unsafe.Sizeof(foldRecord{}))

// version is one version of a node's key: its own, or a fold's.
type version struct {
	trailer uint64
	value   addr
	valLen  uint32
}

func (v version) seq() uint64 { return base.TrailerSeq(v.trailer) }
func (v version) kind() Kind  { return base.TrailerKind(v.trailer) }

// valueField is n's value field, which a fold changes while readers read.
func (n *node) valueField() *atomic.Uint64 {
	return (*atomic.Uint64)(unsafe.Pointer(&n.tail().value))
}

// version returns the newest version of n at or below seq, resolved
// through t as at does; the oldest if none is (a node is visible at seq
// only if its oldest version is). rec is the version's record, 0 for a
// node without records.
func (a *arena) version(t []unsafe.Pointer, n *node, seq uint64) (_ []unsafe.Pointer, v version, rec addr) {
	x := addr(n.valueField().Load())
	if x&foldTag == 0 {
		return t, version{trailer: n.tail().trailer, value: x, valLen: n.valLen}, 0
	}
	x &^= foldTag
	for {
		var r *foldRecord
		t, r = a.record(t, x)
		if base.TrailerSeq(r.trailer) <= seq || r.prev == 0 {
			return t, r.version(), x
		}
		x = r.prev
	}
}

// record returns the record at x, resolved through t as at does.
func (a *arena) record(t []unsafe.Pointer, x addr) ([]unsafe.Pointer, *foldRecord) {
	t, p := a.at(t, x)
	return t, (*foldRecord)(p)
}

func (r *foldRecord) version() version {
	return version{trailer: r.trailer, value: r.value, valLen: r.valLen}
}

// stackDepth returns the depth of n's newest record if n holds a stack, 0
// if it holds a fold's records or none, resolved through t as at does.
func (a *arena) stackDepth(t []unsafe.Pointer, n *node) ([]unsafe.Pointer, int) {
	x := addr(n.valueField().Load())
	if x&foldTag == 0 {
		return t, 0
	}
	t, r := a.record(t, x&^foldTag)
	return t, int(r.stack)
}

// bytesOf returns the value of v, a version of n: nil for a tombstone, an
// empty, non-nil slice for an empty value, with capacity its length.
func (a *arena) bytesOf(t []unsafe.Pointer, n *node, v version) ([]unsafe.Pointer, []byte) {
	if v.kind() == KindDelete {
		return t, nil
	}
	if v.valLen == 0 {
		// Slicing keeps the pointer inside the node.
		return t, n.key()[n.keyLen:]
	}
	t, p := a.at(t, v.value)
	return t, unsafe.Slice((*byte)(p), v.valLen)
}

// addVersion makes (trailer, value) n's newest version, a record at depth
// stack of a stack (see foldRecord), or with stack 0 a fold. The caller is
// the writer; readers see the node as before until the store of its value
// field, and the new version from then, at sequence numbers from its own.
func (a *arena) addVersion(n *node, trailer uint64, value []byte, stack int) {
	prev := addr(n.valueField().Load())
	if prev&foldTag == 0 {
		// The first fold or stack: the node's own version becomes the
		// oldest record.
		prev = a.newFoldRecord(version{trailer: n.tail().trailer, value: prev, valLen: n.valLen}, 0, min(stack, 1))
	}
	var v version
	v.trailer, v.valLen = trailer, uint32(len(value))
	if len(value) > 0 {
		var b []byte
		v.value, b = a.alloc(&a.values, len(value))
		copy(b, value)
	}
	n.valueField().Store(uint64(a.newFoldRecord(v, prev&^foldTag, stack) | foldTag))
}

// newFoldRecord writes a record of v over prev and returns its addr.
func (a *arena) newFoldRecord(v version, prev addr, stack int) addr {
	x, b := a.alloc(&a.folds, foldRecordSize)
	r := (*foldRecord)(unsafe.Pointer(unsafe.SliceData(b)))
	r.trailer, r.prev, r.value, r.valLen, r.stack = v.trailer, prev, v.value, v.valLen, uint32(stack)
	return x
}
