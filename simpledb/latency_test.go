package simpledb

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/testseed"
	"github.com/stretchr/testify/require"
)

// Every duration lands in a bucket whose middle is within 6.25% of it, and
// buckets are in the order of their durations.
func TestLatencyBuckets(t *testing.T) {
	rng := rand.New(rand.NewPCG(testseed.Seed(t), 0))
	last := -1
	for ns := int64(0); ns < 1<<12; ns++ {
		b := latencyBucket(ns)
		require.GreaterOrEqual(t, b, last, "%d ns", ns)
		last = b
	}
	for range 100000 {
		ns := rng.Int64N(1 << rng.IntN(63))
		b := latencyBucket(ns)
		require.Less(t, b, latencyBuckets)
		mid := int64(latencyBucketMiddle(b))
		require.InDelta(t, float64(ns), float64(mid), float64(ns)/16+1, "%d ns in bucket %d, middle %d", ns, b, mid)
	}
	require.Less(t, latencyBucket(1<<63-1), latencyBuckets)
}

// Quantiles of known durations, added from several goroutines at once,
// are within a bucket of the exact ones, and the maximum is exact.
func TestLatencyQuantiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(testseed.Seed(t), 1))
	var h latencyHistogram
	require.Equal(t, LatencyStats{}, h.stats())
	durations := make([]time.Duration, 40000)
	for i := range durations {
		durations[i] = time.Duration(rng.ExpFloat64() * float64(50*time.Microsecond))
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for _, d := range durations[g*10000 : (g+1)*10000] {
				h.add(d)
			}
		})
	}
	wg.Wait()
	slices.Sort(durations)
	s := h.stats()
	require.Equal(t, int64(len(durations)), s.Count)
	require.Equal(t, durations[len(durations)-1], s.Max)
	var sum time.Duration
	for _, d := range durations {
		sum += d
	}
	require.Equal(t, sum, s.Sum)
	// The buckets by powers of two are exact: a bucket's boundaries are.
	require.NotEmpty(t, s.Buckets)
	require.Equal(t, s.Count, s.Buckets[len(s.Buckets)-1].Count)
	for _, b := range s.Buckets {
		n, _ := slices.BinarySearch(durations, b.UpperBound+1)
		require.Equal(t, int64(n), b.Count, "at or below %v", b.UpperBound)
	}
	for _, tc := range []struct {
		got  time.Duration
		want time.Duration
	}{{s.P50, durations[len(durations)/2]}, {s.P99, durations[len(durations)*99/100]}} {
		require.InDelta(t, float64(tc.want), float64(tc.got), float64(tc.want)/8, "got %v, want %v", tc.got, tc.want)
	}
}
