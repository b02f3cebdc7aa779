package simpledb

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
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
		require.NoError(t, db.Put([]byte(k), []byte("v"+k), DefaultSync))
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
	require.Equal(t, len(fwd) > 0, it.SeekGE([]byte{0}), "SeekGE before every key")
	require.Equal(t, len(fwd) > 0, it.SeekLT(bytes.Repeat([]byte{0xff}, 8)), "SeekLT after every key")
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
				require.NoError(t, db.Put([]byte("bb"), []byte("vbb"), DefaultSync), "after the snapshot")
				require.NoError(t, db.Delete([]byte("c"), DefaultSync), "after the snapshot")
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

func TestPrefixUpperBound(t *testing.T) {
	for _, tc := range []struct {
		prefix string
		want   []byte // nil: no key is after every key with the prefix
	}{
		{"", nil},
		{"a", []byte("b")},
		{"ab", []byte("ac")},
		{"\x00", []byte("\x01")},
		{"a\xfe", []byte("a\xff")},
		{"a\xff", []byte("b")},
		{"ab\xff", []byte("ac")},
		{"a\xff\xff", []byte("b")},
		{"a\xff\xffb", []byte("a\xff\xffc")},
		{"\xff", nil},
		{"\xff\xff", nil},
		{"\xfe\xff", []byte("\xff")},
	} {
		t.Run(fmt.Sprintf("%q", tc.prefix), func(t *testing.T) {
			prefix := []byte(tc.prefix)
			got := PrefixUpperBound(prefix)
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.prefix, string(prefix), "the prefix is left as it was")
			if got == nil {
				return
			}
			// After every key with the prefix, the longest of 0xff too.
			for _, k := range [][]byte{prefix, append(bytes.Clone(prefix), 0), append(bytes.Clone(prefix), bytes.Repeat([]byte{0xff}, 8)...)} {
				require.Negative(t, bytes.Compare(k, got), "%q", k)
			}
			require.False(t, bytes.HasPrefix(got, prefix), "the bound has not the prefix")
			got[len(got)-1] = 'z'
			require.Equal(t, tc.prefix, string(prefix), "the bound is not the prefix's memory")
		})
	}
}

// A prefix iterator walks exactly the keys that start with its prefix: the
// prefix itself, and keys of 0xff bytes after it, too.
func TestPrefixIterator(t *testing.T) {
	keys := []string{"a", "a\x00", "ab", "ab\xff", "a\xff", "a\xff\xff", "a\xff\xff\x00", "b", "\xfe", "\xff", "\xff\x00", "\xff\xff", "\xff\xff\xff"}
	db, err := Open("/db", testOptions(vfs.NewMem()))
	require.NoError(t, err)
	defer db.Close()
	for i, k := range keys {
		require.NoError(t, db.Put([]byte(k), []byte("v"+k), DefaultSync))
		if i == len(keys)/2 {
			require.NoError(t, db.Compact()) // half in tables
		}
	}
	snap := db.NewSnapshot()
	defer snap.Release()
	require.NoError(t, db.Put([]byte("a\xff\x01"), []byte("va\xff\x01"), DefaultSync), "after the snapshot")
	withPrefix := func(keys []string, prefix string) []string {
		var in []string
		for _, k := range slices.Sorted(slices.Values(keys)) {
			if strings.HasPrefix(k, prefix) {
				in = append(in, k)
			}
		}
		return in
	}
	for _, prefix := range []string{"", "a", "ab", "a\xff", "a\xff\xff", "b", "c", "\xff", "\xff\xff", "\xff\xff\xff", "\xff\xff\xff\xff"} {
		t.Run(fmt.Sprintf("%q", prefix), func(t *testing.T) {
			prefixIter := func(newPrefixIter func([]byte) (*Iterator, error)) func(lo, hi []byte) (*Iterator, error) {
				return func(lo, hi []byte) (*Iterator, error) { return newPrefixIter([]byte(prefix)) }
			}
			require.Equal(t, withPrefix(keys, prefix), scanBounds(t, prefixIter(snap.NewPrefixIterator), nil, nil), "Snapshot.NewPrefixIterator")
			require.Equal(t, withPrefix(append(keys, "a\xff\x01"), prefix), scanBounds(t, prefixIter(db.NewPrefixIterator), nil, nil), "DB.NewPrefixIterator")
		})
	}
}

// Prefix iteration needs the bytewise order; a database in another
// refuses it, as it does range deletions.
func TestPrefixIteratorNeedsBytewiseOrder(t *testing.T) {
	opts := testOptions(vfs.NewMem())
	opts.Comparator = reverseOrder
	db, err := Open("/db", opts)
	require.NoError(t, err)
	defer db.Close()
	_, err = db.NewPrefixIterator([]byte("a"))
	require.ErrorIs(t, err, ErrPrefixOrder)
	snap := db.NewSnapshot()
	defer snap.Release()
	_, err = snap.NewPrefixIterator([]byte("a"))
	require.ErrorIs(t, err, ErrPrefixOrder)
}
