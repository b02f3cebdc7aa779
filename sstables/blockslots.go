package sstables

import "sync/atomic"

// blockSlots are a Reader's shortcut to the cache's entries for its data
// blocks, in a cache that keeps hints (hintedCache): a slot per data
// block on average, indexed by the block's offset over the mean distance
// between blocks, holding the entry a point read last found or cached for
// a block there. A point read pins the entry in its slot without the
// shard's mutex, map or LRU list, which cost a cached Get three of its
// cache misses (docs/5-reads.md, "A Get of cached data"). A slot is only
// a hint: an entry that has left the cache refuses the pin (tryPin), two
// blocks that share a slot take it from each other, and either way the
// read asks the cache as before.
type blockSlots struct {
	stride uint64 // the mean distance between data blocks' offsets
	slots  []atomic.Pointer[cacheEntry]
}

// minSlotStride bounds the slots of a table whose properties claim more
// data blocks than its data could hold: a slot per 64 bytes of data at
// most.
const minSlotStride = 64

// newBlockSlots returns the slots of blocks data blocks in the table's
// first dataEnd bytes; none for a table without data blocks.
func newBlockSlots(dataEnd, blocks uint64) blockSlots {
	if blocks == 0 || dataEnd == 0 {
		return blockSlots{}
	}
	stride := max(dataEnd/blocks, minSlotStride)
	return blockSlots{stride: stride, slots: make([]atomic.Pointer[cacheEntry], dataEnd/stride+1)}
}

// at returns the slot of the data block at offset, or nil where the
// Reader keeps none.
func (b *blockSlots) at(offset uint64) *atomic.Pointer[cacheEntry] {
	if b.slots == nil {
		return nil
	}
	i := offset / b.stride
	if i >= uint64(len(b.slots)) {
		return nil
	}
	return &b.slots[i]
}

// size is what the slots take in memory.
func (b *blockSlots) size() int { return 8 * len(b.slots) }
