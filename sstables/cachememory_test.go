package sstables

import (
	"runtime"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/stratadb/strata/internal/offheap"
	"github.com/stretchr/testify/require"
)

// A shard of hugeShard bytes or more carves its chunks from regions of
// one huge page each, aligned to it, while the blocks reads return to fit
// (readGate.fits); a smaller one, or one whose reads would not fit, from
// blockRegion regions, and one whose gate closes midway from both. Either
// way its chunks hold what is written to them, and the regions mapped
// stay within a region of the shard's capacity.
func TestBlockMemoryRegions(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("no anonymous mappings")
	}
	for _, tc := range []struct {
		name      string
		capacity  int64
		fits      bool
		closeAt   int // chunks carved before fits is cleared; 0: never
		hugeBytes int // bytes mapped in huge regions
	}{
		{"small shard", hugeShard - 1, true, 0, 0},
		{"large shard", hugeShard, true, 0, hugeShard},
		{"large shard, reads that would not fit", hugeShard, false, 0, 0},
		{"large shard, the gate closing", hugeShard, true, 1, hugeRegion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var fits atomic.Bool
			fits.Store(tc.fits)
			m := newBlockMemory(tc.capacity, &fits)
			defer m.unmap()
			var chunks [][]byte
			for i := 0; ; i++ {
				if i == tc.closeAt && i > 0 {
					fits.Store(false)
				}
				b := m.alloc(4<<10, tc.capacity)
				if b == nil {
					break
				}
				b[0], b[len(b)-1] = byte(i), byte(i) // its ends: what it overlaps would show
				chunks = append(chunks, b)
			}
			require.NotEmpty(t, chunks)
			require.Less(t, m.mapped, tc.capacity+hugeRegion)
			huge := hugeRegions(m)
			require.Equal(t, tc.hugeBytes, huge*hugeRegion)
			require.Equal(t, int64(huge*hugeRegion+(len(m.regions)-huge)*blockRegion), m.mapped)
			if tc.hugeBytes > 0 {
				first := uintptr(unsafe.Pointer(unsafe.SliceData(chunks[0])))
				require.Zero(t, first%offheap.HugePage, "a huge region not aligned to a huge page")
			}
			for i, b := range chunks {
				require.Equal(t, []byte{byte(i), byte(i)}, []byte{b[0], b[len(b)-1]}, "chunk %d", i)
			}
		})
	}
}

// hugeRegions counts the huge regions m has mapped.
func hugeRegions(m *blockMemory) int {
	n := 0
	for _, r := range m.regions {
		if len(r) > hugeRegion { // MapHuge's mapping: a region and its alignment
			n++
		}
	}
	return n
}
