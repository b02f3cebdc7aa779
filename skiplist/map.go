package skiplist

import (
	"bytes"
	"cmp"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
)

// pcgStream is the second half of the PCG state; Options.Seed is the first.
const pcgStream = 0x9e3779b97f4a7c15

// Map is an ordered map from K to V. One writer at a time may call Insert and
// Upsert while any number of goroutines read it with Get, Ceiling, Len,
// AllocatedBytes and iterators, without locks; see the package comment for
// the exact guarantees.
type Map[K, V any] struct {
	cmp func(a, b K) int
	// abbreviate, when not nil, gives every key an abbreviation that the
	// node keeps and a search compares before it calls cmp.
	abbreviate func(K) uint64
	head       *node[K, V]
	// height is the number of levels in use; only the writer raises it.
	height atomic.Int32
	length atomic.Int64
	// heights and alloc belong to the writer.
	heights rand.PCG
	alloc   nodeAllocator[K, V]
}

// New returns an empty map ordered by cmp, which returns a negative number
// when a < b, zero when a == b and a positive number when a > b, and must
// define a strict weak order. A nil opts selects the defaults.
func New[K, V any](cmp func(a, b K) int, opts *Options) *Map[K, V] {
	return NewAbbreviated[K, V](cmp, nil, opts)
}

// NewAbbreviated returns an empty map ordered by cmp, like New, whose keys
// also have abbreviations: abbreviate maps a key to a number consistent with
// cmp, that is abbreviate(a) < abbreviate(b) implies cmp(a, b) < 0. Each node
// keeps its key's abbreviation, and a search compares abbreviations first,
// calling cmp only when they are equal. When keys are reached through a
// pointer (byte slices, strings) and mostly differ within their first bytes,
// this saves a cache miss at most steps of a search. A nil abbreviate is the
// same as New. AbbreviateBytes abbreviates byte-slice keys.
func NewAbbreviated[K, V any](cmp func(a, b K) int, abbreviate func(K) uint64, opts *Options) *Map[K, V] {
	var o Options
	if opts != nil {
		o = *opts
	}
	m := &Map[K, V]{cmp: cmp, abbreviate: abbreviate}
	m.heights.Seed(o.Seed, pcgStream)
	// The head is a sentinel of full height.
	m.head = m.alloc.newNode(maxHeight)
	m.height.Store(1)
	return m
}

// NewOrdered returns an empty map ordered by the natural order of K (see
// cmp.Compare). String keys are abbreviated (see NewAbbreviated).
func NewOrdered[K cmp.Ordered, V any](opts *Options) *Map[K, V] {
	return NewAbbreviated[K, V](cmp.Compare[K], orderedAbbreviation[K](), opts)
}

// NewBytes returns an empty map with byte-slice keys in lexicographic order
// (see bytes.Compare), abbreviated by AbbreviateBytes. The map keeps the key
// slices it is given: callers must not modify them afterwards.
func NewBytes[V any](opts *Options) *Map[[]byte, V] {
	return NewAbbreviated[[]byte, V](bytes.Compare, AbbreviateBytes, opts)
}

// Len returns the number of keys in the map.
func (m *Map[K, V]) Len() int {
	return int(m.length.Load())
}

// AllocatedBytes returns the memory the map has allocated for its nodes and
// their towers: whole slabs, used or not, with the part of their size-class
// rounding that holds whole nodes; the rest, less than one node per slab, is
// not counted.
// Memory that keys and values refer to (a slice's backing array, say) belongs
// to the caller and is not counted, but the key and value fields themselves
// are part of the nodes and are. The copies of values that Upsert allocates
// are not counted either.
func (m *Map[K, V]) AllocatedBytes() int64 {
	return m.alloc.allocated.Load()
}

// Get returns the value of key and whether the map holds key. The value is
// the stored one, to be left unmodified (see Iterator.Value).
func (m *Map[K, V]) Get(key K) (V, bool) {
	if n, exact := m.find(key, m.abbreviationOf(key), nil); exact {
		return n.load(), true
	}
	var zero V
	return zero, false
}

// Ceiling returns the smallest key in the map that is greater than or equal
// to key, and its value; ok is false when there is none. Both are the
// stored ones, to be left unmodified (see Iterator.Key).
func (m *Map[K, V]) Ceiling(key K) (k K, v V, ok bool) {
	if n, _ := m.find(key, m.abbreviationOf(key), nil); n != nil {
		return n.key, n.load(), true
	}
	return k, v, false
}

// Insert adds key with value unless the map already holds key, in which case
// the map is unchanged. It reports whether it added key. Insert must not run
// concurrently with another Insert or Upsert.
func (m *Map[K, V]) Insert(key K, value V) bool {
	abbrev := m.abbreviationOf(key)
	var preds [maxHeight]*node[K, V]
	if _, exact := m.find(key, abbrev, &preds); exact {
		return false
	}
	m.link(key, abbrev, value, &preds)
	return true
}

