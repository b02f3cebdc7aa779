package sstables

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCacheEvictsLeastRecentlyUsed(t *testing.T) {
	c := NewCache(cacheShards * (100 + cacheEntryOverhead) * 3) // three 100-byte blocks a shard
	block := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, 100) }
	// Keys in one shard: find them by probing.
	var keys []cacheKey
	target := c.shard(cacheKey{1, 0})
	for off := uint64(0); len(keys) < 4; off++ {
		if k := (cacheKey{1, off}); c.shard(k) == target {
			keys = append(keys, k)
		}
	}
	for i, k := range keys[:3] {
		c.put(k, block(i))
	}
	_, ok := c.get(keys[0]) // keys[0] is now the most recently used
	require.True(t, ok)
	c.put(keys[3], block(3)) // evicts keys[1], the least recently used
	_, ok = c.get(keys[1])
	require.False(t, ok)
	for _, i := range []int{0, 2, 3} {
		got, ok := c.get(keys[i])
		require.True(t, ok, "key %d", i)
		require.Equal(t, block(i), got)
	}
	st := c.Stats()
	require.Equal(t, 3, st.Blocks)
	require.Equal(t, int64(3*(100+cacheEntryOverhead)), st.Used)
	require.Equal(t, int64(4), st.Hits)
	require.Equal(t, int64(1), st.Misses)

	// A block larger than a shard is not cached.
	c.put(cacheKey{2, 0}, make([]byte, c.capacity))
	_, ok = c.get(cacheKey{2, 0})
	require.False(t, ok)
}

// One cache serves several tables read concurrently, and the reads stay
// right while blocks are evicted and refilled (run with -race).
func TestCacheSharedAcrossTables(t *testing.T) {
	cache := NewCache(32 << 10)
	rng := rand.New(rand.NewPCG(9, 9))
	var readers []*Reader
	var contents [][]entry
	for i := range 3 {
		es := randomEntries(rng, 1000)
		path := filepath.Join(t.TempDir(), fmt.Sprintf("%d.sst", i))
		writeTable(t, path, &WriterOptions{BlockSize: 1024, Compression: Compression(i%2 + 1)}, es)
		r, err := Open(path, &ReaderOptions{Cache: cache})
		require.NoError(t, err)
		defer r.Close()
		readers = append(readers, r)
		contents = append(contents, es)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 3))
			for range 2000 {
				i := rng.IntN(len(readers))
				e := contents[i][rng.IntN(len(contents[i]))]
				var got []byte
				kind, found, err := readers[i].Find(e.key, e.seq, func(v []byte) { got = bytes.Clone(v) })
				if err != nil || !found || kind != e.kind || !bytes.Equal(got, e.value) {
					t.Errorf("table %d %v: %q %v %v", i, e, got, found, err)
					return
				}
			}
		})
	}
	wg.Wait()
	st := cache.Stats()
	require.Positive(t, st.Hits)
	require.Positive(t, st.Misses)
	require.LessOrEqual(t, st.Used, st.Capacity)
}
