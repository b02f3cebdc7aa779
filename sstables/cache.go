package sstables

import (
	"sync"
	"sync/atomic"
)

// Cache keeps recently read blocks, verified and decompressed, for any
// number of tables, so that a hot block costs neither a checksum nor a
// decompression on the next read. It is safe for concurrent use.
//
// Point reads (Get, Has, Find) fill it; iterators use what it holds but do
// not fill it, so that one scan does not evict everything the point reads
// gathered. Blocks a memory-mapped table stores uncompressed are read in
// place and not cached. Evicted blocks stay valid for readers still holding
// them: the garbage collector frees them.
//
// Blocks are cached under their table's id and offset. A Reader opened
// without ReaderOptions.CacheID gets an id of its own, and its Close drops
// its blocks; one opened with a CacheID shares the blocks of every Reader
// of that id, before and after it, and leaves them on Close, for its owner
// to drop with EvictTable once the file is gone. Either way dropping a
// table's blocks costs the blocks it has cached, not a walk over the cache:
// each shard indexes its blocks by table.
type Cache struct {
	shards   [cacheShards]cacheShard
	hits     atomic.Int64
	misses   atomic.Int64
	capacity int64
}

const cacheShards = 16

// cacheEntryOverhead is charged per block on top of its bytes: the entry,
// its map slot and list links.
const cacheEntryOverhead = 96

type cacheKey struct {
	table  uint64 // ReaderOptions.CacheID, or an id unique per Open
	offset uint64
}

type cacheEntry struct {
	key        cacheKey
	block      []byte
	prev, next *cacheEntry // the shard's LRU list
	// The shard's list of its table's entries, nil-terminated both ways;
	// the shard's tables map holds the head.
	tablePrev, tableNext *cacheEntry
}

type cacheShard struct {
	mu       sync.Mutex
	capacity int64
	used     int64
	entries  map[cacheKey]*cacheEntry
	tables   map[uint64]*cacheEntry // table id -> the head of its entries' list
	lru      cacheEntry             // sentinel: lru.next is the most recently used
}

// NewCache returns a cache holding up to capacity bytes of blocks.
func NewCache(capacity int64) *Cache {
	c := &Cache{capacity: capacity}
	for i := range c.shards {
		s := &c.shards[i]
		s.capacity = capacity / cacheShards
		s.entries = make(map[cacheKey]*cacheEntry)
		s.tables = make(map[uint64]*cacheEntry)
		s.lru.prev, s.lru.next = &s.lru, &s.lru
	}
	return c
}

// CacheStats reports a cache's use.
type CacheStats struct {
	// Capacity and Used are in bytes, Used including per-block overhead.
	Capacity, Used int64
	// Blocks counts cached blocks.
	Blocks int
	// Hits and Misses count lookups.
	Hits, Misses int64
}

// Stats returns the cache's current use.
func (c *Cache) Stats() CacheStats {
	st := CacheStats{Capacity: c.capacity, Hits: c.hits.Load(), Misses: c.misses.Load()}
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		st.Used += s.used
		st.Blocks += len(s.entries)
		s.mu.Unlock()
	}
	return st
}

// shard picks a key's shard from the top bits of a multiplicative hash, so
// neighbouring blocks of one table spread over the shards.
func (c *Cache) shard(k cacheKey) *cacheShard {
	h := k.table*0x9E3779B97F4A7C15 ^ k.offset*0xC2B2AE3D27D4EB4F
	return &c.shards[h>>60]
}

func (c *Cache) get(k cacheKey) ([]byte, bool) {
	s := c.shard(k)
	s.mu.Lock()
	e, ok := s.entries[k]
	if ok {
		s.unlink(e)
		s.pushFront(e)
	}
	s.mu.Unlock()
	if !ok {
		c.misses.Add(1)
		return nil, false
	}
	c.hits.Add(1)
	return e.block, true
}

func (c *Cache) put(k cacheKey, block []byte) {
	charge := int64(len(block)) + cacheEntryOverhead
	s := c.shard(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	if charge > s.capacity {
		return
	}
	if old, ok := s.entries[k]; ok {
		s.remove(old)
	}
	e := &cacheEntry{key: k, block: block}
	s.entries[k] = e
	s.pushFront(e)
	if head := s.tables[k.table]; head != nil {
		e.tableNext, head.tablePrev = head, e
	}
	s.tables[k.table] = e
	s.used += charge
	for s.used > s.capacity {
		s.remove(s.lru.prev)
	}
}

// EvictTable drops every block cached under a table's id: for the owner of
// a ReaderOptions.CacheID, once no Reader of that id will be opened again
// (its file is deleted). It costs the blocks dropped, not the cache's size.
// Readers of the id still open keep working, and fill the cache again.
func (c *Cache) EvictTable(id uint64) {
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		for e := s.tables[id]; e != nil; {
			next := e.tableNext
			s.remove(e)
			e = next
		}
		s.mu.Unlock()
	}
}

func (s *cacheShard) pushFront(e *cacheEntry) {
	e.prev, e.next = &s.lru, s.lru.next
	e.prev.next, e.next.prev = e, e
}

func (s *cacheShard) unlink(e *cacheEntry) {
	e.prev.next, e.next.prev = e.next, e.prev
}

// remove drops e from the shard: its map, its LRU list and its table's list.
func (s *cacheShard) remove(e *cacheEntry) {
	s.unlink(e)
	delete(s.entries, e.key)
	switch {
	case e.tablePrev != nil:
		e.tablePrev.tableNext = e.tableNext
	case e.tableNext != nil:
		s.tables[e.key.table] = e.tableNext
	default:
		delete(s.tables, e.key.table)
	}
	if e.tableNext != nil {
		e.tableNext.tablePrev = e.tablePrev
	}
	s.used -= int64(len(e.block)) + cacheEntryOverhead
}
