package memstore

import (
	"slices"
	"sync/atomic"
)

const (
	// arenaChunkSize is the size of the chunks that hold key and value
	// bytes.
	arenaChunkSize = 64 << 10
	// arenaLargeEntry is the size above which an entry's bytes get an
	// allocation of their own: a chunk then wastes at most a quarter of
	// itself on a tail too short for the next entry.
	arenaLargeEntry = arenaChunkSize / 4
)

// arena holds the key and value bytes of a memstore in large chunks, so that
// memory is not lost, uncounted, to the size-class rounding of one
// allocation per entry. Memory is never freed piecemeal: the arena lives as
// long as the memstore. Only the writer allocates; the bytes of an entry are
// written before the entry is published, and never changed afterwards.
type arena struct {
	// chunk is the current chunk; its length is the part in use.
	chunk []byte
	// allocated counts the bytes of every chunk and large entry
	// allocated, used or not. Readers load it without locking.
	allocated atomic.Int64
}

// alloc returns n bytes, with capacity n, for the writer to fill.
func (a *arena) alloc(n int) []byte {
	if n > arenaLargeEntry {
		// Grow rounds the capacity up to the allocator's size class, so
		// the count includes the rounding.
		b := slices.Grow([]byte(nil), n)
		a.allocated.Add(int64(cap(b)))
		return b[:n:n]
	}
	if cap(a.chunk)-len(a.chunk) < n {
		a.chunk = make([]byte, 0, arenaChunkSize)
		a.allocated.Add(arenaChunkSize)
	}
	off := len(a.chunk)
	a.chunk = a.chunk[:off+n]
	return a.chunk[off : off+n : off+n]
}
