package simpledb

import (
	"math"
	"math/bits"
	"sync/atomic"
	"time"
)

// latencyHistogram counts durations in buckets of about 12% of their
// value, log-linear as HdrHistogram's: 8 buckets per power of two. Adding
// is two atomic adds and a compare; it is safe for concurrent use, and
// takes no lock, so that the paths it times (commits, Gets) do not wait on
// each other for it. Quantiles read from it are the middle of their
// bucket: within 6% of the duration.
type latencyHistogram struct {
	counts   [latencyBuckets]atomic.Int64
	max, sum atomic.Int64 // nanoseconds
}

const (
	latencySubBits = 3
	// latencyBuckets covers every duration an int64 of nanoseconds holds.
	latencyBuckets = (64 - latencySubBits + 1) << latencySubBits
)

// latencyBucket returns the bucket of ns: ns itself below 8, else 8 per
// power of two, by the 3 bits after the leading one.
func latencyBucket(ns int64) int {
	if ns < 1<<latencySubBits {
		return int(max(ns, 0))
	}
	e := bits.Len64(uint64(ns)) - 1 // ≥ latencySubBits
	m := int(ns>>(e-latencySubBits)) & (1<<latencySubBits - 1)
	return (e-latencySubBits+1)<<latencySubBits | m
}

// latencyBucketMiddle returns the middle of bucket b's durations.
func latencyBucketMiddle(b int) time.Duration {
	if b < 1<<latencySubBits {
		return time.Duration(b)
	}
	e := b>>latencySubBits + latencySubBits - 1
	m := int64(b & (1<<latencySubBits - 1))
	lower := (1<<latencySubBits + m) << (e - latencySubBits)
	width := int64(1) << (e - latencySubBits)
	return time.Duration(lower + width/2)
}

func (h *latencyHistogram) add(d time.Duration) {
	ns := int64(d)
	h.counts[latencyBucket(ns)].Add(1)
	h.sum.Add(ns)
	for {
		m := h.max.Load()
		if ns <= m || h.max.CompareAndSwap(m, ns) {
			return
		}
	}
}

// LatencyStats summarises a histogram of durations: how many, the median,
// the 99th percentile (each within 6%), the longest and the sum (exact),
// and the counts by powers of two, for a histogram of one's own (a
// Prometheus one, say).
type LatencyStats struct {
	Count         int64
	P50, P99, Max time.Duration
	Sum           time.Duration
	// Buckets holds, for each power of two from 1 µs (2^10 ns) up to the
	// one at or above Max, the durations at or below it: cumulative,
	// ending at Count. Empty when Count is 0.
	Buckets []LatencyBucket
}

// LatencyBucket is a bucket of LatencyStats.Buckets.
type LatencyBucket struct {
	UpperBound time.Duration
	Count      int64 // durations at or below UpperBound
}

func (h *latencyHistogram) stats() LatencyStats {
	var counts [latencyBuckets]int64
	var s LatencyStats
	for i := range counts {
		counts[i] = h.counts[i].Load()
		s.Count += counts[i]
	}
	if s.Count == 0 {
		return s
	}
	s.Max, s.Sum = time.Duration(h.max.Load()), time.Duration(h.sum.Load())
	s.P50, s.P99 = min(quantile(&counts, s.Count, 0.50), s.Max), min(quantile(&counts, s.Count, 0.99), s.Max)
	// A power of two ends a run of 8 buckets: those below 2^e are the
	// buckets before latencyBucket(2^e).
	var below int64
	b := 0
	s.Buckets = make([]LatencyBucket, 0, 63-10)
	for e := 10; e < 63; e++ {
		for end := latencyBucket(1 << e); b < end; b++ {
			below += counts[b]
		}
		s.Buckets = append(s.Buckets, LatencyBucket{UpperBound: time.Duration(1<<e - 1), Count: below})
		if below == s.Count {
			break
		}
	}
	return s
}

// quantile returns the middle of the bucket that holds the q-th of the
// total durations counted.
func quantile(counts *[latencyBuckets]int64, total int64, q float64) time.Duration {
	rank := max(int64(math.Ceil(q*float64(total))), 1) // nearest rank
	var seen int64
	for b, n := range counts {
		if seen += n; seen >= rank {
			return latencyBucketMiddle(b)
		}
	}
	return 0
}
