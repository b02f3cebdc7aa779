package sstables

import (
	"sync/atomic"

	"github.com/stratadb/strata/internal/offheap"
)

const (
	// blockGrain is the granularity of the chunks that hold cached blocks:
	// a block of 4 KiB and a few entries more wastes at most this much.
	blockGrain = 512
	// blockRegion is the size of the mappings chunks are carved from. A
	// shard maps another only while its mappings are short of its
	// capacity, so the cache's memory exceeds its capacity by less than a
	// region per shard.
	blockRegion = 256 << 10
	// hugeRegion is the region of a shard of at least hugeShard bytes:
	// one huge page (offheap.MapHuge). A cached Get of 1M keys, whose
	// blocks are read at random over 110 MB, spent 8% less with them
	// (1.92-1.98 µs p50 against 2.08-2.24, BenchmarkSimpleDBCachedGet):
	// fewer TLB misses. A shard of hugeShard exceeds its capacity by an
	// eighth at most.
	hugeRegion = offheap.HugePage
	hugeShard  = 8 * hugeRegion
	// largestChunk bounds the blocks kept off the heap: a larger one (a
	// block of large values) stays in the Go heap.
	largestChunk = blockRegion / 4
	// fitClasses is how many sizes above its own a block may take a free
	// chunk of, rather than mapping more.
	fitClasses = 4
)

// blockMemory holds a cache shard's blocks outside the Go heap (see
// offheap), so that the cache neither raises the heap's goal, letting the
// heap grow to twice the cache before a collection, nor turns every evicted
// block into garbage. Chunks are carved from mappings in sizes that are
// multiples of blockGrain; an evicted block's chunk waits in a free list
// for the next block of its size. The mappings are returned when the cache
// is unreachable. The shard's mutex guards it.
type blockMemory struct {
	// huge: regions of hugeRegion while fits holds (the cache's
	// readGate), else of blockRegion.
	huge    bool
	fits    *atomic.Bool
	free    map[int][][]byte // chunks by size
	bump    []byte           // the uncarved end of the last region
	regions [][]byte         // the mappings, for unmap
	mapped  int64
}

// newBlockMemory returns the memory of a shard of capacity bytes, which
// maps huge pages while fits holds.
func newBlockMemory(capacity int64, fits *atomic.Bool) *blockMemory {
	return &blockMemory{huge: capacity >= hugeShard, fits: fits}
}

// alloc returns a chunk for n bytes, sliced to n, or nil where the block
// is too large, or a new mapping would take the shard's memory beyond
// limit, or the system refuses one: the caller keeps the block in the Go
// heap instead.
func (m *blockMemory) alloc(n int, limit int64) []byte {
	size := (n + blockGrain - 1) / blockGrain * blockGrain
	if size > largestChunk {
		return nil
	}
	for c := size; c <= min(size+fitClasses*blockGrain, largestChunk); c += blockGrain {
		if l := m.free[c]; len(l) > 0 {
			b := l[len(l)-1]
			m.free[c] = l[:len(l)-1]
			return b[:n]
		}
	}
	if len(m.bump) < size {
		if m.mapped >= limit {
			return nil
		}
		mapping, region, err := m.mapRegion()
		if err != nil {
			return nil
		}
		m.regions = append(m.regions, mapping)
		m.mapped += int64(len(region))
		m.bump = region
	}
	b := m.bump[:size:size]
	m.bump = m.bump[size:]
	return b[:n]
}

// mapRegion maps another region: the mapping, and the region in it.
func (m *blockMemory) mapRegion() (mapping, region []byte, err error) {
	if m.huge && m.fits.Load() {
		return offheap.MapHuge(hugeRegion)
	}
	r, err := offheap.Map(blockRegion)
	return r, r, err
}

// release puts a chunk that alloc returned back on its free list.
func (m *blockMemory) release(b []byte) {
	if m.free == nil {
		m.free = make(map[int][][]byte)
	}
	m.free[cap(b)] = append(m.free[cap(b)], b[:cap(b)])
}

// unmap returns every region: the cache is unreachable.
func (m *blockMemory) unmap() {
	for _, r := range m.regions {
		offheap.Unmap(r)
	}
}
