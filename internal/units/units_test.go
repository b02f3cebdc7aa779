package units

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestBytes(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1536, "1.5 KiB"},
		{5 << 20, "5.0 MiB"}, {3 << 30, "3.0 GiB"}, {2 << 40, "2.0 TiB"}, {2 << 50, "2048.0 TiB"},
	} {
		require.Equal(t, tc.want, Bytes(tc.n), "%d", tc.n)
	}
}

func TestDuration(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "-"}, {999, "999ns"}, {1234567, "1.23ms"}, {753753, "754µs"}, {147 * time.Microsecond, "147µs"}, {90 * time.Second, "1m30s"},
	} {
		require.Equal(t, tc.want, Duration(tc.d), "%d", tc.d)
	}
}
