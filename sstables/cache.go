package sstables

import (
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Cache keeps recently read blocks, verified and decompressed, for any
// number of tables, so that a hot block costs neither a checksum nor a
// decompression on the next read. It is safe for concurrent use.
//
// Point reads (Get, Has, Find) fill it; iterators use what it holds but do
// not fill it, so that one scan does not evict everything the point reads
// gathered. Once full, it takes a point read's block only if it refused
// that block twice lately (see refusedBlocks). Blocks a memory-mapped table
// stores uncompressed are read in place and not cached.
//
// Blocks live outside the Go heap (see blockMemory), so a cache's memory
// is what it holds, not twice that as the garbage collector paces the
// heap. A cache of 256 MiB or more, which holds most of what is read,
// maps it in huge pages (its memory then exceeds its capacity by less
// than 32 MiB), and keeps beside each data block a point read caches
// hints that spare its later searches the block's restart keys: a number
// and an offset per entry where the block's keys are short, so that a
// search decodes only the entry it wants, else a number per restart point;
// each of its Readers keeps a slot per index entry, with the entry's
// number (16 bytes, charged with the index), through which a point read
// finds a cached block without the index and pins it without the shard's
// lock, and eviction passes over a block hit that way once, in
// place of moving it to the front. A point read pins the block it reads
// until it returns, and an evicted block's memory is reused only once no
// read pins it; an iterator copies a cached block into a buffer of its
// own.
//
// Blocks are cached under their table's id and offset. A Reader opened
// without ReaderOptions.CacheID gets an id of its own, and its Close drops
// its blocks; one opened with a CacheID shares the blocks of every Reader
// of that id, before and after it, and leaves them on Close, for its owner
// to drop with EvictTable once the file is gone. Either way dropping a
// table's blocks costs the blocks it has cached, not a walk over the cache:
// each shard indexes its blocks by table.
//
// Memory held outside the cache can be charged to it, so that one figure
// bounds both: Reserve charges it (a database's memstores), and a Reader
// charges its index and filter, which it holds from their load to Close. The
// cache keeps for blocks what the charges leave of its capacity, evicting
// as they grow, and nothing when they exceed it. A Reader with a CacheID
// hands its index and filter to the cache at Close, as blocks, and takes
// them back at the next Open, so that a table closed to bound the files
// open reopens without reading them.
type Cache struct {
	shards [cacheShards]cacheShard
	// hinted: the cache keeps data blocks' restart hints (see
	// hintedCache).
	hinted bool
	// gate lets point reads take their Readers' block slots while they
	// mostly hit, and fills build hints and map huge pages while the
	// blocks reads return to would mostly hit once the cache is full.
	// The gate and each shard's blockMemory are apart from the Cache, which
	// the memory's cleanup (see NewCache) must not reach: the memory reads
	// the gate's fits.
	gate     *readGate
	hits     atomic.Int64
	misses   atomic.Int64
	capacity int64

	// resizeMu serialises the changes of reserved and the resizing of the
	// shards they cause.
	resizeMu sync.Mutex
	reserved int64
}

const cacheShards = 16

// hintedCache is the capacity from which a cache keeps the hints of the
// data blocks point reads fill it with (cacheEntry.hints), while its gate
// predicts that it will hold most of what is read (readGate.fits): a
// block it fills is then hit again and again, each hit searched by them
// (docs/5-reads.md, "A Get of cached data").
// A smaller cache fills at most reads, and building hints at each fill
// (as fills did then, taken into room or not) made the default budget's
// random reads 5-10% slower.
const hintedCache = cacheShards * hugeShard

// cacheEntryOverhead is charged per block on top of its bytes: the entry
// with its list links and hints (168 bytes), its map slot, and up to two
// slots of the fingerprints of blocks a full shard refused
// (refusedBlocks).
const cacheEntryOverhead = 232

// onePin is what a pin adds to a cacheEntry's state, whose low bit marks
// an entry that has left the cache.
const onePin = 2

type cacheKey struct {
	table  uint64 // ReaderOptions.CacheID, or an id unique per Open
	offset uint64
}

type cacheEntry struct {
	key   cacheKey
	block []byte
	// hints are a data block's entry or restart hints (bytewise order),
	// kept in the block's chunk after it: a point read's search of the
	// block reads them, which a read of the block's end has just brought
	// into the processor's cache, rather than the restart keys and the
	// entries after them, a miss each. stored counts the block's bytes and
	// theirs.
	hints  restartHints
	stored int
	// mapped: block is a chunk of the shard's blockMemory, not the Go
	// heap's. state is the count of pins times onePin, plus one once the
	// entry has left the cache: whoever brings it to exactly one, the last
	// unpin or the eviction of an unpinned entry, frees the chunk.
	mapped bool
	// referenced marks an entry a point read pinned through its Reader's
	// blockSlots since the entry last reached the LRU list's tail: such a
	// hit takes no lock to move it, so eviction gives it a second chance.
	referenced atomic.Bool
	state      atomic.Int64
	prev, next *cacheEntry // the shard's LRU list
	// The shard's list of its table's entries, nil-terminated both ways;
	// the shard's tables map holds the head.
	tablePrev, tableNext *cacheEntry
}

type cacheShard struct {
	mu       sync.Mutex
	mem      *blockMemory // apart from the Cache, for its cleanup
	capacity int64
	used     int64
	entries  map[cacheKey]*cacheEntry
	tables   map[uint64]*cacheEntry // table id -> the head of its entries' list
	lru      cacheEntry             // sentinel: lru.next is the most recently used
	refused  refusedBlocks
}

// NewCache returns a cache holding up to capacity bytes of blocks, less
// what is charged to it.
func NewCache(capacity int64) *Cache {
	c := &Cache{capacity: capacity, hinted: capacity >= hintedCache}
	c.gate = newReadGate()
	for i := range c.shards {
		s := &c.shards[i]
		s.capacity = max(capacity, 0) / cacheShards
		s.entries = make(map[cacheKey]*cacheEntry)
		s.tables = make(map[uint64]*cacheEntry)
		s.lru.prev, s.lru.next = &s.lru, &s.lru
		s.mem = newBlockMemory(s.capacity, &c.gate.fits)
	}
	mems := make([]*blockMemory, cacheShards)
	for i := range c.shards {
		mems[i] = c.shards[i].mem
	}
	runtime.AddCleanup(c, func(mems []*blockMemory) {
		for _, m := range mems {
			m.unmap()
		}
	}, mems)
	return c
}

// Reserve charges n bytes of memory held elsewhere to the cache, or, for
// a negative n, gives back a charge: the cache then holds that much less
// in blocks, evicting the least recently used at once. Charges beyond the
// capacity leave the cache empty; they are not refused.
func (c *Cache) Reserve(n int64) {
	if n == 0 {
		return
	}
	c.resizeMu.Lock()
	defer c.resizeMu.Unlock()
	c.reserved += n
	perShard := max(c.capacity-c.reserved, 0) / cacheShards
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		s.capacity = perShard
		for s.used > s.capacity {
			s.evict()
		}
		s.mu.Unlock()
	}
}

