package simpledb

import (
	"maps"
	"slices"
	"testing"

	"github.com/stratadb/strata/internal/race"
	"github.com/stratadb/strata/vfs"
	"github.com/stretchr/testify/require"
)

// Has and AppendValue reject what Get rejects, with the same errors, and
// leave dst as it was.
func TestPointReadsRejectBadInput(t *testing.T) {
	opts := testOptions(vfs.NewMem())
	db, err := Open("/db", opts)
	require.NoError(t, err)
	snap := db.NewSnapshot()
	for _, tc := range []struct {
		name string
		key  []byte
		want error
	}{
		{"nil key", nil, ErrEmptyKey},
		{"empty key", []byte{}, ErrEmptyKey},
		{"key too large", make([]byte, MaxKeySize+1), ErrKeyTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, r := range []pointReader{db, snap} {
				_, err := r.Has(tc.key)
				require.ErrorIs(t, err, tc.want)
				dst, err := r.AppendValue([]byte("dst"), tc.key)
				require.ErrorIs(t, err, tc.want)
				require.Equal(t, "dst", string(dst))
			}
		})
	}
	require.NoError(t, snap.Release())
	require.NoError(t, db.Close())
	for _, r := range []pointReader{db, snap} {
		_, err = r.Has([]byte("k"))
		require.ErrorIs(t, err, ErrClosed)
		_, err = r.AppendValue(nil, []byte("k"))
		require.ErrorIs(t, err, ErrClosed)
	}
}

// A read into a buffer with room, and a Has, allocate nothing, from a
// memstore and from a table whose block is cached.
func TestPointReadsAllocateNothing(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector makes sync.Pool drop the tables' pooled lookups")
	}
	opts := testOptions(vfs.NewMem())
	db, err := Open("/db", opts)
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.Put([]byte("flushed"), []byte("in a table"), DefaultSync))
	require.NoError(t, db.Flush())
	require.NoError(t, db.Put([]byte("fresh"), []byte("in the memstore"), DefaultSync))
	require.NoError(t, db.Delete([]byte("gone"), DefaultSync))

	buf := make([]byte, 0, 64)
	for _, tc := range []struct {
		key   string
		value string
		found bool
	}{
		{"flushed", "in a table", true},
		{"fresh", "in the memstore", true},
		{"gone", "", false},
		{"never", "", false},
	} {
		t.Run(tc.key, func(t *testing.T) {
			key := []byte(tc.key)
			v, err := db.AppendValue(buf[:0], key) // fills the block cache
			if tc.found {
				require.NoError(t, err)
				require.Equal(t, tc.value, string(v))
			} else {
				require.ErrorIs(t, err, ErrNotFound)
			}
			allocs := testing.AllocsPerRun(100, func() {
				buf, _ = db.AppendValue(buf[:0], key)
				if ok, _ := db.Has(key); ok != tc.found {
					t.Fatalf("Has(%s) = %v", key, ok)
				}
			})
			require.Zero(t, allocs)
		})
	}
}

// An iterator open at Close keeps working until it is closed, both ways,
// over memstore and table entries alike: it holds what it reads. The
// tables are memory-mapped, so reading one closed would crash.
func TestIteratorOutlivesClose(t *testing.T) {
	opts := smallOptions()
	opts.Logger, opts.MmapTables = quietLogger, true
	db, err := Open(t.TempDir(), opts)
	require.NoError(t, err)
	acked := putAcked(t, db, 0, 300)
	require.NoError(t, db.Flush())
	maps.Copy(acked, putAcked(t, db, 300, 400)) // in the memstore
	it, err := db.NewIterator(nil, nil)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	want := slices.Sorted(maps.Keys(acked))
	var got []string
	for k, v := range it.All() {
		got = append(got, string(k))
		require.Equal(t, acked[string(k)], string(v))
	}
	require.Equal(t, want, got)
	got = got[:0]
	for k := range it.Backward() {
		got = append(got, string(k))
	}
	slices.Reverse(got)
	require.Equal(t, want, got)
	require.NoError(t, it.Err())
	require.NoError(t, it.Close())
	_, err = db.NewIterator(nil, nil)
	require.ErrorIs(t, err, ErrClosed)
}
