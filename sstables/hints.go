package sstables

import (
	"bytes"
	"encoding/binary"
	"slices"
)

// restartHints let a search of a held index block find its restart point
// without touching the block: for each restart point, the 8 bytes of its
// key that follow the prefix all the block's keys share, as a big-endian
// number, so that the numbers order as the keys do. A binary search of
// them reads one small array where a search of the block reads an entry
// of it per step, each a cache miss in an index of thousands of entries
// (docs/5-reads.md, "Index hints"). They hold for bytewise order only.
type restartHints struct {
	prefix []byte   // the keys' shared prefix, in the block
	keys   []uint64 // a number per restart point
}

// size is what the hints take in memory.
func (h *restartHints) size() int { return 8 * len(h.keys) }

// hintOf returns the number of key, which must begin with prefix.
func hintOf(key []byte, prefix int) uint64 {
	var b [8]byte
	copy(b[:], key[prefix:])
	return binary.BigEndian.Uint64(b[:])
}

// buildHints computes the block's restart hints. Keys in bytewise order share
// the prefix their first and last share. A damaged restart entry, or keys
// out of order, leave the block without hints, so that a search meets the
// damage as it would have.
func (it *blockIter) buildHints() {
	it.hints = restartHints{}
	first, _, ok := it.restartKey(0)
	if !ok {
		it.err = nil
		return
	}
	last, _, ok := it.restartKey(it.nrestarts - 1)
	if !ok {
		it.err = nil
		return
	}
	n := 0
	for n < min(len(first), len(last)) && first[n] == last[n] {
		n++
	}
	keys := make([]uint64, it.nrestarts)
	for i := range keys {
		key, _, ok := it.restartKey(i)
		if !ok || !bytes.HasPrefix(key, first[:n]) {
			it.err = nil
			return
		}
		keys[i] = hintOf(key, n)
		if i > 0 && keys[i] < keys[i-1] {
			return // out of order: damaged, and the search will say so
		}
	}
	it.hints = restartHints{prefix: first[:n:n], keys: keys}
}

// hintedRestart returns the last restart point whose entry sorts before
// (key, seq), or 0, as the binary search of seekGE would, from the hints:
// the block is read only where a hint cannot tell the keys apart. ok is
// false, with it.err set, if such an entry is damaged.
func (it *blockIter) hintedRestart(key []byte, seq uint64) (int, bool) {
	h := &it.hints
	n := len(h.prefix)
	if len(key) < n || !bytes.Equal(key[:n], h.prefix) {
		if bytes.Compare(key, h.prefix) < 0 {
			return 0, true // before every key of the block
		}
		return len(h.keys) - 1, true // after every key of the block
	}
	target := hintOf(key, n)
	// Restart points before j have smaller numbers, so smaller keys.
	j, _ := slices.BinarySearch(h.keys, target)
	lo := max(j-1, 0)
	for i := j; i < len(h.keys) && h.keys[i] == target; i++ {
		rkey, rseq, ok := it.restartKey(i)
		if !ok {
			return 0, false
		}
		if compareInternal(it.cmp, rkey, rseq, key, seq) >= 0 {
			break
		}
		lo = i
	}
	return lo, true
}
