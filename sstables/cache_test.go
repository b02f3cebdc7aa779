package sstables

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
	"weak"

	"github.com/stratadb/strata/vfs"
	"github.com/stretchr/testify/require"
)

func TestCacheEvictsLeastRecentlyUsed(t *testing.T) {
	c := NewCache(cacheShards * chunkCharge(100) * 3) // three 100-byte blocks a shard
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
	e, ok := c.get(keys[0]) // keys[0] is now the most recently used
	require.True(t, ok)
	c.unpin(e)
	c.put(keys[3], block(3)) // evicts keys[1], the least recently used
	_, ok = c.get(keys[1])
	require.False(t, ok)
	for _, i := range []int{0, 2, 3} {
		e, ok := c.get(keys[i])
		require.True(t, ok, "key %d", i)
		require.Equal(t, block(i), e.block)
		c.unpin(e)
	}
	st := c.Stats()
	require.Equal(t, 3, st.Blocks)
	require.Equal(t, 3*chunkCharge(100), st.Used)
	require.Equal(t, int64(4), st.Hits)
	require.Equal(t, int64(1), st.Misses)

	// A block larger than a shard is not cached.
	c.put(cacheKey{2, 0}, make([]byte, c.capacity))
	_, ok = c.get(cacheKey{2, 0})
	require.False(t, ok)
}

// A full shard caches a point read's block only when it misses a third
// time while the shard remembers refusing it twice, and remembers a bounded
// number of keys: one a slot.
func TestCacheAdmitsBlocksRefusedLately(t *testing.T) {
	c := NewCache(cacheShards * chunkCharge(100) * 3) // three 100-byte blocks a shard
	block := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, 100) }
	target := c.shard(cacheKey{1, 0})
	var keys []cacheKey
	for off := uint64(0); len(keys) < 5+2*minRefused; off++ {
		if k := (cacheKey{1, off}); c.shard(k) == target {
			keys = append(keys, k)
		}
	}
	cached := func(k cacheKey) bool {
		target.mu.Lock()
		defer target.mu.Unlock()
		_, ok := target.entries[k]
		return ok
	}
	// Hints are built for a block cached into room, and for no other.
	built := 0
	hints := func() restartHints { built++; return restartHints{keys: []uint64{7}} }
	hinted := func(k cacheKey) bool {
		target.mu.Lock()
		defer target.mu.Unlock()
		return target.entries[k].hints.keys != nil
	}
	for i, k := range keys[:3] {
		c.fill(k, block(i), hints, nil) // room: cached at once
		require.True(t, cached(k), "key %d", i)
		require.True(t, hinted(k), "key %d", i)
	}
	require.Equal(t, 3, built)
	tests := []struct {
		name   string
		key    int
		cached []int // of keys[:5], after the fill
	}{
		{"a first miss when full is refused", 3, []int{0, 1, 2}},
		{"another", 4, []int{0, 1, 2}},
		{"a second miss is refused too", 3, []int{0, 1, 2}},
		{"a third is cached, evicting the least recently used", 3, []int{1, 2, 3}},
		{"the other's second is refused", 4, []int{1, 2, 3}},
		{"and its third cached", 4, []int{2, 3, 4}},
		{"and only once: a first miss again", 0, []int{2, 3, 4}},
	}
	for _, tt := range tests {
		c.fill(keys[tt.key], block(tt.key), hints, nil)
		for i := range 5 {
			require.Equal(t, slices.Contains(tt.cached, i), cached(keys[i]), "%s: key %d", tt.name, i)
		}
	}
	// The blocks cached in place of others have none.
	require.Equal(t, 3, built)
	require.False(t, hinted(keys[3]))
	require.False(t, hinted(keys[4]))

	// A refused key is forgotten when another takes its slot.
	target.mu.Lock()
	require.Len(t, target.refused.slots, minRefused)
	bySlot := make(map[int]cacheKey)
	var a, b cacheKey
	for _, k := range keys[5:] { // twice as many keys as slots: two share one
		slot := target.refused.slotOf(fingerprint(k))
		if other, ok := bySlot[slot]; ok {
			a, b = other, k
			break
		}
		bySlot[slot] = k
	}
	target.mu.Unlock()
	require.NotZero(t, b, "no two keys share a slot")
	c.fill(a, block(5), nil, nil)
	c.fill(a, block(5), nil, nil) // refused twice
	c.fill(b, block(6), nil, nil) // refused: takes a's slot
	c.fill(a, block(5), nil, nil) // forgotten: refused once, taking the slot back
	c.fill(a, block(5), nil, nil) // refused twice
	require.False(t, cached(a))
	c.fill(a, block(5), nil, nil) // remembered twice: cached
	require.True(t, cached(a))
	require.False(t, cached(b))
}

