package skiplist

import (
	"slices"
	"sync/atomic"
	"unsafe"
)

const (
	// maxHeight bounds the height of a tower. With a branching factor of 4
	// it leaves room for far more keys than fit in memory (4^19 ≈ 2.7e11).
	maxHeight = 20

	// maxSlabBytes bounds the size of one slab of nodes; slabs grow
	// geometrically up to it, so a small map stays small.
	maxSlabBytes = 64 << 10
	// firstSlabNodes is the number of nodes in a map's first slab.
	firstSlabNodes = 8
	// towerSlabPointers is the number of pointers in one slab of towers.
	towerSlabPointers = 512
)

// A node holds one key and its value. Its level-0 link is inline; a node of
// height h > 1 also points at h-1 further links carved out of a tower slab.
// Nothing records a node's height: a search reaches a node at level l only
// through a link at level l, which proves the node has such a link.
//
// Field order matters: the key and the level-0 link, which a search reads,
// sit next to each other, and the last field is never zero-sized, so a map
// whose V is struct{} pays no trailing padding.
type node[K, V any] struct {
	// value is the value given when the node was inserted. It is written
	// before the node is published and never changed afterwards.
	value V
	key   K
	// next is the level-0 link.
	next atomic.Pointer[node[K, V]]
	// upper is the first of the links for levels 1 to h-1, which lie
	// contiguously in a tower slab; nil for a node of height 1.
	upper *atomic.Pointer[node[K, V]]
	// replaced points at the value an Upsert stored in place of value; nil
	// until then. Readers load it atomically, so a value is replaced without
	// locking readers out.
	replaced atomic.Pointer[V]
}

// link returns the node's link at level, which must be below its height.
func (n *node[K, V]) link(level int) *atomic.Pointer[node[K, V]] {
	if level == 0 {
		return &n.next
	}
	// upper addresses the first element of a slab slice holding at least
	// the node's height-1 links, so the offset stays inside that slice.
	return (*atomic.Pointer[node[K, V]])(unsafe.Add(unsafe.Pointer(n.upper), uintptr(level-1)*unsafe.Sizeof(n.next)))
}

// load returns the node's current value.
func (n *node[K, V]) load() V {
	if p := n.replaced.Load(); p != nil {
		return *p
	}
	return n.value
}

// slabAllocator hands out nodes and towers from slabs, so that inserting a
// key costs no allocation most of the time and no memory is lost to the
// rounding of many small allocations. Only the writer uses it.
type slabAllocator[K, V any] struct {
	// nodes and towers are the unused remainders of the current slabs.
	nodes  []node[K, V]
	towers []atomic.Pointer[node[K, V]]
	// nextSlabNodes is the number of nodes the next node slab holds.
	nextSlabNodes int
	// allocated counts the bytes of every slab allocated so far. Readers
	// load it without locking.
	allocated atomic.Int64
}

// newNode returns a zeroed node of the given height.
func (a *slabAllocator[K, V]) newNode(height int) *node[K, V] {
	if len(a.nodes) == 0 {
		a.nodes = newSlab[node[K, V]](a.nextSlabNodes, &a.allocated)
		a.nextSlabNodes = min(2*a.nextSlabNodes, max(1, maxSlabBytes/int(unsafe.Sizeof(a.nodes[0]))))
	}
	n := &a.nodes[0]
	a.nodes = a.nodes[1:]
	if height > 1 {
		if len(a.towers) < height-1 {
			// The remainder of the old slab is lost; it is counted in
			// allocated all the same.
			a.towers = newSlab[atomic.Pointer[node[K, V]]](towerSlabPointers, &a.allocated)
		}
		n.upper = &a.towers[0]
		a.towers = a.towers[height-1:]
	}
	return n
}

// newSlab allocates a slab of at least n elements and adds its size to
// allocated. The slab's capacity is rounded up to the Go allocator's size
// class, so allocated counts the memory really taken.
func newSlab[E any](n int, allocated *atomic.Int64) []E {
	s := slices.Grow([]E(nil), n)
	s = s[:cap(s)]
	allocated.Add(int64(len(s)) * int64(unsafe.Sizeof(s[0])))
	return s
}
