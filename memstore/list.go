package memstore

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/bloom"
)

const (
	// maxHeight bounds the height of a tower. Each level holds half the
	// nodes of the one below, so searches stay logarithmic up to 2^24
	// (16M) entries and degrade gently beyond.
	maxHeight = 24
	// numHeightClasses is the number of classes that heightClass returns.
	numHeightClasses = 7
	// pcgStream is the second half of the PCG state; Options.Seed is the
	// first.
	pcgStream = 0x9e3779b97f4a7c15
)

// heightClass returns the class of a node of height h, the arena stream
// that holds it: heights 1 to 4 each have their own, then 5 and 6, 7 and 8,
// and 9 up to maxHeight share one, as they are rare. A search visits a
// node of height h at about h levels, so the tall nodes it keeps coming
// back to are packed together rather than spread among the short ones.
func heightClass(h int) int {
	switch {
	case h <= 4:
		return h - 1
	case h <= 6:
		return 4
	case h <= 8:
		return 5
	}
	return 6
}

// list is the memstore's index: a skiplist of nodes in an arena, ordered by
// key ascending, then trailer descending. One writer at a time inserts
// (the memstore's mutex serialises them) while any number of readers
// search and iterate without locking, in the scheme of LevelDB's memtable:
// a node is written whole, links included, before one atomic store per
// level links it in, bottom level first, so a reader that can reach it
// finds it complete. Go's memory model makes a reader's atomic load of a
// link observe everything written before the matching store. Nodes are
// never removed, and never changed once linked but for their links.
type list struct {
	arena arena
	// head is a node of full height with an empty key, never compared.
	head  *node
	headX addr
	// height is the number of levels in use; only the writer raises it.
	height atomic.Int32
	length atomic.Int64
	// cmp orders keys; nil is bytewise order, which find searches a word
	// at a time.
	cmp func(a, b []byte) int
	// newest remembers hot keys' newest entries (see newestTable); nil
	// while the list is short.
	newest atomic.Pointer[newestTable]

	// The rest belongs to the writer. heights draws node heights. last is
	// the node inserted last, of height lastHeight, and before[l] its
	// predecessor at level l (the head above the list's height): a splice
	// that spares the next insert its search when it lands next to last
	// (see spliceAt). They are addrs, not pointers, so that keeping them
	// costs no write barrier.
	heights    rand.PCG
	last       addr
	lastHeight int
	before     [maxHeight]addr
}

func (l *list) init(seed uint64, c *Comparator) {
	if c != nil && c != base.Bytewise {
		l.cmp = c.Compare
	}
	l.headX = l.arena.init()
	_, l.head = l.arena.node(l.arena.bases, l.headX)
	l.height.Store(1)
	l.heights.Seed(seed, pcgStream)
	for i := range l.before {
		l.before[i] = l.headX
	}
}

