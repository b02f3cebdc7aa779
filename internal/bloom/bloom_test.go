package bloom

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// Published XXH64 test vectors (seed 0).
func TestHashVectors(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
	}{
		{"", 0xef46db3751d8e999},
		{"a", 0xd24ec4f1a98c6e5b},
		{"as", 0x1c330fb2d66be179},
		{"asd", 0x631c37ce72a97393},
		{"asdf", 0x415872f599cea71e},
		{"abc", 0x44bc2cf5ad770999},
		{"Call me Ishmael. Some years ago--never mind how long precisely-", 0x02a2e85470d6fd96},
		{"Nobody inspects the spammish repetition", 0xfbcea83c8a378bf1},
	} {
		require.Equal(t, tc.want, Hash([]byte(tc.in)), "%q", tc.in)
	}
}

func key(i int) []byte {
	return binary.BigEndian.AppendUint64([]byte("key-"), uint64(i))
}

// One Builder builds every filter, reusing its chunks of hashes.
func TestNoFalseNegatives(t *testing.T) {
	b := NewBuilder(10)
	for _, n := range []int{0, 1, 10, 1000, 50000, 20000, 8192, 8193, 10} {
		for i := range n {
			b.Add(key(i))
		}
		require.Equal(t, n, b.Len())
		f, err := Decode(b.Build())
		require.NoError(t, err)
		for i := range n {
			require.True(t, f.MayContain(key(i)), "n=%d key %d", n, i)
		}
	}
}

func TestFalsePositiveRate(t *testing.T) {
	for _, tc := range []struct {
		bitsPerKey int
		maxRate    float64
	}{
		{5, 0.12},
		{10, 0.02},
		{20, 0.001},
	} {
		t.Run(fmt.Sprint(tc.bitsPerKey), func(t *testing.T) {
			const n = 100000
			b := NewBuilder(tc.bitsPerKey)
			for i := range n {
				b.Add(key(i))
			}
			f, err := Decode(b.Build())
			require.NoError(t, err)
			fp := 0
			for i := n; i < 2*n; i++ {
				if f.MayContain(key(i)) {
					fp++
				}
			}
			rate := float64(fp) / n
			t.Logf("%d bits/key: false positive rate %.4f, %d bytes", tc.bitsPerKey, rate, f.Size())
			require.Less(t, rate, tc.maxRate)
		})
	}
}

func TestDecodeRejectsMalformed(t *testing.T) {
	good := NewBuilder(10).Build()
	for name, data := range map[string][]byte{
		"empty":       nil,
		"short":       good[:10],
		"ragged":      append(append([]byte{}, good[:64]...), 1, 2, 3),
		"unknown tag": append(append([]byte{}, good[:len(good)-1]...), 9),
		"zero probes": append(append([]byte{}, good[:len(good)-2]...), 0, formatTag),
		"many probes": append(append([]byte{}, good[:len(good)-2]...), 31, formatTag),
	} {
		_, err := Decode(data)
		require.ErrorIs(t, err, ErrMalformed, name)
	}
}

// FuzzDecode checks that any bytes either fail to decode or give a filter
// that answers queries without panicking.
func FuzzDecode(f *testing.F) {
	b := NewBuilder(10)
	b.Add([]byte("a"))
	f.Add(b.Build(), []byte("a"))
	f.Fuzz(func(t *testing.T, data, probe []byte) {
		filter, err := Decode(data)
		if err != nil {
			return
		}
		filter.MayContain(probe)
	})
}