// A pinned block stays whole after its eviction, and its chunk is reused
// only once the last pin goes.
func TestCachePinnedBlockOutlivesEviction(t *testing.T) {
	c := NewCache(cacheShards * chunkCharge(1000)) // one block a shard
	k1 := cacheKey{1, 0}
	var k2 cacheKey // another key of the same shard
	for off := uint64(1); ; off++ {
		if k2 = (cacheKey{1, off}); c.shard(k2) == c.shard(k1) {
			break
		}
	}
	c.put(k1, bytes.Repeat([]byte{1}, 1000))
	e1, ok := c.get(k1)
	require.True(t, ok)
	require.True(t, e1.mapped, "off the heap")
	pinned := e1.block
	e1again, ok := c.get(k1) // a second pin
	require.True(t, ok)

	c.put(k2, bytes.Repeat([]byte{2}, 1000)) // evicts k1, pinned twice
	_, ok = c.get(k1)
	require.False(t, ok)
	e2, ok := c.get(k2)
	require.True(t, ok)
	require.NotSame(t, &pinned[0], &e2.block[0], "k2 did not take k1's chunk")
	chunks := []*byte{&pinned[0], &e2.block[0]}
	c.unpin(e2)
	require.Equal(t, bytes.Repeat([]byte{1}, 1000), pinned)
	c.unpin(e1)
	require.Equal(t, bytes.Repeat([]byte{1}, 1000), pinned, "still pinned once")
	c.unpin(e1again)

	// The chunk is free now: the next block of its size takes it.
	c.put(k1, bytes.Repeat([]byte{3}, 1000)) // evicts k2, unpinned: its chunk is free at once
	e3, ok := c.get(k1)
	require.True(t, ok)
	require.Contains(t, chunks, &e3.block[0], "a freed chunk is reused")
	c.unpin(e3)
}

// One cache serves several tables read concurrently, and the reads stay
// right while blocks are evicted and refilled (run with -race), with
// and without restart hints kept beside the cached blocks, in huge
// regions with them.
func TestCacheSharedAcrossTables(t *testing.T) {
	for _, hinted := range []bool{false, true} {
		t.Run(fmt.Sprintf("hinted=%v", hinted), func(t *testing.T) { testCacheSharedAcrossTables(t, hinted) })
	}
}

