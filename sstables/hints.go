package sstables

import (
	"bytes"
	"encoding/binary"
	"math"
	"unsafe"
)

// restartHints let a search of a held index block, or of a cached data
// block, find its restart point without touching the block: for each
// restart point, the 8 bytes of its key that follow the prefix all the
// restart keys share, as a big-endian number, so that the numbers order
// as the keys do. A binary search of them reads one small array where a
// search of the block reads an entry of it per step, each a cache miss in
// an index of thousands of entries, or in a data block read at random
// from a large cache (docs/5-reads.md, "Index hints"). They hold for
// bytewise order only.
type restartHints struct {
	prefix []byte   // the restart keys' shared prefix, in the block or beside it
	keys   []uint64 // a number per restart point, or per entry with offs
	// offs, where set, are the offsets of a data block's entries, and keys
	// has a number per entry (see buildEntryHints).
	offs []uint16
}

// size is what the hints take in memory.
func (h *restartHints) size() int { return 8*len(h.keys) + 2*len(h.offs) }

// hintOf returns the number of key past its first n bytes. Padding a
// short key with zeros keeps the order of keys (a smaller key never gets
// a larger number) but may lose it: "p" and "p\x00" get the same number.
func hintOf(key []byte, n int) uint64 {
	var b [8]byte
	copy(b[:], key[n:])
	return binary.BigEndian.Uint64(b[:])
}

// buildHints computes the block's restart hints. Keys in bytewise order
// share the prefix their first and last share. A damaged restart entry, or
// restart points out of order, leave the block without hints, so that a
// search meets the damage as it would have.
func (it *blockIter) buildHints() {
	it.hints = restartHints{}
	defer func() { it.err = nil }()
	first, _, ok := it.restartKey(0)
	if !ok {
		return
	}
	last, _, ok := it.restartKey(it.nrestarts - 1)
	if !ok {
		return
	}
	n := sharedPrefix(first, last)
	numbers := keyNumbers{prefix: first[:n:n]}
	keys := make([]uint64, it.nrestarts)
	for i := range keys {
		key, seq, ok := it.restartKey(i)
		if !ok {
			return
		}
		if keys[i], ok = numbers.next(key, seq); !ok {
			return // out of order: damaged, and the search will say so
		}
	}
	it.hints = restartHints{prefix: numbers.prefix, keys: keys}
}

// sharedPrefix returns how many leading bytes a and b share.
func sharedPrefix(a, b []byte) int {
	n := 0
	for n < min(len(a), len(b)) && a[n] == b[n] {
		n++
	}
	return n
}

// keyNumbers numbers the keys of a block in order past the prefix their
// first and last share, as hints hold them (hintOf).
type keyNumbers struct {
	prefix  []byte
	prev    []byte // the key numbered last, and its sequence number
	prevSeq uint64
}

// next returns key's number, or false where key lacks the prefix or does
// not sort after the key before (damage, which the block's own search
// meets).
func (k *keyNumbers) next(key []byte, seq uint64) (uint64, bool) {
	if !bytes.HasPrefix(key, k.prefix) || k.prev != nil && compareInternal(bytes.Compare, k.prev, k.prevSeq, key, seq) >= 0 {
		return 0, false
	}
	k.prev, k.prevSeq = append(k.prev[:0], key...), seq
	return hintOf(key, len(k.prefix)), true
}

// buildEntryHints computes a data block's entry hints: a number per entry,
// as restart hints have per restart point, with the entry's offset, so
// that a search finds the entry it wants by a binary search of the
// numbers and one decode, rather than a walk from a restart point
// (docs/5-reads.md, "A Get of cached data"). Every entry must then share
// the prefix and have a key no longer than the prefix and 8 bytes, so that
// its number, with its length, is its whole key. It reports false, leaving
// the block without them, for a block whose keys are longer, whose entries
// reach beyond 64 KiB, whose entries are so small that their hints would
// take more than a quarter of the block's memory (a walk over them crosses
// few lines anyway), or that does not decode whole and in order with its
// restart points on entries: a search of such a block meets it as a
// search without them does.
func (it *blockIter) buildEntryHints() bool {
	it.hints = restartHints{}
	defer func() { it.err, it.valid = nil, false }()
	if len(it.entries) > math.MaxUint16 {
		return false
	}
	first, count, ok := it.span()
	if !ok || count*entryHintSize > len(it.entries)/maxEntryHintsShare {
		return false
	}
	n := sharedPrefix(first, it.key) // it.key is the last entry's
	keys := make([]uint64, 0, count)
	offs := make([]uint16, 0, count)
	if !it.numberEntries(first[:n:n], func(number uint64) bool {
		keys = append(keys, number)
		offs = append(offs, uint16(it.offset))
		return len(it.key) <= n+8
	}) || len(keys) != count {
		return false
	}
	it.hints = restartHints{prefix: first[:n:n], keys: keys, offs: offs}
	return true
}

