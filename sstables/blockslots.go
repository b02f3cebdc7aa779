package sstables

import (
	"bytes"
	"sync/atomic"
)

// blockSlots are a Reader's shortcut to the cache's entries for its data
// blocks, in a cache that keeps hints (hintedCache): a slot per index
// entry, so per data block, holding the entry a point read last found or
// cached for the block, and the index entries' numbers. A point read finds
// its index entry by the numbers alone, as entry hints find a data block's
// entries (see restartHints), and pins the entry in its slot without
// reading the index block, nor taking the shard's mutex, map or LRU list:
// those cost a cached Get four of its cache misses (docs/5-reads.md, "A
// Get of cached data"). A slot is only a hint: an entry that has left the
// cache refuses the pin (tryPin), and the read then searches the index and
// asks the cache as before.
type blockSlots struct {
	// prefix is what the index keys share, and keys the number of each
	// index entry's key past it (hintOf), in order: the entry of a key
	// whose number none equals is the first whose number is larger.
	prefix []byte
	keys   []uint64
	slots  []atomic.Pointer[cacheEntry]
}

// newBlockSlots returns the slots of the index index is over, checked
// already; none for an index without entries, or one that does not decode
// whole and in order (a search meets the damage as it would have).
func newBlockSlots(index *blockIter) blockSlots {
	var it blockIter
	it.over(index)
	if !it.first() {
		return blockSlots{}
	}
	first := bytes.Clone(it.key)
	count := 1
	for it.nextEntry() {
		count++
	}
	if it.err != nil {
		return blockSlots{}
	}
	n := 0 // it.key is the last entry's
	for n < min(len(first), len(it.key)) && first[n] == it.key[n] {
		n++
	}
	keys := make([]uint64, 0, count)
	var prev []byte
	var prevSeq uint64
	for ok := it.first(); ok; ok = it.nextEntry() {
		if !bytes.HasPrefix(it.key, first[:n]) ||
			len(keys) > 0 && compareInternal(bytes.Compare, prev, prevSeq, it.key, it.seq()) >= 0 {
			return blockSlots{}
		}
		keys = append(keys, hintOf(it.key, n))
		prev, prevSeq = append(prev[:0], it.key...), it.seq()
	}
	if it.err != nil || len(keys) != count {
		return blockSlots{}
	}
	return blockSlots{prefix: first[:n:n], keys: keys, slots: make([]atomic.Pointer[cacheEntry], count)}
}

// entry returns the index entry of the first index key at or after key,
// whatever key's sequence number, and true; or false where the numbers
// cannot tell (key lacks the prefix, or an index key has key's number),
// or the Reader keeps no slots. An entry of len(slots) is past the last.
func (b *blockSlots) entry(key []byte) (int, bool) {
	n := len(b.prefix)
	if b.slots == nil || len(key) < n || !bytes.Equal(key[:n], b.prefix) {
		return 0, false
	}
	target := hintOf(key, n)
	i := lowerBound(b.keys, target)
	if i < len(b.keys) && b.keys[i] == target {
		return 0, false
	}
	return i, true
}

// at returns the slot of index entry i, or nil where there is none.
func (b *blockSlots) at(i int) *atomic.Pointer[cacheEntry] {
	if i < 0 || i >= len(b.slots) {
		return nil
	}
	return &b.slots[i]
}

// size is what the slots and the numbers take in memory.
func (b *blockSlots) size() int { return 16*len(b.slots) + len(b.prefix) }
