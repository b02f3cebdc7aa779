package simpledb

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// rdKey is the i'th key of the range-deletion tests.
func rdKey(i int) []byte { return fmt.Appendf(nil, "key-%05d", i) }

// liveKeys scans the database both ways and returns its keys, checking
// that the two agree.
func liveKeys(t *testing.T, newIter func(lo, hi []byte) (*Iterator, error)) []string {
	t.Helper()
	it, err := newIter(nil, nil)
	require.NoError(t, err)
	defer it.Close()
	var fwd, back []string
	for k := range it.All() {
		fwd = append(fwd, string(k))
	}
	for k := range it.Backward() {
		back = append([]string{string(k)}, back...)
	}
	require.NoError(t, it.Err())
	require.Equal(t, fwd, back, "forward and backward scans differ")
	return fwd
}

func TestDeleteRangeAcrossFlushAndCompaction(t *testing.T) {
	stages := []struct {
		name string
		do   func(t *testing.T, db *DB)
	}{
		{"memstore", func(t *testing.T, db *DB) {}},
		{"flushed", func(t *testing.T, db *DB) { require.NoError(t, db.Flush()) }},
		{"compacted", func(t *testing.T, db *DB) { require.NoError(t, db.Flush()); require.NoError(t, db.Compact()) }},
	}
	for _, written := range stages {
		for _, deleted := range stages {
			t.Run(written.name+"/"+deleted.name, func(t *testing.T) {
				opts := smallOptions()
				opts.TargetTableSize = 4 << 10 // many tables, so tombstones span several
				db, err := Open(t.TempDir(), opts)
				require.NoError(t, err)
				defer db.Close()
				for i := range 2000 {
					require.NoError(t, db.Put(rdKey(i), fmt.Appendf(nil, "value-%d", i)))
				}
				written.do(t, db)
				require.NoError(t, db.DeleteRange(rdKey(100), rdKey(1900)))
				deleted.do(t, db)
				var want []string
				for i := range 2000 {
					if i < 100 || i >= 1900 {
						want = append(want, string(rdKey(i)))
					}
				}
				require.Equal(t, want, liveKeys(t, db.NewIterator))
				for _, i := range []int{0, 99, 100, 101, 1000, 1899, 1900, 1999} {
					_, err := db.Get(rdKey(i))
					if i >= 100 && i < 1900 {
						require.ErrorIs(t, err, ErrNotFound, "key %d", i)
					} else {
						require.NoError(t, err, "key %d", i)
					}
				}
			})
		}
	}
}
