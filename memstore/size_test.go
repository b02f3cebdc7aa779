package memstore

import (
	"encoding/binary"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSizeBytesMatchesHeap checks SizeBytes against the Go heap: after
// 200k writes, the heap has grown by SizeBytes, give or take 2%, and the
// overhead per entry beyond its key and value bytes is at most 48 bytes
// (a node of 16-byte key has 40 bytes and 2 links on average).
func TestSizeBytesMatchesHeap(t *testing.T) {
	const n, keySize, valueSize = 50_000, 16, 100
	rng := rand.New(rand.NewPCG(1, 2))
	key, value := make([]byte, keySize), make([]byte, valueSize)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	m := New(nil)
	for range n {
		binary.LittleEndian.PutUint64(key, rng.Uint64())
		binary.LittleEndian.PutUint64(key[8:], rng.Uint64())
		require.NoError(t, m.Put(key, value))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	size := m.SizeBytes()
	overhead := float64(size-n*(keySize+valueSize)) / n
	t.Logf("heap grew by %d bytes, SizeBytes %d (%.2f%%); overhead %.1f bytes per entry",
		heap, size, 100*float64(size-heap)/float64(heap), overhead)
	require.InEpsilon(t, heap, size, 0.02)
	require.LessOrEqual(t, overhead, 48.0)
	runtime.KeepAlive(m)
}
