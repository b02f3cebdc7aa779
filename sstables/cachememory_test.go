package sstables

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/stratadb/strata/internal/offheap"
	"github.com/stretchr/testify/require"
)

// A shard of hugeShard bytes or more carves its chunks from regions of
// one huge page each, aligned to it; a smaller one from blockRegion
// regions. Either way its chunks hold what is written to them, and the
// regions mapped stay within a region of the shard's capacity.
func TestBlockMemoryRegions(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("no anonymous mappings")
	}
	for _, tc := range []struct {
		name     string
		capacity int64
		region   int
	}{
		{"small shard", hugeShard - 1, blockRegion},
		{"large shard", hugeShard, hugeRegion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newBlockMemory(tc.capacity)
			defer m.unmap()
			var chunks [][]byte
			for i := 0; ; i++ {
				b := m.alloc(4<<10, tc.capacity)
				if b == nil {
					break
				}
				b[0], b[len(b)-1] = byte(i), byte(i) // its ends: what it overlaps would show
				chunks = append(chunks, b)
			}
			require.NotEmpty(t, chunks)
			require.Less(t, m.mapped, tc.capacity+int64(tc.region))
			require.Equal(t, int64(len(m.regions)*tc.region), m.mapped)
			if tc.region == hugeRegion {
				first := uintptr(unsafe.Pointer(unsafe.SliceData(chunks[0])))
				require.Zero(t, first%offheap.HugePage, "a huge region not aligned to a huge page")
			}
			for i, b := range chunks {
				require.Equal(t, []byte{byte(i), byte(i)}, []byte{b[0], b[len(b)-1]}, "chunk %d", i)
			}
		})
	}
}
