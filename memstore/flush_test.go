package memstore

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/stratadb/strata/internal/testseed"
	"github.com/stratadb/strata/sstables"
	"github.com/stretchr/testify/require"
)

// A flushed table holds exactly the memstore's entries: every version, in
// order, tombstones and empty values included.
func TestFlushWritesEveryEntry(t *testing.T) {
	rng := rand.New(rand.NewPCG(testseed.Seed(t), 0))
	m := New(nil)
	for range 5000 {
		key := fmt.Appendf(nil, "k%04d", rng.IntN(800))
		switch rng.IntN(5) {
		case 0:
			require.NoError(t, m.Delete(key))
		case 1:
			require.NoError(t, m.Put(key, nil))
		default:
			require.NoError(t, m.Put(key, bytes.Repeat(key, rng.IntN(20))))
		}
	}
	path := filepath.Join(t.TempDir(), "flushed.sst")
	meta, err := m.Flush(path, &sstables.WriterOptions{BlockSize: 1024, BloomBitsPerKey: 10})
	require.NoError(t, err)
	require.Equal(t, uint64(m.Len()), meta.Records)
	require.Equal(t, m.LastSeq(), meta.MaxSeq)

	r, err := sstables.Open(path, nil)
	require.NoError(t, err)
	defer r.Close()
	want := m.NewEntryIterator(nil)
	got := r.NewIterator(nil)
	n := 0
	gotOK := got.First()
	for ok := want.First(); ok; ok = want.Next() {
		require.True(t, gotOK, "table ends after %d entries", n)
		require.Equal(t, want.Key(), got.Key())
		require.Equal(t, want.Seq(), got.Seq())
		require.Equal(t, want.Kind(), got.Kind())
		require.Equal(t, string(want.Value()), string(got.Value()))
		gotOK = got.Next()
		n++
	}
	require.False(t, gotOK, "table holds more than %d entries", n)
	require.NoError(t, got.Err())

	// The table answers reads as the memstore does.
	for i := range 800 {
		key := fmt.Appendf(nil, "k%04d", i)
		mv, res := m.Get(key)
		tv, err := r.Get(key)
		if res == Found {
			require.NoError(t, err, "%s", key)
			require.Equal(t, string(mv), string(tv))
		} else {
			require.ErrorIs(t, err, sstables.ErrNotFound, "%s", key)
		}
	}
}

func TestFlushFailureLeavesNoTable(t *testing.T) {
	m := New(nil)
	require.NoError(t, m.Put([]byte("k"), []byte("v")))
	dir := t.TempDir()
	// A writer that refuses the entries: a comparator that says every key
	// sorts before the last one.
	backwards := &sstables.Comparator{Name: "backwards", Compare: func(a, b []byte) int { return -1 }}
	require.NoError(t, m.Put([]byte("l"), []byte("v")))
	_, err := m.Flush(filepath.Join(dir, "t.sst"), &sstables.WriterOptions{Comparator: backwards})
	require.ErrorIs(t, err, sstables.ErrOutOfOrder)
	matches, _ := filepath.Glob(filepath.Join(dir, "*"))
	require.Empty(t, matches)
}
