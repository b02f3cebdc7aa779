package memstore

import (
	"fmt"
	"testing"

	"github.com/stratadb/strata/internal/bloom"
	"github.com/stretchr/testify/require"
)

// With a filter, GetAt answers as without one: a key written is found at
// every sequence number, a key never written is absent, or deleted where a
// range deletion covers it; the filter's size counts in SizeBytes.
func TestFilter(t *testing.T) {
	for _, size := range []int{0, 64, 1 << 16} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			m := New(&Options{FilterSize: size})
			plain := New(nil)
			const n = 2000
			for i := range n {
				k := []byte(fmt.Sprintf("key%05d", 2*i))
				require.NoError(t, m.Put(k, k))
				require.NoError(t, plain.Put(k, k))
			}
			require.Equal(t, plain.SizeBytes()+int64(size), m.SizeBytes())
			require.NoError(t, m.DeleteRange([]byte("key03000"), []byte("key03100")))

			skipped := 0
			for i := range 2 * n {
				k := []byte(fmt.Sprintf("key%05d", i))
				for _, seq := range []uint64{1, uint64(i/2 + 1), MaxSeq} {
					v, res := m.GetAt(k, seq)
					wantV, wantRes := plain.GetAt(k, seq)
					if covered := string(k) >= "key03000" && string(k) < "key03100" && seq == MaxSeq; covered {
						wantV, wantRes = nil, Deleted
					}
					require.Equal(t, wantRes, res, "%s at %d", k, seq)
					require.Equal(t, wantV, v, "%s at %d", k, seq)
				}
				if size > 0 && i%2 == 1 && !m.list.filter.MayContainHash(bloom.Hash(k)) {
					skipped++
				}
			}
			if size == 1<<16 {
				// 262 bits a key: the filter answers "no" for nearly every
				// key never written.
				require.Greater(t, skipped, n*99/100)
			}
		})
	}
}