// CacheStats reports a cache's use.
type CacheStats struct {
	// Capacity and Used are in bytes, Used including per-block overhead.
	// Reserved is what Reserve and open Readers charge to it: Used stays
	// within Capacity less Reserved.
	Capacity, Used, Reserved int64
	// Blocks counts cached blocks.
	Blocks int
	// Hits and Misses count lookups.
	Hits, Misses int64
}

// Stats returns the cache's current use.
func (c *Cache) Stats() CacheStats {
	st := CacheStats{Capacity: c.capacity, Hits: c.hits.Load(), Misses: c.misses.Load()}
	c.resizeMu.Lock()
	st.Reserved = c.reserved
	c.resizeMu.Unlock()
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		st.Used += s.used
		st.Blocks += len(s.entries)
		s.mu.Unlock()
	}
	return st
}

// noteRead records whether a sampled point read found its block cached
// (see readGate), and at a window's end sets the gate.
func (c *Cache) noteRead(hit bool) {
	if hits, ended := c.gate.note(hit); ended {
		c.decideGate(hits)
	}
}

// decideGate sets the gate from a window of hits, the bytes cached and
// the capacity the charges leave for blocks.
func (c *Cache) decideGate(hits int) {
	st := c.Stats()
	c.gate.decide(hits, st.Used, max(st.Capacity-st.Reserved, 0))
}

// shard picks a key's shard from the top bits of a multiplicative hash, so
// neighbouring blocks of one table spread over the shards.
func (c *Cache) shard(k cacheKey) *cacheShard {
	h := k.table*0x9E3779B97F4A7C15 ^ k.offset*0xC2B2AE3D27D4EB4F
	return &c.shards[h>>60]
}

// get returns the entry cached under k, pinned: its block stays valid
// until the caller unpins it.
func (c *Cache) get(k cacheKey) (*cacheEntry, bool) {
	s := c.shard(k)
	s.mu.Lock()
	e, ok := s.entries[k]
	if ok {
		e.state.Add(onePin)
		s.unlink(e)
		s.pushFront(e)
	}
	s.mu.Unlock()
	if !ok {
		c.misses.Add(1)
		return nil, false
	}
	c.hits.Add(1)
	return e, true
}

