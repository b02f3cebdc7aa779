package memstore

import (
	"bytes"
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/testseed"
	"github.com/stretchr/testify/require"
)

// newTestArena returns an arena with its head in place.
func newTestArena() *arena {
	a := &arena{}
	a.init()
	return a
}

// sharedPrefix returns the length of the prefix a and b share.
func sharedPrefix(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func TestNodeLayout(t *testing.T) {
	tests := []struct {
		name       string
		height     int
		key, value []byte
		kind       Kind
	}{
		{name: "one-byte key", height: 1, key: []byte("k"), value: []byte("v"), kind: KindSet},
		{name: "word-sized key", height: 3, key: []byte("12345678"), value: []byte("value"), kind: KindSet},
		{name: "key across words", height: 2, key: []byte("0000000000000042x"), value: bytes.Repeat([]byte{7}, 100), kind: KindSet},
		{name: "empty value", height: 1, key: []byte("k"), value: []byte{}, kind: KindSet},
		{name: "tombstone", height: 5, key: []byte("k"), kind: KindDelete},
		{name: "full height", height: maxHeight, key: []byte("tall"), value: []byte("v"), kind: KindSet},
		{name: "large value", height: 2, key: []byte("k"), value: bytes.Repeat([]byte{1}, arenaLargeEntry+1), kind: KindSet},
		{name: "large key", height: 2, key: bytes.Repeat([]byte{2}, arenaLargeEntry), value: []byte("v"), kind: KindSet},
		{name: "largest key", height: 4, key: bytes.Repeat([]byte{3}, MaxKeySize), value: []byte("v"), kind: KindSet},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newTestArena()
			trailer := base.MakeTrailer(42, tt.kind)
			x, n := a.newNode(tt.height, tt.key, tt.value, trailer)
			_, at := a.node(a.load(), x)
			require.Same(t, n, at, "the addr resolves to the node")
			require.Zero(t, uintptr(unsafe.Pointer(n))%8, "the header is aligned")
			require.Equal(t, tt.key, n.key())
			require.Equal(t, len(tt.key), cap(n.key()))
			require.Equal(t, uint64(42), n.seq())
			require.Equal(t, tt.kind, n.kind())
			for level := range tt.height {
				require.Zero(t, n.link(level).Load(), "link %d", level)
			}
			tb, ver, _ := a.version(a.load(), n, MaxSeq)
			_, v := a.bytesOf(tb, n, ver)
			if tt.kind == KindDelete {
				require.Nil(t, v)
			} else {
				require.NotNil(t, v)
				require.Equal(t, tt.value, v)
				require.Equal(t, len(tt.value), cap(v))
			}
			// The key's word area is zero-padded.
			require.Equal(t, keyWord(tt.key), n.word())
			pad := unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(n), headerSize+len(tt.key))), keyArea(len(tt.key))-len(tt.key))
			require.Equal(t, make([]byte, len(pad)), pad)
			// A large node has an allocation of its own, its header
			// right after its tower.
			if tower := tt.height * linkSize; tower+headerSize+keyArea(len(tt.key))+tailSize > arenaLargeEntry {
				require.Equal(t, addr(tower), x&(1<<32-1))
			}
		})
	}
}

// Every allocation is counted, with the allocator's rounding, and a
// stream's chunks double up to arenaChunkSize.
func TestArenaAccounting(t *testing.T) {
	a := newTestArena()
	want := int64(cap(slices.Grow([]byte(nil), maxHeight*linkSize+headerSize+keyArea(0)+tailSize)))
	var sizes []int
	for range 3000 {
		x, b := a.alloc(&a.values, 100)
		require.Len(t, b, 100)
		require.Equal(t, 100, cap(b))
		if uint32(x) == 0 {
			// A new chunk.
			sizes = append(sizes, len(a.values.free)+100)
			want += int64(len(a.values.free) + 100)
		}
	}
	require.Equal(t, []int{1 << 10, 2 << 10, 4 << 10, 8 << 10, 16 << 10, 32 << 10, 64 << 10, 64 << 10}, sizes[:8])
	x, big := a.alloc(&a.values, arenaLargeEntry+1)
	require.Len(t, big, arenaLargeEntry+1)
	require.Zero(t, uint32(x), "a large allocation is one of its own")
	want += int64(cap(slices.Grow([]byte(nil), arenaLargeEntry+1)))
	want += int64(cap(a.bases)) * int64(unsafe.Sizeof(unsafe.Pointer(nil)))
	require.Equal(t, want, a.allocated.Load())
}

// A reader whose table predates an allocation loads the table again when
// it meets an addr in that allocation.
func TestArenaStaleTable(t *testing.T) {
	a := newTestArena()
	stale := a.load()
	x, b := a.alloc(&a.values, 8)
	copy(b, "abcdefgh")
	require.GreaterOrEqual(t, int(x>>32), len(stale))
	t2, p := a.at(stale, x)
	require.Equal(t, "abcdefgh", string(unsafe.Slice((*byte)(p), 8)))
	require.Greater(t, len(t2), int(x>>32))
}

// compareFrom and compare order entries as bytes.Compare and trailers
// descending do, from any word boundary within the prefix the keys share,
// and report that prefix rounded down to whole words.
func TestCompareMatchesBytesCompare(t *testing.T) {
	rng := rand.New(rand.NewPCG(testseed.Seed(t), 0))
	a := newTestArena()
	key := func(prefix []byte) []byte {
		k := append([]byte(nil), prefix[:rng.IntN(len(prefix)+1)]...)
		for range rng.IntN(12) {
			k = append(k, "\x00\x01\xfe\xff"[rng.IntN(4)])
		}
		return k
	}
	prefix := []byte("0000000000000000000000000000000000000000")
	for range 20_000 {
		nk, k := key(prefix), key(prefix)
		if len(nk) == 0 {
			nk = []byte{0}
		}
		nt, kt := rng.Uint64N(1<<20), rng.Uint64N(1<<20)
		_, n := a.newNode(1, nk, nil, nt)
		want := bytes.Compare(nk, k)
		if want == 0 {
			want = cmp.Compare(kt, nt)
		}
		shared := sharedPrefix(nk, k)
		for i := 0; i <= shared; i += wordSize {
			c, s := compareFrom(n, k, kt, i)
			require.Equal(t, want, c, "%x vs %x from %d", nk, k, i)
			require.Equal(t, shared&^(wordSize-1), s, "%x vs %x from %d", nk, k, i)
		}
		c, same := compare(n, k, keyWord(k), kt)
		require.Equal(t, want, c, "%x vs %x", nk, k)
		require.Equal(t, bytes.Equal(nk, k), same)
		if nw, kw := n.word(), keyWord(k); nw != kw {
			require.Equal(t, bytes.Compare(nk, k), cmp.Compare(nw, kw), "words of %x and %x", nk, k)
		}
	}
}
