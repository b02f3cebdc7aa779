package simpledb

import (
	"bytes"
	"testing"

	"github.com/stratadb/strata/vfs"
	"github.com/stretchr/testify/require"
)

// boundKeys are the keys the bound tests write.
var boundKeys = []string{"a", "b", "c", "d", "e"}

// boundCases are ranges over boundKeys, each with the keys it holds: nil
// is open, and any other slice, the empty one too, is a bound.
var boundCases = []struct {
	name       string
	start, end []byte
	in         []string
}{
	{"open", nil, nil, boundKeys},
	{"from c", []byte("c"), nil, []string{"c", "d", "e"}},
	{"before c", nil, []byte("c"), []string{"a", "b"}},
	{"b to d", []byte("b"), []byte("d"), []string{"b", "c"}},
	{"inverted", []byte("d"), []byte("b"), nil},
	{"from c to empty", []byte("c"), []byte{}, nil},
	{"open to empty", nil, []byte{}, nil},
	{"from empty", []byte{}, nil, boundKeys},
	{"from empty to c", []byte{}, []byte("c"), []string{"a", "b"}},
	{"empty to empty", []byte{}, []byte{}, nil},
}

// boundDB opens a database holding boundKeys, in its memstore or, with
// inTables, in tables of L0 and L1.
func boundDB(t *testing.T, inTables bool) *DB {
	t.Helper()
	db, err := Open("/db", testOptions(vfs.NewMem()))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	for i, k := range boundKeys {
		require.NoError(t, db.Put([]byte(k), []byte("v"+k)))
		if inTables && i == 2 {
			require.NoError(t, db.Compact()) // a, b and c in L1, d and e in L0
		}
	}
	if inTables {
		require.NoError(t, db.Flush())
	}
	return db
}

// scanBounds returns the keys an iterator over [lo, hi) finds, forward,
// and checks that backward, First, Last and seeks agree.
func scanBounds(t *testing.T, newIter func(lo, hi []byte) (*Iterator, error), lo, hi []byte) []string {
	t.Helper()
	it, err := newIter(lo, hi)
	require.NoError(t, err)
	defer it.Close()
	var fwd, back []string
	for k, v := range it.All() {
		require.Equal(t, "v"+string(k), string(v))
		fwd = append(fwd, string(k))
	}
	for k := range it.Backward() {
		back = append([]string{string(k)}, back...)
	}
	require.NoError(t, it.Err())
	require.Equal(t, fwd, back, "forward and backward scans differ")
	require.Equal(t, len(fwd) > 0, it.SeekGE([]byte("a")), "SeekGE before every key")
	require.Equal(t, len(fwd) > 0, it.SeekLT([]byte("z")), "SeekLT after every key")
	return fwd
}

// Only nil is an open bound: an empty slice is a bound, the least key, in
// every call that takes a range. DB.DeleteRange and Batch.DeleteRange are
// in TestDeleteRangeEmptyBound.
func TestIteratorEmptyBound(t *testing.T) {
	for _, inTables := range []bool{false, true} {
		for _, tc := range boundCases {
			name := tc.name
			if inTables {
				name += " in tables"
			}
			t.Run(name, func(t *testing.T) {
				db := boundDB(t, inTables)
				snap := db.NewSnapshot()
				defer snap.Release()
				require.NoError(t, db.Put([]byte("bb"), []byte("vbb")), "after the snapshot")
				require.NoError(t, db.Delete([]byte("c")), "after the snapshot")
				require.Equal(t, tc.in, scanBounds(t, snap.NewIterator, tc.start, tc.end), "Snapshot.NewIterator")
				want := keysIn(bytes.Compare, model{"a": "", "b": "", "bb": "", "d": "", "e": ""}, tc.start, tc.end)
				require.Equal(t, want, scanBounds(t, db.NewIterator, tc.start, tc.end), "DB.NewIterator")
			})
		}
	}
}

// A new iterator's Next moves to the first key and its Prev to the last,
// so that `for it.Next()` and `for it.Prev()` walk every key, within the
// bounds, in the memstore and in tables alike.
func TestIteratorFreshNextPrev(t *testing.T) {
	for _, tc := range []struct {
		name         string
		keys         bool // the database holds boundKeys; otherwise it is empty
		inTables     bool
		lower, upper []byte
		want         []string
	}{
		{"empty database", false, false, nil, nil, nil},
		{"memstore", true, false, nil, nil, boundKeys},
		{"tables", true, true, nil, nil, boundKeys},
		{"bounded", true, false, []byte("b"), []byte("d"), []string{"b", "c"}},
		{"bounded in tables", true, true, []byte("b"), []byte("d"), []string{"b", "c"}},
		{"bounds holding no key", true, true, []byte("x"), nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var db *DB
			if tc.keys {
				db = boundDB(t, tc.inTables)
			} else {
				var err error
				db, err = Open("/db", testOptions(vfs.NewMem()))
				require.NoError(t, err)
				defer db.Close()
			}
			snap := db.NewSnapshot()
			defer snap.Release()
			for name, newIter := range map[string]func(lo, hi []byte) (*Iterator, error){"DB": db.NewIterator, "Snapshot": snap.NewIterator} {
				it, err := newIter(tc.lower, tc.upper)
				require.NoError(t, err)
				var fwd []string
				for it.Next() {
					fwd = append(fwd, string(it.Key()))
				}
				require.NoError(t, it.Err())
				require.Equal(t, tc.want, fwd, "%s: Next from new", name)
				require.NoError(t, it.Close())

				it, err = newIter(tc.lower, tc.upper)
				require.NoError(t, err)
				var back []string
				for it.Prev() {
					back = append([]string{string(it.Key())}, back...)
				}
				require.NoError(t, it.Err())
				require.Equal(t, tc.want, back, "%s: Prev from new", name)
				require.NoError(t, it.Close())

				// The first move positions it: a move back from there
				// runs off the end it started at.
				it, err = newIter(tc.lower, tc.upper)
				require.NoError(t, err)
				require.Equal(t, len(tc.want) > 0, it.Next(), name)
				require.False(t, it.Prev(), "%s: Prev after a new iterator's Next", name)
				require.NoError(t, it.Close())
				it, err = newIter(tc.lower, tc.upper)
				require.NoError(t, err)
				require.Equal(t, len(tc.want) > 0, it.Prev(), name)
				require.False(t, it.Next(), "%s: Next after a new iterator's Prev", name)
				require.NoError(t, it.Close())

				// Closed before any move, it stays at no key.
				it, err = newIter(tc.lower, tc.upper)
				require.NoError(t, err)
				require.NoError(t, it.Close())
				require.False(t, it.Next(), name)
				require.False(t, it.Prev(), name)
				require.ErrorIs(t, it.Err(), ErrClosed, name)
			}
		})
	}
}