// getSlot is get for a point read that has the block's slot (see
// blockSlots): it pins the entry the slot holds, if that is k's and still
// cached, without the shard's mutex, else gets k as get does and keeps the
// entry found in the slot.
func (c *Cache) getSlot(k cacheKey, slot *atomic.Pointer[cacheEntry]) (*cacheEntry, bool) {
	if e := slot.Load(); e != nil && e.key == k && c.pinHit(e) {
		return e, true
	}
	e, ok := c.get(k)
	if ok {
		slot.Store(e)
	}
	return e, ok
}

// pinSlot pins the entry slot holds, if it is one of table's blocks still
// cached: the block of the slot's index entry, since only a read of that
// block stores it there.
func (c *Cache) pinSlot(table uint64, slot *atomic.Pointer[cacheEntry]) (*cacheEntry, bool) {
	if e := slot.Load(); e != nil && e.key.table == table && c.pinHit(e) {
		return e, true
	}
	return nil, false
}

// pinHit pins e for a hit through a slot, unless it has left the cache,
// marking it for eviction's second chance.
func (c *Cache) pinHit(e *cacheEntry) bool {
	if !e.tryPin() {
		return false
	}
	if !e.referenced.Load() {
		e.referenced.Store(true)
	}
	c.hits.Add(1)
	return true
}

// tryPin pins e unless it has left the cache; a pin taken before the
// eviction keeps its chunk until unpin, as get's does.
func (e *cacheEntry) tryPin() bool {
	for {
		st := e.state.Load()
		if st&1 != 0 {
			return false
		}
		if e.state.CompareAndSwap(st, st+onePin) {
			return true
		}
	}
}

// unpin releases a pin that get took.
func (c *Cache) unpin(e *cacheEntry) {
	if e.state.Add(-onePin) == 1 {
		s := c.shard(e.key)
		s.mu.Lock()
		s.free(e)
		s.mu.Unlock()
	}
}

// copyBlock returns a copy of the block cached under k, in buf's memory
// if it has room, for a reader that keeps it beyond a pin's span.
func (c *Cache) copyBlock(k cacheKey, buf []byte) ([]byte, bool) {
	e, ok := c.get(k)
	if !ok {
		return nil, false
	}
	b := append(buf[:0], e.block...)
	c.unpin(e)
	return b, true
}

