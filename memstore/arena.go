package memstore

import (
	"sync/atomic"
	"unsafe"
)

const (
	// arenaChunkSize is the size to which the chunks of a stream grow.
	arenaChunkSize = 64 << 10
	// arenaFirstChunk is the size of a stream's first chunk; each further
	// chunk doubles, up to arenaChunkSize, so that a small memstore stays
	// small.
	arenaFirstChunk = 1 << 10
	// arenaLargeEntry is the size above which a node, or a value, gets an
	// allocation of its own: a chunk then wastes at most a quarter of
	// itself on a tail too short for the next one.
	arenaLargeEntry = arenaChunkSize / 4
)

// An addr locates bytes in the arena: the index of the allocation that
// holds them (a chunk, or a large node's or value's own) in the high 32
// bits, their offset in it in the low 32; 2^32 allocations are far more
// than memory holds. The zero addr is nowhere:
// allocation 0 holds the head, whose header is not at offset 0.
//
// Links hold addrs rather than pointers because chunks are []byte, which
// the garbage collector does not scan: a pointer stored there would keep
// nothing alive. In exchange, the garbage collector never scans a node
// either, and a memstore of any size costs it no work.
type addr uint64

// arena holds a memstore's nodes and values. Nodes go into one stream of
// chunks per class of height (see heightClass), values into a stream of
// their own; a node or value over arenaLargeEntry gets an allocation of its
// own. Inserting therefore costs no allocation most of the time, and memory
// is not lost, uncounted, to the size-class rounding of one allocation per
// entry. Memory is never freed piecemeal: the arena lives as long as the
// memstore. Only the writer allocates; a node and its value are written
// before the node is published, and only the node's links, and its value
// field when a fold gives it a new version (Memstore.ApplyMerge), change
// afterwards.
//
// Keeping nodes apart from values, and tall nodes apart from short ones,
// is for the searches: a search visits a few dozen nodes and reads a word
// or two of each, and it visits tall nodes far more often than short ones.
// Packed together, the nodes a search is likely to visit share cache lines
// and pages, so more of them are found in the caches and the TLB.
type arena struct {
	// table maps an allocation index to the allocation's first byte. The
	// writer publishes a new slice header after each allocation; readers
	// load it atomically, and load it again when they meet an addr beyond
	// the table they hold (see at). The pointers in it are what keep the
	// allocations alive.
	table atomic.Pointer[[]unsafe.Pointer]
	// allocated counts the bytes of every chunk, large node or value and
	// table array allocated, used or not. Readers load it without locking.
	allocated atomic.Int64

	// mem allocates outside the Go heap when it is not nil (see
	// Options.OffHeap).
	mem *offHeap

	// The rest belongs to the writer. bases is the table it last
	// published.
	bases  []unsafe.Pointer
	nodes  [numHeightClasses]stream
	values stream
	folds  stream // foldRecords (see Memstore.ApplyMerge)
}

// stream is a series of chunks that the writer fills in turn.
type stream struct {
	// free is the unused end of the current chunk, which starts at
	// offset off of allocation index.
	free  []byte
	index uint32
	off   int
	// next is the size of the next chunk; 0 before the first.
	next int
}

// init makes allocation 0 of an empty arena the head, a node with a tower
// of maxHeight links and an empty key, and returns its addr.
func (a *arena) init() addr {
	size := maxHeight*linkSize + headerSize + keyArea(0) + tailSize
	head := a.bytes(size)
	a.allocated.Add(int64(len(head)))
	return a.add(unsafe.Pointer(unsafe.SliceData(head)))<<32 | addr(maxHeight*linkSize)
}

// add appends an allocation to the table and publishes the table; it
// returns the allocation's index as the high half of an addr. Appending in
// place writes past the end of every table a reader holds, where readers
// never read.
func (a *arena) add(p unsafe.Pointer) addr {
	old := cap(a.bases)
	a.bases = append(a.bases, p)
	if grown := cap(a.bases); grown != old {
		a.allocated.Add(int64((grown - old) * int(unsafe.Sizeof(p))))
	}
	t := a.bases
	a.table.Store(&t)
	return addr(len(a.bases) - 1)
}

// alloc returns n zeroed bytes from s (from an allocation of their own when
// n is over arenaLargeEntry) and their addr. Every n that s is given must
// be a multiple of the alignment its bytes need.
func (a *arena) alloc(s *stream, n int) (addr, []byte) {
	if n > arenaLargeEntry {
		b := a.bytes(n)
		a.allocated.Add(int64(len(b)))
		return a.add(unsafe.Pointer(unsafe.SliceData(b))) << 32, b[:n:n]
	}
	if len(s.free) < n {
		if s.next == 0 {
			s.next = arenaFirstChunk
		}
		c := a.bytes(max(s.next, n))
		a.allocated.Add(int64(len(c)))
		s.free, s.index, s.off = c, uint32(a.add(unsafe.Pointer(unsafe.SliceData(c)))), 0
		s.next = min(2*s.next, arenaChunkSize)
	}
	b := s.free[:n:n]
	x := addr(s.index)<<32 | addr(s.off)
	s.free, s.off = s.free[n:], s.off+n
	return x, b
}

// bytes returns at least n zeroed bytes, all of them counted as
// allocated: from mem, rounded up to a multiple of 8 so that what follows
// stays aligned, or from the Go heap, rounded up to its size class.
func (a *arena) bytes(n int) []byte {
	if a.mem != nil {
		return a.mem.bytes((n + 7) &^ 7)
	}
	return heapBytes(n)
}

// newNode returns a new node of height, holding key and value with
// trailer, and its addr. Its links are zero.
func (a *arena) newNode(height int, key, value []byte, trailer uint64) (addr, *node) {
	tower := height * linkSize
	x, b := a.alloc(&a.nodes[heightClass(height)], tower+headerSize+keyArea(len(key))+tailSize)
	x += addr(tower)
	n := (*node)(unsafe.Pointer(&b[tower]))
	n.keyLen, n.valLen = uint32(len(key)), uint32(len(value))
	copy(n.key(), key)
	t := n.tail()
	t.trailer = trailer
	if len(value) > 0 {
		var v []byte
		t.value, v = a.alloc(&a.values, len(value))
		copy(v, value)
	}
	return x, n
}

// load returns the current table, for a reader to resolve addrs with.
func (a *arena) load() []unsafe.Pointer {
	return *a.table.Load()
}

// at returns the memory at x, which must not be 0, resolved through the
// reader's table t, and t, loaded again if it had to be. A reader meets an
// addr beyond t when the memory was allocated after it loaded t; the
// writer published the table that holds it before the link that led
// there, so loading the table again finds it.
func (a *arena) at(t []unsafe.Pointer, x addr) ([]unsafe.Pointer, unsafe.Pointer) {
	i := uint64(x >> 32)
	if i >= uint64(len(t)) {
		t = a.load()
	}
	return t, unsafe.Add(t[i], uint32(x))
}

// node returns the node at x, as at does.
func (a *arena) node(t []unsafe.Pointer, x addr) ([]unsafe.Pointer, *node) {
	t, p := a.at(t, x)
	return t, (*node)(p)
}
