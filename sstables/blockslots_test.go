package sstables

import (
	"bytes"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// The slots' numbers name the index entry a key's search lands on
// wherever they can tell, and admit it where they cannot: keys past the
// shared prefix of every length, keys between, before and after the
// tables', and a key whose versions span blocks.
func TestBlockSlotsEntry(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	spanning := make([]entry, 0, 400)
	for i := range 400 { // one key's versions, over many blocks
		spanning = append(spanning, entry{key: []byte("key-000500"), seq: uint64(1000 - i), kind: KindSet, value: make([]byte, 20)})
	}
	es := append(randomEntries(rng, 1000), spanning...)
	slices.SortFunc(es, func(a, b entry) int { return compareInternal(bytes.Compare, a.key, a.seq, b.key, b.seq) })
	es = slices.CompactFunc(es, func(a, b entry) bool { return bytes.Equal(a.key, b.key) && a.seq == b.seq })
	tests := []struct {
		name string
		es   []entry
	}{
		{"random keys, some long", randomEntries(rand.New(rand.NewPCG(11, 12)), 2000)},
		{"a key spanning blocks", es},
		{"one entry", []entry{{key: []byte("only"), seq: 1, kind: KindSet, value: []byte("v")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.sst")
			writeTable(t, path, &WriterOptions{BlockSize: 256}, tt.es)
			r, err := Open(path, &ReaderOptions{Cache: NewCache(hintedCache)})
			require.NoError(t, err)
			defer r.Close()
			require.Len(t, r.slots.keys, int(r.Metadata().DataBlocks))
			require.Len(t, r.slots.slots, int(r.Metadata().DataBlocks))
			var separators [][]byte
			var it blockIter
			it.over(&r.index)
			for ok := it.first(); ok; ok = it.nextEntry() {
				separators = append(separators, bytes.Clone(it.key))
			}
			require.NoError(t, it.err)
			targets := [][]byte{nil, {0}, []byte("a"), []byte("zzz"), bytes.Repeat([]byte{0xff}, 20)}
			for _, e := range tt.es {
				targets = append(targets, e.key, append(bytes.Clone(e.key), 0), e.key[:len(e.key)-1])
			}
			told := 0
			for _, key := range targets {
				i, ok := r.slots.entry(key)
				if !ok {
					continue
				}
				told++
				// The first separator above key: none equals it, or the
				// numbers could not have told.
				want, _ := slices.BinarySearchFunc(separators, key, bytes.Compare)
				require.Equal(t, want, i, "key %q", key)
				if i < len(separators) {
					require.Positive(t, bytes.Compare(separators[i], key), "key %q", key)
				}
			}
			if len(separators) > 1 { // one separator is the whole prefix
				require.Greater(t, told, len(targets)/2)
			}
		})
	}
	// A key whose versions span blocks has separators of one number: the
	// numbers cannot tell its block.
	path := filepath.Join(t.TempDir(), "spanning.sst")
	writeTable(t, path, &WriterOptions{BlockSize: 256}, es)
	r, err := Open(path, &ReaderOptions{Cache: NewCache(hintedCache)})
	require.NoError(t, err)
	defer r.Close()
	_, ok := r.slots.entry([]byte("key-000500"))
	require.False(t, ok)
}

// An index whose keys do not decode in order gets no slots: its search
// meets the damage as it would have.
func TestBlockSlotsRefused(t *testing.T) {
	unordered := blockBuilder{restartInterval: 8}
	for _, k := range []string{"key-1", "key-3", "key-2"} {
		unordered.add([]byte(k), 1<<8|uint64(KindSet), nil)
	}
	var index blockIter
	require.NoError(t, index.init(bytes.Compare, unordered.finish(), true))
	b := newBlockSlots(&index)
	require.Nil(t, b.slots)
	require.Zero(t, b.size())
	_, ok := b.entry([]byte("key-2"))
	require.False(t, ok)
	require.Nil(t, b.at(0))
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
		require.Len(t, r.slots.slots, int(blocks))
		require.Equal(t, r.heldBytes(), cache.Stats().Reserved)

		// The cache's gate starts open (TestReaderReadGate), so the reads
		// go through the slots from the first. They note fewer reads than
		// a window, so it stays open.
		require.True(t, cache.gate.slots.Load())
		checkPointReads(t, r, es, rand.New(rand.NewPCG(5, 6)))
		// Every block the reads cached is in its slot, but those only
		// keys the numbers cannot place read (a key equal to a
		// separator, as the last key of a block often is here).
		inSlots, cached := slotted(r), cache.Stats().Blocks
		require.Greater(t, cached, int(blocks)/3)
		require.LessOrEqual(t, inSlots, cached)
		require.Greater(t, inSlots, cached/2)
		// The reads after them go through the slots to the cache, without
		// the index.
		hits := cache.Stats().Hits
		checkPointReads(t, r, es, rand.New(rand.NewPCG(5, 6)))
		require.Greater(t, cache.Stats().Hits-hits, int64(inSlots))

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
		require.True(t, cache.gate.slots.Load())
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
	var slot atomic.Pointer[cacheEntry]
	slot.Store(c.shards[0].entries[keys[0]])
	e, ok := c.getSlot(keys[0], &slot)
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
