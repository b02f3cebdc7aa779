package bloom

import (
	"errors"
	"math"
	"runtime"
	"unsafe"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/internal/offheap"
)

const (
	blockBytes = 64
	blockBits  = blockBytes * 8
	// formatTag names the layout and hash, in the filter's last byte.
	formatTag = 1
	maxProbes = 30
)

// ErrMalformed reports filter bytes that do not decode. Callers wrap it with
// the file and offset it came from.
var ErrMalformed = errors.New("bloom: malformed filter")

// Builder collects key hashes and builds a filter sized for them.
type Builder struct {
	bitsPerKey int
	// hashes are kept in fixed chunks, not one growing slice: a table of
	// 64 MiB has about half a million keys, and growing a slice to hold
	// their hashes would copy them over and over, making garbage of twice
	// their size and, at the moment of each copy, holding both. The chunks
	// lie outside the Go heap where the system maps memory (see
	// offHeapChunks).
	hashes [][]uint64
	mapped *offHeapChunks
	n      int
}

// hashChunk is the number of hashes in a chunk: 64 KiB of them.
const hashChunk = 8192

// offHeapChunks are a Builder's mappings. A compaction's output table
// holds its keys' hashes until it is finished: 4.6 MB for a table of
// 64 MiB of 100-byte values, the largest thing it keeps live. In the Go
// heap they raised the collector's goal by twice that for the next cycle;
// mapped, they cost what they hold, and go back to the system at Build.
type offHeapChunks struct{ mappings [][]byte }

func (c *offHeapChunks) unmap() {
	for _, m := range c.mappings {
		offheap.Unmap(m)
	}
	c.mappings = nil
}

// NewBuilder returns a Builder for bitsPerKey bits of filter per key
// (about 10 gives a 1% false positive rate).
func NewBuilder(bitsPerKey int) *Builder {
	b := &Builder{bitsPerKey: max(bitsPerKey, 1), mapped: &offHeapChunks{}}
	// A Builder dropped before Build (a table abandoned) unmaps its
	// chunks once it is unreachable.
	runtime.AddCleanup(b, (*offHeapChunks).unmap, b.mapped)
	return b
}

// Add adds a key. Adding a key twice costs filter space but is harmless.
func (b *Builder) Add(key []byte) {
	if b.n%hashChunk == 0 {
		b.hashes = append(b.hashes, b.newChunk())
	}
	last := &b.hashes[len(b.hashes)-1]
	*last = append(*last, Hash(key))
	b.n++
}

// newChunk returns an empty chunk for hashChunk hashes, mapped, or from
// the Go heap where the system refuses a mapping.
func (b *Builder) newChunk() []uint64 {
	m, err := offheap.Map(hashChunk * 8)
	if err != nil {
		return make([]uint64, 0, hashChunk)
	}
	b.mapped.mappings = append(b.mapped.mappings, m)
	return unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(m))), hashChunk)[:0]
}

// Len returns the number of keys added.
func (b *Builder) Len() int { return b.n }

// Build returns the encoded filter and resets the builder, returning the
// memory of the hashes.
func (b *Builder) Build() []byte {
	nblocks := max(1, (b.n*b.bitsPerKey+blockBits-1)/blockBits)
	// k = ln 2 × bits per key minimises the false positive rate.
	k := min(maxProbes, max(1, int(math.Round(float64(b.bitsPerKey)*math.Ln2))))
	out := make([]byte, nblocks*blockBytes+2)
	for _, chunk := range b.hashes {
		for _, h := range chunk {
			block := out[blockOffset(h, nblocks):]
			x := h
			for range k {
				bit := nextProbe(&x)
				block[bit/8] |= 1 << (bit % 8)
			}
		}
	}
	out[len(out)-2] = byte(k)
	out[len(out)-1] = formatTag
	b.hashes, b.n = nil, 0
	b.mapped.unmap()
	return out
}

// blockOffset maps the hash's high half onto a block by multiplying and
// shifting, which is uniform like a modulo but needs no division.
func blockOffset(h uint64, nblocks int) int {
	return int((h>>32)*uint64(nblocks)>>32) * blockBytes
}

// nextProbe steps a 64-bit linear congruential sequence seeded with the
// hash and returns its top 9 bits, a bit position in the block. Unlike
// double hashing modulo 512 (whose step can be even, or 0), every probe is
// drawn afresh, which matters with many probes in a small block.
func nextProbe(x *uint64) uint {
	*x = *x*prime1 + prime3
	return uint(*x >> (64 - 9))
}

// Filter is a decoded filter. It aliases the bytes it was decoded from.
type Filter struct {
	blocks  []byte
	nblocks int
	k       int
}

// Decode checks and wraps encoded filter bytes.
func Decode(data []byte) (*Filter, error) {
	if len(data) < blockBytes+2 || (len(data)-2)%blockBytes != 0 {
		return nil, errs.Errorf("%w: length %d", ErrMalformed, len(data))
	}
	if tag := data[len(data)-1]; tag != formatTag {
		return nil, errs.Errorf("%w: unknown format %d", ErrMalformed, tag)
	}
	k := int(data[len(data)-2])
	if k < 1 || k > maxProbes {
		return nil, errs.Errorf("%w: %d probes", ErrMalformed, k)
	}
	return &Filter{blocks: data[:len(data)-2], nblocks: (len(data) - 2) / blockBytes, k: k}, nil
}

// MayContain reports whether key may have been added: false is certain,
// true is wrong with the filter's false positive rate.
func (f *Filter) MayContain(key []byte) bool {
	return f.MayContainHash(Hash(key))
}

// MayContainHash is MayContain for a key whose Hash is already known, so
// that a lookup across many tables hashes the key once.
func (f *Filter) MayContainHash(h uint64) bool {
	block := f.blocks[blockOffset(h, f.nblocks):]
	x := h
	for range f.k {
		bit := nextProbe(&x)
		if block[bit/8]&(1<<(bit%8)) == 0 {
			return false
		}
	}
	return true
}

// Size returns the filter's size in bytes.
func (f *Filter) Size() int { return len(f.blocks) + 2 }
