package memstore

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/stratadb/strata/internal/offheap"
)

// offHeapRegion is the size of the regions an off-heap arena maps: chunks
// are carved from them, so that a memstore costs a mapping per 4 MiB rather
// than one per chunk. Pages never touched cost address space, not memory,
// so the tail of a region too short for the next chunk costs nothing.
const offHeapRegion = 4 << 20

// mappedBytes counts the bytes of every region mapped and not yet
// released, of every memstore: what tests check Release and the cleanup
// against.
var mappedBytes atomic.Int64

// offHeap allocates an arena's memory outside the Go heap, in anonymous
// mappings, and frees it all at once. The garbage collector neither scans
// it nor counts it when it paces itself, so a database's memstores do not
// raise the heap's goal: without it, a heap holding 192 MiB of memstores
// may grow to twice that before a collection runs.
type offHeap struct {
	mu      sync.Mutex
	regions [][]byte // the mappings, for free
	free    []byte   // the unused tail of the last region
}

// bytes returns n zeroed bytes, n a multiple of 8, from the mappings, or
// from the Go heap where the system refuses a mapping: memory is then
// freed by the garbage collector, as without offHeap, rather than not at
// all.
func (h *offHeap) bytes(n int) []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.free) < n {
		r, err := offheap.Map(max(offHeapRegion, n))
		if err != nil {
			return heapBytes(n)[:n]
		}
		mappedBytes.Add(int64(cap(r)))
		h.regions = append(h.regions, r)
		h.free = r
	}
	b := h.free[:n:n]
	h.free = h.free[n:]
	return b
}

// release unmaps every region. The memory must be unreachable: a read of
// it afterwards faults.
func (h *offHeap) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.regions {
		offheap.Unmap(r)
		mappedBytes.Add(-int64(cap(r)))
	}
	h.regions, h.free = nil, nil
}

// heapBytes returns at least n zeroed bytes from the Go heap, all of
// them: the allocator rounds n up to its size class.
func heapBytes(n int) []byte {
	b := slices.Grow([]byte(nil), n)
	return b[:cap(b)]
}
