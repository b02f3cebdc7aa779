package bloom

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestConcurrentFalsePositiveRate(t *testing.T) {
	const n = 100000
	for _, tc := range []struct {
		bitsPerKey int
		maxRate    float64
	}{
		{5, 0.15},
		{10, 0.02},
		{20, 0.003},
	} {
		t.Run(fmt.Sprint(tc.bitsPerKey), func(t *testing.T) {
			f := NewConcurrent(n * tc.bitsPerKey / 8)
			for i := range n {
				f.Add(Hash(key(i)))
			}
			for i := range n {
				require.True(t, f.MayContainHash(Hash(key(i))), "key %d", i)
			}
			positives := 0
			for i := n; i < 2*n; i++ {
				if f.MayContainHash(Hash(key(i))) {
					positives++
				}
			}
			rate := float64(positives) / n
			t.Logf("%d bits per key: %.4f false positives", tc.bitsPerKey, rate)
			require.Less(t, rate, tc.maxRate)
		})
	}
}

func TestConcurrentSizes(t *testing.T) {
	for _, tc := range []struct{ size, want int }{
		{0, 64}, {1, 64}, {64, 64}, {127, 64}, {128, 128}, {1 << 20, 1 << 20},
	} {
		f := NewConcurrent(tc.size)
		require.Equal(t, tc.want, f.Size(), "size %d", tc.size)
		f.Add(Hash(key(tc.size)))
		require.True(t, f.MayContainHash(Hash(key(tc.size))))
	}
}

// Readers query while a writer adds: a key whose addition a reader has
// seen published is always found. Run with -race.
func TestConcurrentAddWhileQueried(t *testing.T) {
	const n = 20000
	f := NewConcurrent(n / 4) // 2 bits per key: blocks shared by many keys
	var added atomic.Int64
	var wg sync.WaitGroup
	for r := range 3 {
		wg.Go(func() {
			for added.Load() < n {
				upto := int(added.Load())
				for i := max(0, upto-100-r); i < upto; i++ {
					if !f.MayContainHash(Hash(key(i))) {
						t.Errorf("key %d, added, not found", i)
						return
					}
				}
			}
		})
	}
	for i := range n {
		f.Add(Hash(key(i)))
		added.Store(int64(i + 1))
	}
	wg.Wait()
}
