package sstables

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// An iterator that is not at an entry (never moved, run off the end, or
// closed) returns zero values from every accessor: never a panic, never the
// entry it was last at.
func TestIteratorAccessorsWhenUnpositioned(t *testing.T) {
	dir := t.TempDir()
	full := filepath.Join(dir, "full.sst")
	writeTable(t, full, nil, []entry{
		{key: []byte("a"), seq: 2, kind: KindSet, value: []byte("va")},
		{key: []byte("b"), seq: 3, kind: KindDelete},
		{key: []byte("b"), seq: 1, kind: KindSet, value: []byte("vb")},
		{key: []byte("c"), seq: 1, kind: KindSet, value: []byte("vc")},
	})
	empty := filepath.Join(dir, "empty.sst")
	writeTable(t, empty, nil, nil)

	open := func(t *testing.T, path string, ropts *ReaderOptions) *Reader {
		r, err := Open(path, ropts)
		require.NoError(t, err)
		t.Cleanup(func() { r.Close() })
		return r
	}
	iterators := []struct {
		name string
		open func(t *testing.T, path string) EntryIterator
	}{
		{"table", func(t *testing.T, path string) EntryIterator {
			return open(t, path, nil).NewIterator(nil)
		}},
		{"table/noMmap/upper bound", func(t *testing.T, path string) EntryIterator {
			return open(t, path, &ReaderOptions{NoMmap: true}).NewIterator(&IterOptions{UpperBound: []byte("c")})
		}},
		{"merging", func(t *testing.T, path string) EntryIterator {
			return NewMergingIterator(nil, open(t, path, nil).NewIterator(nil))
		}},
		{"merging/all versions/live", func(t *testing.T, path string) EntryIterator {
			opts := &MergeOptions{AllVersions: true, DropTombstones: true}
			return NewMergingIterator(opts, open(t, path, nil).NewIterator(nil), open(t, path, nil).NewIterator(nil))
		}},
	}
	states := []struct {
		name string
		path string
		move func(t *testing.T, it EntryIterator)
		// next is what Next returns then: after a backward move ran off
		// the start, it turns back to the first entry.
		next bool
	}{
		{name: "fresh", path: full, move: func(*testing.T, EntryIterator) {}},
		{name: "First on an empty table", path: empty, move: func(t *testing.T, it EntryIterator) {
			require.False(t, it.First())
		}},
		{name: "Next past the end", path: full, move: func(t *testing.T, it EntryIterator) {
			require.True(t, it.First())
			for it.Next() {
			}
		}},
		{name: "SeekGE past the end", path: full, move: func(t *testing.T, it EntryIterator) {
			require.True(t, it.First())
			require.False(t, it.SeekGE([]byte("z")))
		}},
		{name: "Last on an empty table", path: empty, move: func(t *testing.T, it EntryIterator) {
			require.False(t, it.Last())
		}},
		{name: "Prev past the start", path: full, next: true, move: func(t *testing.T, it EntryIterator) {
			require.True(t, it.Last())
			for it.Prev() {
			}
		}},
		{name: "SeekLT before the start", path: full, next: true, move: func(t *testing.T, it EntryIterator) {
			require.True(t, it.Last())
			require.False(t, it.SeekLT([]byte("a")))
		}},
		{name: "Close", path: full, move: func(t *testing.T, it EntryIterator) {
			require.True(t, it.First())
			require.NoError(t, it.Close())
		}},
	}
	for _, itc := range iterators {
		for _, st := range states {
			t.Run(itc.name+"/"+st.name, func(t *testing.T) {
				it := itc.open(t, st.path)
				st.move(t, it)
				var key, value []byte
				var seq uint64
				var kind Kind
				require.NotPanics(t, func() { key, seq, kind, value = it.Key(), it.Seq(), it.Kind(), it.Value() })
				require.False(t, it.Valid())
				require.Nil(t, key)
				require.Nil(t, value)
				require.Zero(t, seq)
				require.Zero(t, kind)
				require.Equal(t, st.next, it.Next())
			})
		}
	}
}