func testCacheSharedAcrossTables(t *testing.T, hinted bool) {
	cache := NewCache(32 << 10)
	// A cache this small keeps no hints, nor maps huge regions, of its own
	// accord; made to, its point reads search hinted blocks in huge
	// regions while others evict them and reuse their chunks.
	cache.hinted = hinted
	for i := range cache.shards {
		cache.shards[i].mem.huge = hinted
	}
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
	// Read once before the churn below, whose gate may stop huge regions,
	// so that a hinted cache's shards map theirs.
	readAll(t, readers[0], contents[0])
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
	// Meanwhile a table's blocks are dropped now and then, and a charge
	// comes and goes, evicting at once: a hinted cache's readers pin
	// through their Readers' slots entries that leave the cache under
	// them, and eviction passes over the entries those pins marked. The
	// cache's read gate, which the reads' misses close, is opened again
	// and again, so that reads take the slots' way and the index's side by
	// side.
	done := make(chan struct{})
	var churn sync.WaitGroup
	churn.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			if i%8 == 0 {
				cache.EvictTable(readers[i/8%len(readers)].id)
			}
			if hinted && i%4 == 0 {
				// Open the slots, and have fills build hints and map
				// huge pages or not, as the gate does.
				cache.gate.slots.Store(true)
				cache.gate.fits.Store(i%8 == 0)
			}
			cache.Reserve(8 << 10)
			cache.Reserve(-8 << 10)
			runtime.Gosched()
		}
	})
	// Iterators read the cached blocks meanwhile, through copies: each
	// entry stays whole until the next move, whatever the point reads
	// evict and reuse.
	for g := range 2 {
		wg.Go(func() {
			for round := range 10 {
				i := (g + round) % len(readers)
				it := readers[i].NewIterator(nil)
				j := 0
				for ok := it.First(); ok; ok = it.Next() {
					e := contents[i][j]
					if !bytes.Equal(it.Key(), e.key) || it.Seq() != e.seq || !bytes.Equal(it.Value(), e.value) {
						t.Errorf("table %d entry %d: %q@%d, want %v", i, j, it.Key(), it.Seq(), e)
						return
					}
					j++
				}
				if it.Err() != nil || j != len(contents[i]) {
					t.Errorf("table %d: %d entries, %v", i, j, it.Err())
				}
				it.Close()
			}
		})
	}
	wg.Wait()
	close(done)
	churn.Wait()
	// What the churn left of the snappy table, whose blocks are cached,
	// with their hints in a hinted cache: no window of the gate ends
	// within these reads to stop that.
	cache.gate.fits.Store(true)
	cache.gate.notes.Store(0)
	readAll(t, readers[1], contents[1])
	st := cache.Stats()
	require.Positive(t, st.Hits)
	require.Positive(t, st.Misses)
	require.LessOrEqual(t, st.Used, st.Capacity)
	withHints := hintedBlocks(cache)
	require.Equal(t, hinted, withHints > 0, "%d cached blocks with hints", withHints)
	huge := 0
	for i := range cache.shards {
		s := &cache.shards[i]
		s.mu.Lock()
		h := hugeRegions(s.mem)
		require.Equal(t, int64(h*hugeRegion+(len(s.mem.regions)-h)*blockRegion), s.mem.mapped)
		huge += h
		s.mu.Unlock()
	}
	require.Equal(t, hinted, huge > 0, "%d huge regions", huge)
}

// readAll reads every entry of es through r's point reads, filling its cache.
func readAll(t testing.TB, r *Reader, es []entry) {
	for _, e := range es {
		_, found, err := r.Find(e.key, e.seq, nil)
		require.NoError(t, err)
		require.True(t, found, "%v", e)
	}
}

// A closed reader's blocks leave the cache: no one can ask for them again.
func TestCacheDropsClosedReadersBlocks(t *testing.T) {
	cache := NewCache(1 << 20)
	rng := rand.New(rand.NewPCG(10, 10))
	var readers []*Reader
	var blocks []int
	for i := range 2 {
		es := randomEntries(rng, 500)
		path := filepath.Join(t.TempDir(), fmt.Sprintf("%d.sst", i))
		writeTable(t, path, &WriterOptions{BlockSize: 512}, es)
		r, err := Open(path, &ReaderOptions{Cache: cache})
		require.NoError(t, err)
		readAll(t, r, es)
		readers = append(readers, r)
		blocks = append(blocks, cache.Stats().Blocks)
	}
	require.Positive(t, blocks[0])
	require.Greater(t, blocks[1], blocks[0])

	require.NoError(t, readers[0].Close())
	st := cache.Stats()
	require.Equal(t, blocks[1]-blocks[0], st.Blocks)
	require.NoError(t, readers[1].Close())
	st = cache.Stats()
	require.Zero(t, st.Blocks)
	require.Zero(t, st.Used)
}

// Blocks read in place from a mapping are not cached: the cache does not
// own them, and they vanish with the mapping.
func TestCacheSkipsBlocksReadInPlace(t *testing.T) {
	es := randomEntries(rand.New(rand.NewPCG(11, 11)), 500)
	path := filepath.Join(t.TempDir(), "t.sst")
	writeTable(t, path, &WriterOptions{BlockSize: 512, Compression: NoCompression}, es)
	f, err := vfs.OpenReadOnly(nil, path, true)
	require.NoError(t, err)
	_, mapped := f.(vfs.MappedFile) // not on every platform
	require.NoError(t, f.Close())
	for _, tc := range []struct {
		noMmap bool
		cached bool
	}{
		{noMmap: false, cached: !mapped},
		{noMmap: true, cached: true},
	} {
		t.Run(fmt.Sprintf("noMmap=%v", tc.noMmap), func(t *testing.T) {
			cache := NewCache(1 << 20)
			r, err := Open(path, &ReaderOptions{Cache: cache, NoMmap: tc.noMmap})
			require.NoError(t, err)
			defer r.Close()
			readAll(t, r, es)
			require.Equal(t, tc.cached, cache.Stats().Blocks > 0)
		})
	}
}

