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
// asks the cache as before. Reads take the slots only while they mostly
// hit (readGate), since a miss pays for them on top.
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
// whole and in order with its restart points on entries (a search meets
// the damage as it would have).
func newBlockSlots(index *blockIter) blockSlots {
	var it blockIter
	it.over(index)
	defer func() { it.err = nil }()
	first, count, ok := it.span()
	if !ok {
		return blockSlots{}
	}
	n := sharedPrefix(first, it.key) // it.key is the last entry's
	keys := make([]uint64, 0, count)
	if !it.numberEntries(first[:n:n], func(number uint64) bool {
		keys = append(keys, number)
		return true
	}) || len(keys) != count {
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