// span walks the block's entries and returns a copy of the first one's
// key and their count, leaving it at the last; false if the block has
// none or the walk meets damage.
func (it *blockIter) span() (first []byte, count int, ok bool) {
	if !it.first() {
		return nil, 0, false
	}
	first, count = bytes.Clone(it.key), 1
	for it.nextEntry() {
		count++
	}
	return first, count, it.err == nil
}

// numberEntries walks the block's entries, in order, and calls each, at
// each entry, with its number past prefix (keyNumbers). It reports false
// where each does, or where the block does not decode whole and in order
// with each restart point on an entry whose key it holds whole: a search
// of it would meet damage that numbers would pass over.
func (it *blockIter) numberEntries(prefix []byte, each func(number uint64) bool) bool {
	numbers := keyNumbers{prefix: prefix}
	restart := 0
	for ok := it.first(); ok; ok = it.nextEntry() {
		number, ok := numbers.next(it.key, it.seq())
		if !ok || !each(number) {
			return false
		}
		if restart < it.nrestarts {
			if off, _ := it.restartOffset(restart); off == it.offset {
				restart++
			}
		}
	}
	if it.err != nil || restart != it.nrestarts {
		return false
	}
	for i := range it.nrestarts {
		if _, _, ok := it.restartKey(i); !ok {
			return false
		}
	}
	return true
}

// entryHintSize is what an entry's hint takes: its number and offset.
const entryHintSize = 8 + 2

// maxEntryHintsShare: a block's entry hints take at most this fraction of
// its entries' bytes, a quarter: 320 bytes for a 4 KiB block of 100-byte
// values, and none for entries under 40 bytes.
const maxEntryHintsShare = 4

// seekEntryHinted is seekGE in a block with entry hints: the first entry
// whose number is not below the target's sorts at or after the target's
// user key, and only entries of an equal number (the key's versions, or a
// key told apart by its length) lie between it and the answer.
func (it *blockIter) seekEntryHinted(key []byte, seq uint64) bool {
	h := &it.hints
	n := len(h.prefix)
	var i int
	switch {
	case len(key) >= n && bytes.Equal(key[:n], h.prefix):
		i = lowerBound(h.keys, hintOf(key, n))
	case bytes.Compare(key, h.prefix) < 0:
		i = 0
	default:
		i = len(h.keys)
	}
	if i == len(h.keys) {
		it.valid = false
		return false
	}
	// The entry's key is the prefix and its number, cut to its length:
	// decodeAt keeps the part it shares with the entry before.
	it.key = binary.BigEndian.AppendUint64(append(it.key[:0], h.prefix...), h.keys[i])
	if !it.decodeAt(int(h.offs[i])) {
		return false
	}
	for it.before(key, seq) {
		if !it.nextEntry() {
			return false
		}
	}
	return true
}

// linearBound is the most numbers lowerBound counts rather than
// searches.
const linearBound = 64

// lowerBound returns the index of the first of keys, in order, not below
// target. A block's few numbers are counted, every one read: their loads
// do not wait for one another, as a binary search's do, so the lines they
// lie on, beyond the processor's caches, arrive together rather than one
// after another.
func lowerBound(keys []uint64, target uint64) int {
	if n := len(keys); n > linearBound {
		// Halving without a branch on the comparison, which a search for
		// a random key mispredicts every other step: a cached Get, whose
		// index search runs here, took 5% less (docs/5-reads.md).
		base := 0
		for n > 1 {
			half := n / 2
			base += half & -b2i(keys[base+half] < target)
			n -= half
		}
		if keys[base] < target {
			base++
		}
		return base
	}
	i := 0
	for _, k := range keys {
		if k < target {
			i++
		}
	}
	return i
}

// b2i is 1 for true and 0 for false, without a branch.
func b2i(b bool) int {
	return int(*(*uint8)(unsafe.Pointer(&b)))
}

// hintedRange returns the restart points between which the binary search
// of seekGE, for the last restart point whose entry sorts before the
// target or 0, must look: those whose number equals the target's, and the
// one before them. It is one restart point unless numbers are equal, and
// the search then reads only those from the block.
func (it *blockIter) hintedRange(key []byte) (lo, hi int) {
	h := &it.hints
	n := len(h.prefix)
	if len(key) < n || !bytes.Equal(key[:n], h.prefix) {
		if bytes.Compare(key, h.prefix) < 0 {
			return 0, 0 // before every restart key
		}
		return len(h.keys) - 1, len(h.keys) - 1 // after every restart key
	}
	target := hintOf(key, n)
	// Restart points before j have smaller numbers, so smaller keys; from
	// k on, larger numbers, so larger keys.
	j := lowerBound(h.keys, target)
	k := j // past the numbers equal to the target, seldom more than one
	for k < len(h.keys) && h.keys[k] == target {
		k++
	}
	return max(j-1, 0), max(k-1, 0)
}
