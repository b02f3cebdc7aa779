package sstables

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNewBlockSlots(t *testing.T) {
	tests := []struct {
		name            string
		dataEnd, blocks uint64
		stride          uint64
		slots           int
	}{
		{"no blocks", 4096, 0, 0, 0},
		{"no data", 0, 3, 0, 0},
		{"one block", 4000, 1, 4000, 2},
		{"blocks of 4 KiB", 100 * 4100, 100, 4100, 101},
		{"more blocks than the data holds", 1000, 1 << 40, minSlotStride, 1000/minSlotStride + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBlockSlots(tt.dataEnd, tt.blocks)
			require.Equal(t, tt.stride, b.stride)
			require.Len(t, b.slots, tt.slots)
			require.Equal(t, 8*tt.slots, b.size())
			if tt.slots == 0 {
				require.Nil(t, b.at(0))
				return
			}
			require.Same(t, &b.slots[0], b.at(0))
			require.Same(t, &b.slots[len(b.slots)-1], b.at(tt.dataEnd))
			require.Nil(t, b.at(tt.dataEnd+tt.stride))
		})
	}
}

// A Reader on a hinted cache reaches the data blocks it cached through
// their slots, charged to the cache with its index; a block that left the
// cache refuses its slot's pin, and the read asks the cache again.
func TestReaderBlockSlots(t *testing.T) {
	es := randomEntries(rand.New(rand.NewPCG(7, 8)), 3000)
	path := filepath.Join(t.TempDir(), "t.sst")
	writeTable(t, path, &WriterOptions{BlockSize: 256}, es)
	for _, capacity := range []int64{1 << 20, hintedCache} {
		cache := NewCache(capacity)
		r, err := Open(path, &ReaderOptions{Cache: cache})
		require.NoError(t, err)
		if capacity < hintedCache {
			require.Zero(t, r.slots.size())
			require.NoError(t, r.Close())
			continue
		}
		blocks := r.Metadata().DataBlocks
		require.Greater(t, blocks, uint64(50))
		require.Len(t, r.slots.slots, int(r.dataEnd/r.slots.stride)+1)
		require.Equal(t, r.heldBytes(), cache.Stats().Reserved)

		checkPointReads(t, r, es, rand.New(rand.NewPCG(5, 6)))
		// Most cached blocks have a slot of their own: those that share
		// one are shorter than the mean.
		inSlots, cached := slotted(r), cache.Stats().Blocks
		require.Greater(t, cached, int(blocks)/3)
		require.LessOrEqual(t, inSlots, cached)
		require.Greater(t, inSlots, cached*3/4)

		// Evicted, the entries refuse their slots' pins; the reads that
		// follow find the blocks missing, read them, and slot them again.
		cache.EvictTable(r.id)
		for i := range r.slots.slots {
			if e := r.slots.slots[i].Load(); e != nil {
				require.False(t, e.tryPin())
			}
		}
		misses := cache.Stats().Misses
		checkPointReads(t, r, es, rand.New(rand.NewPCG(5, 6)))
		require.GreaterOrEqual(t, cache.Stats().Misses-misses, int64(inSlots))
		require.Equal(t, inSlots, slotted(r))
		require.NoError(t, r.Close())
		require.Zero(t, cache.Stats().Reserved)
	}
}

// slotted counts r's slots that hold an entry still cached.
func slotted(r *Reader) int {
	n := 0
	for i := range r.slots.slots {
		if e := r.slots.slots[i].Load(); e != nil && e.state.Load()&1 == 0 {
			n++
		}
	}
	return n
}

// An entry a point read pinned through its slot since it last reached the
// LRU list's tail is passed over once by eviction, as if moved to the
// front by the hit.
func TestCacheEvictionSecondChance(t *testing.T) {
	c := NewCache(cacheShards * 4 * chunkCharge(100))
	block := make([]byte, 100)
	// Four blocks of one shard fill it.
	var keys []cacheKey
	for off := uint64(0); len(keys) < 5; off++ {
		if k := (cacheKey{table: 1, offset: off}); c.shard(k) == &c.shards[0] {
			keys = append(keys, k)
		}
	}
	for _, k := range keys[:4] {
		c.put(k, block)
	}
	// keys[0], the least recently used, is hit through a slot: it does
	// not move, but the next eviction passes it over.
	slots := newBlockSlots(1, 1)
	slot := slots.at(0)
	slot.Store(c.shards[0].entries[keys[0]])
	e, ok := c.getSlot(keys[0], slot)
	require.True(t, ok)
	require.True(t, e.referenced.Load())
	s := &c.shards[0]
	require.Same(t, e, s.lru.prev)
	c.unpin(e)

	c.put(keys[4], block)
	require.Contains(t, s.entries, keys[0])
	require.NotContains(t, s.entries, keys[1])
	require.False(t, e.referenced.Load())
	require.Same(t, s.entries[keys[4]], s.lru.next)
	require.Same(t, e, s.lru.next.next)
}