// BenchmarkReaderCloseFullCache measures Reader.Close, which drops the
// table's blocks, in a cache filled with other tables' blocks: what
// closing one table costs a database whose cache is large and full. One
// op opens the table, reads it whole (so that its blocks are cached) and
// closes it; the close alone is the close-µs metric. Timing the whole op
// keeps b.N from multiplying a setup the timer would not see, and each
// full cache is built once, before its b.Run, not at each of the runs
// that size b.N: the cache copies its blocks into memory of its own, so a
// 1 GiB cache is 1 GiB resident until it is collected.
func BenchmarkReaderCloseFullCache(b *testing.B) {
	es := randomEntries(rand.New(rand.NewPCG(12, 12)), 500)
	path := filepath.Join(b.TempDir(), "t.sst")
	writeTable(b, path, &WriterOptions{BlockSize: 512}, es)
	for _, size := range []int64{64 << 20, 1 << 30} {
		// 4 KiB blocks of other tables fill it.
		cache := NewCache(size)
		filler := make([]byte, 4<<10)
		for off := uint64(0); cache.Stats().Used < size-size/16; off += uint64(len(filler)) {
			for table := uint64(1 << 40); table < 1<<40+64; table++ {
				cache.put(cacheKey{table: table, offset: off}, filler)
			}
		}
		blocks := cache.Stats().Blocks
		b.Run(fmt.Sprintf("cache=%dMiB", size>>20), func(b *testing.B) {
			var closing time.Duration
			b.ResetTimer()
			for range b.N {
				r, err := Open(path, &ReaderOptions{Cache: cache, NoMmap: true})
				require.NoError(b, err)
				readAll(b, r, es)
				start := time.Now()
				require.NoError(b, r.Close())
				closing += time.Since(start)
			}
			b.ReportMetric(float64(closing.Nanoseconds())/1e3/float64(b.N), "close-µs")
			b.ReportMetric(float64(blocks), "cached-blocks")
		})
		cache = nil
		runtime.GC() // its cleanup unmaps its blocks before the next size fills
	}
}

// cachedBlocks counts a table's blocks in c, by its entries and by its
// shards' lists of them, and fails if the two disagree.
func cachedBlocks(t *testing.T, c *Cache, id uint64) int {
	t.Helper()
	var byKey, byList int
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		for k := range s.entries {
			if k.table == id {
				byKey++
			}
		}
		for e := s.tables[id]; e != nil; e = e.tableNext {
			byList++
		}
		if head, ok := s.tables[id]; ok && (head == nil || head.tablePrev != nil) {
			t.Errorf("shard %d: table %d's list head is %v", i, id, head)
		}
		s.mu.Unlock()
	}
	require.Equal(t, byKey, byList, "table %d: entries and list disagree", id)
	return byKey
}

// Readers charge their index and filter to the cache while open, and
// Reserve charges what its caller holds: the blocks cached stay within
// what the charges leave, down to none.
func TestCacheReserve(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 14))
	path := filepath.Join(t.TempDir(), "t.sst")
	es := randomEntries(rng, 2000)
	writeTable(t, path, &WriterOptions{BlockSize: 512, BloomBitsPerKey: 10}, es)
	const capacity = 1 << 20
	cache := NewCache(capacity)

	r, err := Open(path, &ReaderOptions{Cache: cache, CacheID: 7, NoMmap: true})
	require.NoError(t, err)
	held := cache.Stats().Reserved
	require.Equal(t, r.heldBytes(), held)
	require.Greater(t, held, int64(r.IndexSize()), "the index and the filter")
	readAll(t, r, es)
	full := cache.Stats()
	require.Positive(t, full.Used)
	require.LessOrEqual(t, full.Used, int64(capacity)-held)

	for _, reserve := range []int64{full.Used / 2, capacity} {
		cache.Reserve(reserve)
		st := cache.Stats()
		require.Equal(t, held+reserve, st.Reserved)
		require.LessOrEqual(t, st.Used, max(int64(capacity)-st.Reserved, 0))
		readAll(t, r, es) // still served, from the file
		require.LessOrEqual(t, cache.Stats().Used, max(int64(capacity)-st.Reserved, 0))
		cache.Reserve(-reserve)
	}
	require.NoError(t, r.Close())
	st := cache.Stats()
	require.Zero(t, st.Reserved, "Close gives the charge back")
	require.Positive(t, st.Used)
}

