package bloom

import "sync/atomic"

// concurrentProbes is a Concurrent filter's probes per key. Its size is set
// before the number of keys is known; 6 is the best count at about 9 bits
// per key, and costs little more than the best at 20.
const concurrentProbes = 6

// Concurrent is a filter of a fixed size that keys are added to while it
// is queried: the filter of a memstore, which answers reads while writes
// fill it. It is blocked as the encoded filter is, one 64-byte block per
// key, but it lives only in memory: its bits are laid out in words that Add
// sets atomically, and it is never encoded. Add and MayContainHash are safe
// for concurrent use; a query that follows an Add (in the memory model's
// sense) finds its key.
type Concurrent struct {
	words   []uint64
	nblocks int
}

// NewConcurrent returns an empty filter of about size bytes (one block at
// least).
func NewConcurrent(size int) *Concurrent {
	nblocks := max(1, size/blockBytes)
	return &Concurrent{words: make([]uint64, nblocks*blockBytes/8), nblocks: nblocks}
}

// block returns the words of h's block.
func (f *Concurrent) block(h uint64) []uint64 {
	start := blockOffset(h, f.nblocks) / 8
	return f.words[start : start+blockBytes/8]
}

// Add adds the key whose Hash is h.
func (f *Concurrent) Add(h uint64) {
	var masks [blockBytes / 8]uint64
	x := h
	for range concurrentProbes {
		bit := nextProbe(&x)
		masks[bit/64] |= 1 << (bit % 64)
	}
	block := f.block(h)
	for i, m := range masks {
		// A key written again finds its bits set: a load spares the
		// locked instruction.
		if m != 0 && atomic.LoadUint64(&block[i])&m != m {
			atomic.OrUint64(&block[i], m)
		}
	}
}

// MayContainHash reports whether the key whose Hash is h may have been
// added: false is certain.
func (f *Concurrent) MayContainHash(h uint64) bool {
	block := f.block(h)
	x := h
	for range concurrentProbes {
		bit := nextProbe(&x)
		if atomic.LoadUint64(&block[bit/64])&(1<<(bit%64)) == 0 {
			return false
		}
	}
	return true
}

// Size returns the filter's size in bytes.
func (f *Concurrent) Size() int { return len(f.words) * 8 }
