package main

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A quantile of the histogram is within 1/64 of the exact one, whatever
// the spread of the latencies; below 64 ns it is exact.
func TestLatencyQuantiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	cases := map[string]func() time.Duration{
		"nanoseconds":   func() time.Duration { return time.Duration(rng.IntN(64)) },
		"microseconds":  func() time.Duration { return time.Duration(1000 + rng.IntN(50_000)) },
		"heavy tail":    func() time.Duration { return time.Duration(rng.ExpFloat64() * 20_000) },
		"seconds apart": func() time.Duration { return time.Duration(rng.Int64N(int64(10 * time.Second))) },
	}
	for name, draw := range cases {
		t.Run(name, func(t *testing.T) {
			var l, half latencies
			var all []time.Duration
			for i := range 100_000 {
				d := draw()
				all = append(all, d)
				if i%2 == 0 {
					l.add(d)
				} else {
					half.add(d)
				}
			}
			l.merge(&half)
			require.EqualValues(t, len(all), l.n)
			slices.Sort(all)
			for _, p := range []float64{0, 0.5, 0.9, 0.99, 0.999, 1} {
				want := all[int(p*float64(len(all)-1))]
				got := l.quantile(p)
				require.InDelta(t, float64(want), float64(got), float64(want)/64+0.5, "p%v", p)
			}
		})
	}
	var empty latencies
	require.Zero(t, empty.quantile(0.5))
}

// Every duration falls in a bucket whose range holds it, buckets ascend,
// and the largest duration has one.
func TestLatencyBuckets(t *testing.T) {
	prev := -1
	for _, ns := range []uint64{0, 1, 63, 64, 65, 127, 128, 129, 1000, 1 << 20, 1<<20 + 1, 1<<63 - 1, 1<<64 - 1} {
		b := latencyBucket(ns)
		require.Less(t, b, latencyBuckets, "%d", ns)
		require.GreaterOrEqual(t, b, prev, "%d", ns)
		prev = b
		mid := bucketMid(b)
		require.InDelta(t, float64(ns), float64(mid), float64(ns)/64+0.5, "%d", ns)
	}
}
