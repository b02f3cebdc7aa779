package benchdata

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// Bytes is deterministic and fills every byte, the tail of a length that is
// not a multiple of 8 included.
func TestBytesIsSeededAndFull(t *testing.T) {
	require.Equal(t, Bytes(1001, 7), Bytes(1001, 7))
	require.NotEqual(t, Bytes(1001, 7), Bytes(1001, 8))
	tail := Bytes(1003, 7)[1000:]
	require.NotEqual(t, []byte{0, 0, 0}, tail)
}

// Values check by length and index, and two values differ past the index
// unless the pool leaves only one place to cut them from.
func TestValuesDifferAndCheck(t *testing.T) {
	for _, n := range []int{8, 100, 1024, PoolSize} {
		a, b := AppendValue(nil, 1, n), AppendValue(nil, 2, n)
		require.Len(t, a, n)
		require.True(t, IsValue(a, 1, n))
		require.False(t, IsValue(a, 2, n))
		require.False(t, IsValue(a[:n-1], 1, n))
		if n > 8 && n < PoolSize {
			require.False(t, bytes.Equal(a[8:], b[8:]), "n=%d: values share their bytes", n)
		}
	}
}
