package memstore

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"sync/atomic"
	"unsafe"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/skiplist"
)

const (
	// headerSize, tailSize and linkSize are the sizes of a node's header,
	// its tail and one link of its tower.
	headerSize = int(unsafe.Sizeof(node{}))
	tailSize   = int(unsafe.Sizeof(nodeTail{}))
	linkSize   = int(unsafe.Sizeof(atomic.Uint64{}))
	// wordSize is the size of a key's first word (see node.word).
	wordSize = 8
)

// A node is one entry of the memstore, one version of a key, in a chunk of
// the arena's stream for its height (see heightClass). A *node points at
// its header; the node's tower of links lies just below it, its key and
// tail just above it, without a gap:
//
//	+----------+-----+--------+--------+--------+---------+---------+-------+
//	| link h-1 | ... | link 0 | keyLen | valLen | key+pad | trailer | value |
//	+----------+-----+--------+--------+--------+---------+---------+-------+
//	     8              8     ^   4        4       k+p        8         8
//	                          *node, and the offset its addr gives
//
// Link l is the addr of the next node at level l, 0 at the end. The key's
// k bytes are padded with p zeros to a multiple of 8, and to at least 8
// (see word). trailer is seq<<8 | kind, and value the addr of the value's
// valLen bytes in the arena's stream of values; an empty value or a
// tombstone has none. Nodes order by key ascending, then by trailer, and so
// sequence number, descending, so that the newest version of a key comes
// first. Nothing records a node's height: a search reaches a node at level
// l only through a link at level l, which proves the node has one.
//
// A search step onto a node reads a word of its key and its link at the
// search's level, a few bytes apart: one cache miss, where a node that
// pointed at its key elsewhere costs two.
type node struct {
	keyLen uint32
	valLen uint32
}

// nodeTail follows a node's key.
type nodeTail struct {
	trailer uint64
	value   addr
}

// keyArea returns the bytes that a key of keyLen bytes takes in a node.
func keyArea(keyLen int) int {
	return (max(keyLen, wordSize) + 7) &^ 7
}

// link returns the node's link at level, which must be below its height.
func (n *node) link(level int) *atomic.Uint64 {
	return (*atomic.Uint64)(unsafe.Add(unsafe.Pointer(n), -(level+1)*linkSize))
}

// key returns the node's key, with capacity its length.
func (n *node) key() []byte {
	return unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(n), headerSize)), n.keyLen)
}

// word returns the key's first 8 bytes as a big-endian number, padded with
// zeros when the key is shorter; the arena gives every key at least 8
// bytes, zeroed. Of two keys with different words, the one with the
// smaller word is the smaller key.
func (n *node) word() uint64 {
	return binary.BigEndian.Uint64((*[wordSize]byte)(unsafe.Add(unsafe.Pointer(n), headerSize))[:])
}

func (n *node) tail() *nodeTail {
	return (*nodeTail)(unsafe.Add(unsafe.Pointer(n), headerSize+keyArea(int(n.keyLen))))
}

func (n *node) seq() uint64 { return base.TrailerSeq(n.tail().trailer) }
func (n *node) kind() Kind  { return base.TrailerKind(n.tail().trailer) }

// keyWord returns key's first word, as node.word does for a node's key:
// its first 8 bytes, zero-padded, big-endian, the skiplist's abbreviation.
func keyWord(key []byte) uint64 { return skiplist.AbbreviateBytes(key) }

// seekTrailer returns the trailer that, with a key, sorts just before every
// version of the key with a sequence number up to seq: seeking to it finds
// the newest version visible at seq.
func seekTrailer(seq uint64) uint64 {
	return base.MakeTrailer(min(seq, MaxSeq), base.KindSeek)
}

// wordAt returns the word at byte offset i, a multiple of 8, of the key,
// which must have one there.
func (n *node) wordAt(i int) uint64 {
	return binary.BigEndian.Uint64((*[wordSize]byte)(unsafe.Add(unsafe.Pointer(n), headerSize+i))[:])
}

// compare orders n's entry against (key, trailer), where kw is key's first
// word; same reports whether n's key is key.
func compare(n *node, key []byte, kw, trailer uint64) (c int, same bool) {
	if nw := n.word(); nw != kw {
		return cmp.Compare(nw, kw), false
	}
	c, _ = compareFrom(n, key, trailer, 0)
	return c, bytes.Equal(n.key(), key)
}

// compareFrom orders n's entry against (key, trailer), given that n's key
// and key share their first i bytes, i a multiple of 8. It also returns
// the length of the prefix the keys share, rounded down to whole words.
// Equal keys share all their bytes, and their trailers decide.
func compareFrom(n *node, key []byte, trailer uint64, i int) (c, shared int) {
	nk := n.key()
	m := min(len(nk), len(key))
	for ; i+wordSize <= m; i += wordSize {
		x, y := binary.BigEndian.Uint64(nk[i:]), binary.BigEndian.Uint64(key[i:])
		if x != y {
			return cmp.Compare(x, y), i
		}
	}
	shared = i
	for ; i < m; i++ {
		if nk[i] != key[i] {
			return cmp.Compare(nk[i], key[i]), shared
		}
	}
	if len(nk) != len(key) {
		return cmp.Compare(len(nk), len(key)), shared
	}
	// Versions of a key order by trailer descending.
	return cmp.Compare(trailer, n.tail().trailer), len(key) &^ (wordSize - 1)
}