// find returns the first node that sorts at or after (key, trailer), nil if
// there is none, and whether its key is key. When preds is not nil, it
// records at each level the last node that sorts before (key, trailer),
// the head above the list's height.
//
// Comparisons skip the bytes that key shares with every node left to
// compare: the search keeps the lengths of the prefixes key shares with x,
// the last node known to sort before it, and with stop, the first known to
// sort after it, and every node between x and stop starts with the shorter
// of the two prefixes. Keys with a long common prefix (zero-padded
// numbers, a table or user prefix) then cost a word or two per comparison
// rather than a pass over the prefix.
func (l *list) find(key []byte, trailer uint64, preds *[maxHeight]addr) (found *node, same bool) {
	if l.cmp != nil {
		return l.findOrdered(key, trailer, preds)
	}
	t := l.arena.load()
	kw := keyWord(key)
	x, xa := l.head, l.headX
	// stop is a node known to sort after the key: when the walk at a lower
	// level reaches it again, it need not be compared again.
	var stop addr
	// xShared and stopShared are the lengths of the prefixes key shares
	// with x and stop, rounded down to whole words; 0 for the head and
	// while there is no stop.
	var xShared, stopShared int
	// touched exists to be kept alive: see below.
	var touched uint64
	top := int(l.height.Load()) - 1
	if preds != nil {
		for level := top + 1; level < maxHeight; level++ {
			preds[level] = l.headX
		}
	}
	for level := top; level >= 0; level-- {
		for {
			next := addr(x.link(level).Load())
			if next == 0 || next == stop {
				break
			}
			// The search goes on from next at this level if next sorts
			// before the key, from x one level down if not. Reading
			// next's link at this level and the node below x now,
			// before comparing next, fetches all three from memory at
			// once instead of one after the other: a tall node's link
			// lies in another cache line than its key.
			if level > 0 {
				if below := addr(x.link(level - 1).Load()); below != 0 && below != next {
					var b *node
					t, b = l.arena.node(t, below)
					touched ^= b.word()
				}
			}
			var n *node
			t, n = l.arena.node(t, next)
			touched ^= n.link(level).Load()
			// Compare from the first word that n's key and key may not
			// share, with the common case written out: those words
			// differ, which leaves the shared prefix as it was.
			skip := min(xShared, stopShared)
			var nw, w uint64
			if skip == 0 {
				nw, w = n.word(), kw
			} else if skip+wordSize <= len(key) && skip+wordSize <= int(n.keyLen) {
				nw, w = n.wordAt(skip), binary.BigEndian.Uint64(key[skip:])
			}
			if nw < w {
				x, xa, xShared = n, next, skip
				continue
			}
			if nw > w {
				stop, stopShared = next, skip
				break
			}
			c, shared := compareFrom(n, key, trailer, skip)
			if c < 0 {
				x, xa, xShared = n, next, shared
				continue
			}
			stop, stopShared = next, shared
			break
		}
		if preds != nil {
			preds[level] = xa
		}
	}
	// Without a use of touched, the compiler would drop its loads.
	runtime.KeepAlive(touched)
	if stop == 0 {
		return nil, false
	}
	_, found = l.arena.node(t, stop)
	return found, bytes.Equal(found.key(), key)
}

// findOrdered is find under another order than bytewise: a plain skiplist
// search that calls the comparator once per node visited.
func (l *list) findOrdered(key []byte, trailer uint64, preds *[maxHeight]addr) (found *node, same bool) {
	t := l.arena.load()
	x, xa := l.head, l.headX
	top := int(l.height.Load()) - 1
	if preds != nil {
		for level := top + 1; level < maxHeight; level++ {
			preds[level] = l.headX
		}
	}
	for level := top; level >= 0; level-- {
		found = nil
		for {
			next := addr(x.link(level).Load())
			if next == 0 {
				break
			}
			var n *node
			t, n = l.arena.node(t, next)
			if l.compare(n, key, 0, trailer) >= 0 {
				found = n
				break
			}
			x, xa = n, next
		}
		if preds != nil {
			preds[level] = xa
		}
	}
	if found == nil {
		return nil, false
	}
	return found, bytes.Equal(found.key(), key)
}

// keyCompare returns the list's key order as a function: the comparator's,
// or bytes.Compare.
func (l *list) keyCompare() func(a, b []byte) int {
	if l.cmp != nil {
		return l.cmp
	}
	return bytes.Compare
}

// compare orders n's entry against (key, trailer) in the list's order; kw
// is key's first word, which only bytewise order uses.
func (l *list) compare(n *node, key []byte, kw, trailer uint64) int {
	if l.cmp == nil {
		c, _ := compare(n, key, kw, trailer)
		return c
	}
	if c := l.cmp(n.key(), key); c != 0 {
		return c
	}
	// Versions of a key order by trailer descending.
	return cmp.Compare(trailer, n.tail().trailer)
}

// less reports whether a sorts before b in the list's key order.
func (l *list) less(a, b []byte) bool {
	if l.cmp == nil {
		return bytes.Compare(a, b) < 0
	}
	return l.cmp(a, b) < 0
}

// insert adds an entry. The caller is the only writer, and (key, trailer)
// is not in the list yet: every write has its own sequence number.
func (l *list) insert(key, value []byte, trailer uint64) {
	var preds [maxHeight]addr
	l.position(key, trailer, &preds)
	l.insertAt(key, value, trailer, &preds, bloom.Hash(key))
}

