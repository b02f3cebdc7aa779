package skiplist

import (
	"slices"
	"sync/atomic"
	"unsafe"
)

const (
	// maxHeight bounds the height of a tower. Each level holds half the
	// nodes of the one below, so searches stay logarithmic up to 2^24
	// (16M) keys and degrade gently beyond.
	maxHeight = 24

	// maxSlabBytes bounds the size of one slab of nodes; slabs grow
	// geometrically up to it, so a small map stays small.
	maxSlabBytes = 64 << 10
	// firstSlabNodes is the number of nodes in the first slab of each
	// height class.
	firstSlabNodes = 8
)

// A node holds one key and its value, followed in memory by its tower: the
// links to the next node at each of its levels, level 0 first. A node of
// height h is allocated as the first field of a towered node whose links
// array holds at least h links (see nodeAllocator), so the tower sits right
// after the abbreviation a search compares, often in the same cache line,
// and costs no pointer of its own. Nothing records a node's height: a search reaches a
// node at level l only through a link at level l, which proves the node has
// such a link.
type node[K, V any] struct {
	// replaced points at the value an Upsert stored in place of value; nil
	// until then. Readers load it atomically, so a value is replaced without
	// locking readers out.
	replaced atomic.Pointer[V]
	// value is the value given when the node was inserted. It is written
	// before the node is published and never changed afterwards.
	value V
	key   K
	// abbrev is the key's abbreviation, or 0 in a map without them.
	abbrev uint64
}

// towered is a node with room for L's links after it: the unit of
// allocation. Its links are reached through node.link, never by name.
type towered[K, V, L any] struct {
	node  node[K, V]
	links L
}

// link returns the node's link at level, which must be below its height.
func (n *node[K, V]) link(level int) *atomic.Pointer[node[K, V]] {
	// The links array of the towered node that n heads starts right after
	// n: the size of a struct is a multiple of its alignment, which is at
	// least a pointer's. The offset stays inside that towered node.
	return (*atomic.Pointer[node[K, V]])(unsafe.Add(unsafe.Pointer(n), unsafe.Sizeof(*n)+uintptr(level)*unsafe.Sizeof(atomic.Pointer[node[K, V]]{})))
}

// load returns the node's current value.
func (n *node[K, V]) load() V {
	if p := n.replaced.Load(); p != nil {
		return *p
	}
	return n.value
}

// nodeAllocator hands out nodes from slabs, so that inserting a key costs
// no allocation most of the time and no memory is lost to the rounding of
// many small allocations. Each height class has its own series of slabs:
// heights 1 to 4 exactly, then 5 and 6, 7 and 8, and 9 up to maxHeight,
// which share a class because they are rare. A node then carries 2.1 links
// on average, against the 2 of its height. Only the writer uses it.
type nodeAllocator[K, V any] struct {
	height1   slabs[towered[K, V, [1]atomic.Pointer[node[K, V]]]]
	height2   slabs[towered[K, V, [2]atomic.Pointer[node[K, V]]]]
	height3   slabs[towered[K, V, [3]atomic.Pointer[node[K, V]]]]
	height4   slabs[towered[K, V, [4]atomic.Pointer[node[K, V]]]]
	height6   slabs[towered[K, V, [6]atomic.Pointer[node[K, V]]]]
	height8   slabs[towered[K, V, [8]atomic.Pointer[node[K, V]]]]
	heightMax slabs[towered[K, V, [maxHeight]atomic.Pointer[node[K, V]]]]
	// allocated counts the bytes of every slab allocated so far. Readers
	// load it without locking.
	allocated atomic.Int64
}

// newNode returns a zeroed node with room for height links.
func (a *nodeAllocator[K, V]) newNode(height int) *node[K, V] {
	switch {
	case height == 1:
		return &a.height1.take(&a.allocated).node
	case height == 2:
		return &a.height2.take(&a.allocated).node
	case height == 3:
		return &a.height3.take(&a.allocated).node
	case height == 4:
		return &a.height4.take(&a.allocated).node
	case height <= 6:
		return &a.height6.take(&a.allocated).node
	case height <= 8:
		return &a.height8.take(&a.allocated).node
	default:
		return &a.heightMax.take(&a.allocated).node
	}
}

// slabs is a series of slabs of E, each twice the size of the one before,
// up to maxSlabBytes.
type slabs[E any] struct {
	// free is the unused remainder of the current slab.
	free []E
	// next is the number of elements in the next slab; 0 before the first.
	next int
}

// take returns a zeroed element, allocating a slab when the current one is
// used up and adding its size to allocated.
func (s *slabs[E]) take(allocated *atomic.Int64) *E {
	if len(s.free) == 0 {
		size := int(unsafe.Sizeof(*new(E)))
		if s.next == 0 {
			s.next = firstSlabNodes
		}
		// Grow rounds the capacity up to as many elements as the Go
		// allocator's size class holds; those are used and counted. The
		// rest of the class, shorter than one element, is neither: for
		// a map of 24-byte keys and empty values, whose tallest nodes
		// take 232 bytes, 192 bytes of the first 2 KiB slab, 112 bytes
		// (0.2%) of a full 64 KiB one.
		s.free = slices.Grow([]E(nil), s.next)
		s.free = s.free[:cap(s.free)]
		allocated.Add(int64(len(s.free) * size))
		s.next = min(2*s.next, max(1, maxSlabBytes/size))
	}
	e := &s.free[0]
	s.free = s.free[1:]
	return e
}
