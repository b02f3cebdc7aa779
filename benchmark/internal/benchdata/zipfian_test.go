package benchdata

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// zeta computes sum_{i=1..n} 1/i^theta, the zetan of a Zipfian over n
// items.
func zeta(n uint64, theta float64) float64 {
	var sum float64
	for i := uint64(1); i <= n; i++ {
		sum += 1 / math.Pow(float64(i), theta)
	}
	return sum
}

// Item i of a Zipfian over n items has probability 1/((i+1)^theta zeta(n)):
// with theta 0.99 over 1000 items, item 0 draws about 13% of the samples.
// Gray's algorithm draws items 0 and 1 exactly and the rest from a closed-
// form approximation, so those get a looser tolerance.
func TestZipfianFollowsItsDistribution(t *testing.T) {
	const n = 1000
	z := NewZipfian(rand.New(rand.NewPCG(1, 1)), n, 0.99, zeta(n, 0.99))
	counts := make([]int, n)
	const draws = 1_000_000
	for range draws {
		v := z.Next()
		require.Less(t, v, uint64(n))
		counts[v]++
	}
	zn := zeta(n, 0.99)
	for _, tc := range []struct {
		i   int
		eps float64
	}{{0, 0.02}, {1, 0.03}, {9, 0.15}, {99, 0.15}} {
		want := draws / (zn * math.Pow(float64(tc.i+1), 0.99))
		require.InEpsilon(t, want, float64(counts[tc.i]), tc.eps, "item %d", tc.i)
	}
}

// The scrambled generator stays in range and is skewed: its most popular
// items take a large share of the draws.
func TestScrambledZipfianIsSkewed(t *testing.T) {
	const n = 100000
	s := NewScrambledZipfian(rand.New(rand.NewPCG(2, 2)), n)
	counts := map[uint64]int{}
	for range 200000 {
		v := s.Next()
		require.Less(t, v, uint64(n))
		counts[v]++
	}
	top := 0
	for _, c := range counts {
		top = max(top, c)
	}
	// YCSB's hottest item has probability 1/zetan, 3.8%.
	require.Greater(t, top, 200000*3/100, "the hottest key should take over 3% of reads")
	// 200,000 uniform draws over 100,000 keys touch 86,466 of them.
	require.Less(t, len(counts), 80000, "a Zipfian touches fewer keys than uniform draws")
}

// fnv64 is FNV-1a 64 over the value's bytes, low first, made
// non-negative: check it against the standard library's FNV-1a.
func TestFNV64(t *testing.T) {
	for _, v := range []uint64{0, 1, 42, 1 << 40, ^uint64(0)} {
		h := fnv.New64a()
		h.Write(binary.LittleEndian.AppendUint64(nil, v))
		want := h.Sum64()
		if int64(want) < 0 {
			want = uint64(-int64(want))
		}
		require.Equal(t, want, fnv64(v), "%d", v)
	}
}