// Closing or evicting one table drops exactly its blocks. A Reader with a
// CacheID leaves its blocks on Close, and a Reader reopened with the same
// id reads them from the cache; EvictTable drops them.
func TestCacheDropsOneTablesBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 13))
	dir := t.TempDir()
	type table struct {
		path    string
		es      []entry
		cacheID uint64
	}
	tables := []*table{{cacheID: 1}, {cacheID: 2}, {cacheID: 0}}
	for i, tb := range tables {
		tb.es = randomEntries(rng, 400)
		tb.path = filepath.Join(dir, fmt.Sprintf("%d.sst", i))
		writeTable(t, tb.path, &WriterOptions{BlockSize: 512, BloomBitsPerKey: 10}, tb.es)
	}
	for _, tc := range []struct {
		name   string
		drop   int  // the table whose blocks go
		evict  bool // by EvictTable after Close, not Close alone
		remain bool // its blocks survive its Close
	}{
		{name: "own id: Close drops", drop: 2},
		{name: "CacheID: Close keeps", drop: 0, remain: true},
		{name: "CacheID: EvictTable drops", drop: 1, evict: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := NewCache(4 << 20)
			readers := make([]*Reader, len(tables))
			for i, tb := range tables {
				r, err := Open(tb.path, &ReaderOptions{Cache: cache, CacheID: tb.cacheID, NoMmap: true})
				require.NoError(t, err)
				readAll(t, r, tb.es)
				readers[i] = r
			}
			before := make([]int, len(tables))
			for i, r := range readers {
				before[i] = cachedBlocks(t, cache, r.id)
				require.Positive(t, before[i])
			}
			dropped := readers[tc.drop]
			require.NoError(t, dropped.Close())
			if tc.evict {
				cache.EvictTable(dropped.id)
			}
			for i, r := range readers {
				want := before[i]
				switch {
				case i == tc.drop && tc.remain:
					want += 2 // its index and filter, which it held while open
				case i == tc.drop:
					want = 0
				}
				require.Equal(t, want, cachedBlocks(t, cache, r.id), "table %d", i)
			}
			if tc.remain {
				// A reopen under the same id misses nothing: not its index
				// and filter, not its data blocks.
				misses := cache.Stats().Misses
				r, err := Open(tables[tc.drop].path, &ReaderOptions{Cache: cache, CacheID: tables[tc.drop].cacheID, NoMmap: true})
				require.NoError(t, err)
				readAll(t, r, tables[tc.drop].es)
				require.Equal(t, misses, cache.Stats().Misses)
				readers[tc.drop] = r
			}
			for i, r := range readers {
				if i != tc.drop || tc.remain {
					require.NoError(t, r.Close())
				}
			}
		})
	}
}

func TestOpenRejectsCacheIDWithTopBit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.sst")
	writeTable(t, path, nil, randomEntries(rand.New(rand.NewPCG(14, 14)), 10))
	_, err := Open(path, &ReaderOptions{Cache: NewCache(1 << 20), CacheID: 1 << 63})
	require.ErrorIs(t, err, ErrBadCacheID)
}

// A cache no one holds is collected, and with it go its blocks' mappings
// (NewCache's cleanup): nothing its memory keeps, the gate included,
// reaches back to it.
func TestCacheCollectedOnceDropped(t *testing.T) {
	for _, capacity := range []int64{1 << 20, hintedCache} {
		c := NewCache(capacity)
		c.put(cacheKey{table: 1}, make([]byte, 4<<10))
		require.Equal(t, 1, c.Stats().Blocks)
		collected := weak.Make(c)
		c = nil
		for i := 0; i < 5 && collected.Value() != nil; i++ {
			runtime.GC()
		}
		require.Nil(t, collected.Value(), "a cache of %d bytes still reachable", capacity)
	}
}
