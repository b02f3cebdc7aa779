package memstore

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestOffHeap checks that an off-heap memstore's entries leave the Go heap
// alone, read back whole, and that Release, or else the garbage collector,
// unmaps them.
func TestOffHeap(t *testing.T) {
	const n = 50_000
	fill := func(m *Memstore) {
		value := make([]byte, 100)
		for i := range n {
			binary.BigEndian.PutUint64(value, uint64(i))
			size := 100
			if i%1000 == 0 {
				size = 2 * arenaLargeEntry // an allocation of its own
			}
			require.NoError(t, m.Put(fmt.Appendf(nil, "key%08d", i), append(value[:8:8], make([]byte, size-8)...)))
		}
	}
	check := func(m *Memstore) {
		for i := range n {
			v, r := m.Get(fmt.Appendf(nil, "key%08d", i))
			require.Equal(t, Found, r)
			require.Equal(t, uint64(i), binary.BigEndian.Uint64(v))
		}
	}
	mapped := mappedBytes.Load()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)

	m := New(&Options{OffHeap: true})
	fill(m)
	runtime.GC()
	runtime.ReadMemStats(&after)
	check(m)
	size := m.SizeBytes()
	heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("SizeBytes %d, mapped %d, heap grew by %d", size, mappedBytes.Load()-mapped, heap)
	require.GreaterOrEqual(t, mappedBytes.Load()-mapped, size-size/50, "the entries are in the mappings")
	require.Less(t, heap, size/20, "the heap holds the table of chunks, not the entries")
	m.Release()
	require.Equal(t, mapped, mappedBytes.Load(), "Release unmaps everything")
	m.Release()

	// A memstore never released is unmapped once unreachable.
	fill(New(&Options{OffHeap: true}))
	require.Greater(t, mappedBytes.Load(), mapped)
	require.Eventually(t, func() bool {
		runtime.GC()
		return mappedBytes.Load() == mapped
	}, 10*time.Second, 10*time.Millisecond)
}