// position fills in preds for (key, trailer), which is not in the list
// yet, and returns the node that follows it (nil: none) and its addr. The
// caller is the writer.
func (l *list) position(key []byte, trailer uint64, preds *[maxHeight]addr) (*node, addr) {
	if !l.spliceAt(key, trailer, preds) {
		l.find(key, trailer, preds)
	}
	t := l.arena.bases
	_, p := l.arena.node(t, preds[0])
	x := addr(p.link(0).Load())
	if x == 0 {
		return nil, 0
	}
	_, next := l.arena.node(t, x)
	return next, x
}

// insertAt adds an entry after preds, as position left them; h is the
// key's Hash.
func (l *list) insertAt(key, value []byte, trailer uint64, preds *[maxHeight]addr, h uint64) {
	height := l.randomHeight()
	if height > int(l.height.Load()) {
		// preds holds the head at the new levels. A reader that sees
		// the new height before the node is linked finds empty links
		// at the head's new levels and walks down.
		l.height.Store(int32(height))
	}
	x, n := l.arena.newNode(height, key, value, trailer)
	var pn [maxHeight]*node
	for level := range height {
		_, pn[level] = l.arena.node(l.arena.bases, preds[level])
		n.link(level).Store(pn[level].link(level).Load())
	}
	// Publish bottom-up: once a reader can reach the node at some level,
	// it is already linked at every level below.
	for level := range height {
		pn[level].link(level).Store(uint64(x))
	}
	l.length.Add(1)
	l.noteNewest(n, x, h)
	l.last, l.lastHeight, l.before = x, height, *preds
}

// spliceAt fills in preds for (key, trailer) without a search, and reports
// true, when the entry lands right after or right before the one inserted
// last: keys written in ascending order, and a new version of the key
// written last. The neighbours it compares were visited by the last
// insert, so the check costs no cache miss.
//
// Right after last and before its successor, the predecessor at each level
// below last's height is last, and above it last's predecessor: a node
// between them would lie between last and its successor. Right before last
// and after its predecessor, the predecessors are last's.
func (l *list) spliceAt(key []byte, trailer uint64, preds *[maxHeight]addr) bool {
	if l.last == 0 {
		return false
	}
	t := l.arena.bases
	kw := keyWord(key)
	_, last := l.arena.node(t, l.last)
	if l.compare(last, key, kw, trailer) < 0 {
		if x := addr(last.link(0).Load()); x != 0 {
			_, next := l.arena.node(t, x)
			if l.compare(next, key, kw, trailer) < 0 {
				return false
			}
		}
		*preds = l.before
		for level := range l.lastHeight {
			preds[level] = l.last
		}
		return true
	}
	if l.before[0] != l.headX {
		_, prev := l.arena.node(t, l.before[0])
		if l.compare(prev, key, kw, trailer) > 0 {
			return false
		}
	}
	*preds = l.before
	return true
}

// randomHeight returns a height from 1 to maxHeight, each level with half
// the probability of the one below, so a node has 2 links on average.
// Against the 4/3 links of a quarter, a half makes a search visit fewer
// nodes (about log2(n) against 1.5·log2(n)), and on a list much larger
// than the caches every visit is a cache miss.
func (l *list) randomHeight() int {
	// The guard bit caps the height.
	r := l.heights.Uint64() | 1<<(maxHeight-1)
	return 1 + bits.TrailingZeros64(r)
}

// next returns the node after n at level 0, nil at the end, resolved
// through t, and t (see arena.at).
func (l *list) next(t []unsafe.Pointer, n *node) ([]unsafe.Pointer, *node) {
	x := addr(n.link(0).Load())
	if x == 0 {
		return t, nil
	}
	return l.arena.node(t, x)
}

// lastAt returns the last node at level, the head when the level holds
// none, found by following each level to its end from the top down.
func (l *list) lastAt(level int) addr {
	t := l.arena.load()
	x, xa := l.head, l.headX
	for lv := int(l.height.Load()) - 1; lv >= level; lv-- {
		for {
			next := addr(x.link(lv).Load())
			if next == 0 {
				break
			}
			t, x = l.arena.node(t, next)
			xa = next
		}
	}
	return xa
}
