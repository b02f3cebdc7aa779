package bloom

import (
	"errors"
	"fmt"
	"math"
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
	// their size and, at the moment of each copy, holding both.
	hashes [][]uint64
	n      int
}

// hashChunk is the number of hashes in a chunk: 64 KiB of them.
const hashChunk = 8192

// NewBuilder returns a Builder for bitsPerKey bits of filter per key
// (about 10 gives a 1% false positive rate).
func NewBuilder(bitsPerKey int) *Builder {
	return &Builder{bitsPerKey: max(bitsPerKey, 1)}
}

// Add adds a key. Adding a key twice costs filter space but is harmless.
func (b *Builder) Add(key []byte) {
	if b.n%hashChunk == 0 {
		if len(b.hashes) < cap(b.hashes) { // a chunk of an earlier filter
			b.hashes = b.hashes[:len(b.hashes)+1]
			b.hashes[len(b.hashes)-1] = b.hashes[len(b.hashes)-1][:0]
		} else {
			b.hashes = append(b.hashes, make([]uint64, 0, hashChunk))
		}
	}
	last := &b.hashes[len(b.hashes)-1]
	*last = append(*last, Hash(key))
	b.n++
}

// Len returns the number of keys added.
func (b *Builder) Len() int { return b.n }

// Build returns the encoded filter and resets the builder.
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
	b.hashes, b.n = b.hashes[:0], 0
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
		return nil, fmt.Errorf("%w: length %d", ErrMalformed, len(data))
	}
	if tag := data[len(data)-1]; tag != formatTag {
		return nil, fmt.Errorf("%w: unknown format %d", ErrMalformed, tag)
	}
	k := int(data[len(data)-2])
	if k < 1 || k > maxProbes {
		return nil, fmt.Errorf("%w: %d probes", ErrMalformed, k)
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