// Upsert sets the value of key, adding key if the map does not hold it. It
// reports whether it added key. Readers see either the old or the new value,
// never a mixture. Replacing a value costs one allocation for the new value.
// Upsert must not run concurrently with another Insert or Upsert.
func (m *Map[K, V]) Upsert(key K, value V) bool {
	abbrev := m.abbreviationOf(key)
	var preds [maxHeight]*node[K, V]
	if n, exact := m.find(key, abbrev, &preds); exact {
		p := new(V)
		*p = value
		n.replaced.Store(p)
		return false
	}
	m.link(key, abbrev, value, &preds)
	return true
}

// abbreviationOf returns key's abbreviation: what a node for key keeps in
// abbrev, 0 in a map without abbreviations.
func (m *Map[K, V]) abbreviationOf(key K) uint64 {
	if m.abbreviate == nil {
		return 0
	}
	return m.abbreviate(key)
}

// find returns the first node whose key is greater than or equal to key (nil
// if there is none) and whether its key equals key; abbrev is
// abbreviationOf(key). When preds is not nil, it records at each level the
// last node whose key is less than key, stopping early, with preds
// incomplete, when it finds key.
func (m *Map[K, V]) find(key K, abbrev uint64, preds *[maxHeight]*node[K, V]) (n *node[K, V], exact bool) {
	x := m.head
	// stop is a node known to be greater than key: when the walk at a
	// lower level reaches it again, it need not be compared again.
	var stop *node[K, V]
	// touched exists to be kept alive: see below.
	var touched uint64
	for level := int(m.height.Load()) - 1; level >= 0; level-- {
		for {
			next := x.link(level).Load()
			if next == nil || next == stop {
				break
			}
			// If next turns out greater than key, the search goes on
			// from x one level down. Reading that node's abbreviation
			// now, before comparing next, fetches both nodes from memory
			// at once instead of one after the other: on a map larger
			// than the caches, that cuts the time of a search by a
			// quarter.
			if level > 0 {
				if below := x.link(level - 1).Load(); below != nil && below != next {
					touched ^= below.abbrev
				}
			}
			c := m.compareNode(next, key, abbrev)
			if c == 0 {
				return next, true
			}
			if c > 0 {
				stop = next
				break
			}
			x = next
		}
		if preds != nil {
			preds[level] = x
		}
	}
	// Without a use of touched, the compiler would drop its loads.
	runtime.KeepAlive(touched)
	return stop, false
}

// compareNode compares n's key with key, whose abbreviation is abbrev, with
// the sign of cmp(n.key, key): by abbreviations first, which are in n and
// need no fetch of key's memory, then with cmp when they are equal. In a map
// without abbreviations every abbreviation is 0, so cmp always decides. It
// is written to stay within the compiler's inlining budget: find calls it at
// every step.
func (m *Map[K, V]) compareNode(n *node[K, V], key K, abbrev uint64) int {
	switch {
	case n.abbrev < abbrev:
		return -1
	case n.abbrev > abbrev:
		return 1
	}
	return m.cmp(n.key, key)
}

// link inserts a new node for key, whose abbreviation is abbrev, after the
// nodes in preds, which find filled in for key.
func (m *Map[K, V]) link(key K, abbrev uint64, value V, preds *[maxHeight]*node[K, V]) {
	height := m.randomHeight()
	if cur := int(m.height.Load()); height > cur {
		for level := cur; level < height; level++ {
			preds[level] = m.head
		}
		// A reader that sees the new height before the node is linked
		// finds nil links at the new levels of the head and walks down.
		m.height.Store(int32(height))
	}
	n := m.alloc.newNode(height)
	n.key = key
	n.abbrev = abbrev
	n.value = value
	for level := range height {
		n.link(level).Store(preds[level].link(level).Load())
	}
	// Publish bottom-up: once a reader can reach the node at some level it
	// is already linked at every level below.
	for level := range height {
		preds[level].link(level).Store(n)
	}
	m.length.Add(1)
}

// randomHeight returns a height from 1 to maxHeight, each level with half
// the probability of the one below, so a node has 2 links on average.
// Against the 4/3 links of a quarter, a half makes a search visit fewer
// nodes (about log2(n) against 1.5·log2(n)), and on a map much larger than
// the caches every visit is a cache miss.
func (m *Map[K, V]) randomHeight() int {
	// The guard bit caps the height.
	r := m.heights.Uint64() | 1<<(maxHeight-1)
	return 1 + bits.TrailingZeros64(r)
}
