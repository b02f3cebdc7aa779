package sstables

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
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
	keys   []uint64 // a number per restart point
}

// size is what the hints take in memory.
func (h *restartHints) size() int { return 8 * len(h.keys) }

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
	n := 0
	for n < min(len(first), len(last)) && first[n] == last[n] {
		n++
	}
	keys := make([]uint64, it.nrestarts)
	var prev []byte
	var prevSeq uint64
	for i := range keys {
		key, seq, ok := it.restartKey(i)
		if !ok || !bytes.HasPrefix(key, first[:n]) {
			return
		}
		if i > 0 && compareInternal(bytes.Compare, prev, prevSeq, key, seq) >= 0 {
			return // out of order: damaged, and the search will say so
		}
		keys[i], prev, prevSeq = hintOf(key, n), key, seq
	}
	it.hints = restartHints{prefix: first[:n:n], keys: keys}
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
	j, _ := slices.BinarySearch(h.keys, target)
	k := len(h.keys)
	if target < math.MaxUint64 {
		k, _ = slices.BinarySearch(h.keys, target+1)
	}
	return max(j-1, 0), max(k-1, 0)
}
