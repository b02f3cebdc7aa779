package benchmark

import (
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stratadb/strata/benchmark/internal/benchdata"
)

// The in-memory benchmarks (skiplist, memstore) share one data set: 1M
// random 16-byte keys with 100-byte values, drawn from a fixed seed, and as
// many further keys that are not in it, for misses.
const (
	kvSeed      = 20240611
	kvCount     = 1_000_000
	kvKeySize   = 16
	kvValueSize = 100
)

type kvDataset struct {
	keys, values [][]byte
	// order is a random permutation of the indexes of keys, the order in
	// which to look them up: reading in insertion order would walk nodes
	// allocated in that order, sequentially in memory, and flatter a
	// structure that allocates per insert.
	order []int
	// misses are keys that are not in keys.
	misses [][]byte
}

// kvData returns the shared data set, generating it on first use.
var kvData = sync.OnceValue(func() *kvDataset {
	src := benchdata.NewSource(kvSeed)
	d := &kvDataset{
		keys:   randomSlices(src, kvCount, kvKeySize),
		values: randomSlices(src, kvCount, kvValueSize),
		misses: randomSlices(src, kvCount, kvKeySize),
	}
	d.order = rand.New(src).Perm(kvCount)
	return d
})

// randomSlices returns n random byte slices of the given size, carved from
// one allocation. With 128 random bits per key, two equal keys are not a
// concern.
func randomSlices(src *rand.ChaCha8, n, size int) [][]byte {
	buf := make([]byte, n*size)
	src.Read(buf) // never fails
	out := make([][]byte, n)
	for i := range out {
		out[i] = buf[i*size : (i+1)*size : (i+1)*size]
	}
	return out
}

// reportOpsPerSecond reports the benchmark's operations per second.
func reportOpsPerSecond(b *testing.B, ops int, unit string) {
	b.ReportMetric(float64(ops)/b.Elapsed().Seconds(), unit)
}
