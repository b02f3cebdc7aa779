package recordio

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A pooled read state keeps a buffer for the records most reads take, and
// none for a large one read once (a table's index), which all readers'
// reads would otherwise carry from then on.
func TestReadStateKeepsOnlySmallBuffers(t *testing.T) {
	tests := []struct {
		name  string
		sizes []int // scratch requests, in order
		kept  int   // the capacity kept afterwards
	}{
		{"small", []int{4096}, 4096},
		{"grows while small", []int{100, 4096, maxKeptScratch}, maxKeptScratch},
		{"large alone", []int{maxKeptScratch + 1}, 0},
		{"large after small", []int{4096, 1 << 20}, 4096},
		{"small reuses", []int{4096, 100}, 4096},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := &randomState{}
			for _, n := range tc.sizes {
				require.Len(t, st.scratch(n), n)
			}
			require.Equal(t, tc.kept, cap(st.payload))
		})
	}
}