// take drops the entry cached under k from the cache and returns it
// pinned, for the caller to copy its block out of before it unpins it.
func (c *Cache) take(k cacheKey) (*cacheEntry, bool) {
	s := c.shard(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[k]
	if !ok {
		return nil, false
	}
	e.state.Add(onePin)
	s.remove(e)
	return e, true
}

// fill caches a copy of a block a point read missed, as put does, if the
// shard has room for it or the block was refused twice lately (see
// refusedBlocks), and keeps the entry in slot, if the reader has one. A
// block the shard has room for gets the hints that hints, if not nil,
// builds, outside the shard's mutex; one it takes in place of another does
// not: a full cache's blocks come and go, most before a second read, and
// building hints for every block a full cache refused or took had made
// random reads over 10M keys with a cache of 256 MiB a third slower.
func (c *Cache) fill(k cacheKey, block []byte, hints func() restartHints, slot *atomic.Pointer[cacheEntry]) {
	s := c.shard(k)
	s.mu.Lock()
	room := s.used+chunkCharge(len(block)) <= s.capacity
	admit := room || s.refused.admit(k, len(s.entries))
	s.mu.Unlock()
	if !admit {
		return
	}
	var h restartHints
	if room && hints != nil && c.gate.fits.Load() {
		h = hints()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.put(k, block, h); e != nil && slot != nil {
		slot.Store(e)
	}
}

// put caches a copy of block under k, which the caller keeps.
func (c *Cache) put(k cacheKey, block []byte) {
	s := c.shard(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.put(k, block, restartHints{})
}

// storedSize is what a block and its hints take in a chunk: the block,
// padded to 8 bytes, the hints' numbers, their offsets, and their prefix.
func storedSize(block []byte, hints restartHints) int {
	if hints.keys == nil {
		return len(block)
	}
	return (len(block)+7)&^7 + 8*len(hints.keys) + 2*len(hints.offs) + len(hints.prefix)
}

// put caches a copy of block under k and returns its entry, or nil where
// the block is larger than the shard.
func (s *cacheShard) put(k cacheKey, block []byte, hints restartHints) *cacheEntry {
	if old, ok := s.entries[k]; ok {
		s.remove(old)
	}
	// Room first, so that the chunks of the blocks evicted can take it.
	n := storedSize(block, hints)
	charge := chunkCharge(n)
	if charge > s.capacity {
		return nil
	}
	for s.used+charge > s.capacity {
		s.evict()
	}
	e := &cacheEntry{key: k, stored: n}
	chunk := s.mem.alloc(n, s.capacity)
	if chunk != nil {
		e.mapped = true
	} else {
		chunk = make([]byte, n) // 8-byte aligned, as a chunk is
	}
	copy(chunk, block)
	e.block = chunk[:len(block)]
	if hints.keys != nil {
		at := (len(block) + 7) &^ 7
		keys := unsafe.Slice((*uint64)(unsafe.Pointer(&chunk[at])), len(hints.keys))
		copy(keys, hints.keys)
		at += 8 * len(keys)
		var offs []uint16
		if hints.offs != nil {
			offs = unsafe.Slice((*uint16)(unsafe.Pointer(&chunk[at])), len(hints.offs))
			copy(offs, hints.offs)
			at += 2 * len(offs)
		}
		prefix := chunk[at:n:n]
		copy(prefix, hints.prefix)
		e.hints = restartHints{prefix: prefix, keys: keys, offs: offs}
	}
	s.entries[k] = e
	s.pushFront(e)
	if head := s.tables[k.table]; head != nil {
		e.tableNext, head.tablePrev = head, e
	}
	s.tables[k.table] = e
	s.used += charge
	return e
}

// chunkCharge is what a block of n bytes costs the cache: the chunk that
// holds it and the entry's overhead.
func chunkCharge(n int) int64 {
	return int64((n+blockGrain-1)/blockGrain*blockGrain) + cacheEntryOverhead
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

// refusedBlocks remembers the blocks a full shard refused lately, about
// as many as it holds, and whether it refused each once or twice. A block
// displaces the least recently used one only when it misses a third time
// while remembered: a block read once or twice in a long while (most of
// them, when the data is much larger than the cache) costs a look here
// rather than a copy into the cache and an eviction, and does not evict a
// block read often. This is the admission of 2Q (Johnson and Shasha,
// 1994), with its FIFO of ids replaced by a direct-mapped table of key
// fingerprints: a refused key forgets the one whose slot it takes, and a
// miss costs one probe of an array rather than three operations on a map
// (docs/10-memory.md, "Admission"). 2Q admits at the second miss, which
// under uniform reads at the default budget copied a block at one miss in
// seven, for nothing; the third miss copies one in forty, while a block
// read often comes back at once.
type refusedBlocks struct {
	slots []uint64 // a key's fingerprint at its slot (see admit), 0 in an empty one
}

// admit reports whether k was refused twice lately, forgetting it if so,
// and otherwise remembers one refusal more, in place of whichever key held
// its slot: a slot holds a key's fingerprint, whose low bit is always set,
// with that bit cleared after one refusal. The table grows to at least
// max(blocks, minRefused) slots.
func (r *refusedBlocks) admit(k cacheKey, blocks int) bool {
	if want := max(blocks, minRefused); len(r.slots) < want {
		r.slots = make([]uint64, 1<<bits.Len(uint(want-1)))
	}
	fp := fingerprint(k)
	slot := &r.slots[r.slotOf(fp)]
	switch *slot {
	case fp:
		*slot = 0
		return true
	case fp &^ 1:
		*slot = fp
		return false
	}
	*slot = fp &^ 1
	return false
}

// fingerprint hashes k to a number that is never 0.
func fingerprint(k cacheKey) uint64 {
	h := k.table*0xD6E8FEB86659FD93 ^ k.offset
	h = (h ^ h>>30) * 0xBF58476D1CE4E5B9 // splitmix64's finalizer
	h = (h ^ h>>27) * 0x94D049BB133111EB
	return h ^ h>>31 | 1
}

// slotOf returns the slot of a key's fingerprint.
func (r *refusedBlocks) slotOf(fp uint64) int { return int(fp >> 1 & uint64(len(r.slots)-1)) }

// minRefused is how many slots a shard's refusedBlocks has at least, for
// a cache that holds few blocks.
const minRefused = 64

func (s *cacheShard) pushFront(e *cacheEntry) {
	e.prev, e.next = &s.lru, s.lru.next
	e.prev.next, e.next.prev = e, e
}

// evict drops the least recently used entry, once those at the tail a
// point read pinned through a slot since their last turn there have moved
// to the front (the second chance of CLOCK). The caller holds s.mu, and
// the shard holds an entry.
func (s *cacheShard) evict() {
	e := s.lru.prev
	for e.referenced.Load() {
		e.referenced.Store(false)
		s.unlink(e)
		s.pushFront(e)
		e = s.lru.prev
	}
	s.remove(e)
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
	s.used -= chunkCharge(e.stored)
	if e.state.Or(1) == 0 {
		s.free(e) // no read pins it
	}
}

// free gives an entry's chunk back to the shard's memory: it has left the
// cache and nothing pins it. The caller holds s.mu.
func (s *cacheShard) free(e *cacheEntry) {
	if e.mapped {
		s.mem.release(e.block)
	}
	e.block, e.hints = nil, restartHints{}
}
