package simpledb

import (
	"fmt"
	"maps"
	"testing"

	"github.com/stratadb/strata/sstables"
	"github.com/stratadb/strata/vfs"
	"github.com/stretchr/testify/require"
)

// An indexed batch reads its own writes over the database, both ways and
// within bounds, and commits as any batch.
func TestIndexedBatch(t *testing.T) {
	db, err := Open("/db", testOptions(vfs.NewMem()))
	require.NoError(t, err)
	defer db.Close()
	for _, k := range []string{"a", "b", "c", "d", "e", "f"} {
		require.NoError(t, db.Put([]byte(k), []byte("db-"+k), DefaultSync))
	}
	require.NoError(t, db.Flush()) // the database's part in a table too
	require.NoError(t, db.Put([]byte("g"), []byte("db-g"), DefaultSync))

	b := db.NewIndexedBatch()
	require.NoError(t, b.Put([]byte("b"), []byte("batch-b")))
	require.NoError(t, b.Delete([]byte("c")))
	require.NoError(t, b.DeleteRange([]byte("d"), []byte("f")))
	require.NoError(t, b.Put([]byte("e"), []byte("batch-e"))) // after the range deletion: visible
	require.NoError(t, b.Put([]byte("h"), []byte("batch-h")))

	want := []string{"a=db-a", "b=batch-b", "e=batch-e", "f=db-f", "g=db-g", "h=batch-h"}
	for _, tc := range []struct {
		key, value string
		err        error
	}{
		{"a", "db-a", nil},
		{"b", "batch-b", nil},
		{"c", "", ErrNotFound},
		{"d", "", ErrNotFound},
		{"e", "batch-e", nil},
		{"g", "db-g", nil},
		{"h", "batch-h", nil},
		{"z", "", ErrNotFound},
	} {
		v, err := b.Get([]byte(tc.key))
		if tc.err != nil {
			require.ErrorIs(t, err, tc.err, tc.key)
			continue
		}
		require.NoError(t, err, tc.key)
		require.Equal(t, tc.value, string(v), tc.key)
	}

	scan := func(lower, upper []byte, backward bool) []string {
		it, err := b.NewIterator(lower, upper)
		require.NoError(t, err)
		defer it.Close()
		var got []string
		walk := it.All()
		if backward {
			walk = it.Backward()
		}
		for k, v := range walk {
			got = append(got, string(k)+"="+string(v))
		}
		require.NoError(t, it.Err())
		return got
	}
	require.Equal(t, want, scan(nil, nil, false))
	reversed := make([]string, len(want))
	for i, s := range want {
		reversed[len(want)-1-i] = s
	}
	require.Equal(t, reversed, scan(nil, nil, true))
	require.Equal(t, []string{"b=batch-b", "e=batch-e"}, scan([]byte("b"), []byte("f"), false))

	// An iterator sees the batch as it was when it was made.
	it, err := b.NewIterator(nil, nil)
	require.NoError(t, err)
	require.NoError(t, b.Put([]byte("a"), []byte("batch-a")))
	require.True(t, it.First())
	require.Equal(t, "db-a", string(it.Value()))
	require.NoError(t, it.Close())

	// Committed, the database reads what the batch did.
	require.NoError(t, db.Write(b, DefaultSync))
	got := readAll(t, db)
	require.Equal(t, model{"a": "batch-a", "b": "batch-b", "e": "batch-e", "f": "db-f", "g": "db-g", "h": "batch-h"}, got)

	// Reset empties the index too.
	b.Reset()
	v, err := b.Get([]byte("h"))
	require.NoError(t, err)
	require.Equal(t, "batch-h", string(v), "the database's, now")
	require.NoError(t, b.Delete([]byte("h")))
	_, err = b.Get([]byte("h"))
	require.ErrorIs(t, err, ErrNotFound)
}

func TestIndexedBatchRefuses(t *testing.T) {
	db, err := Open("/db", testOptions(vfs.NewMem()))
	require.NoError(t, err)
	plain := db.NewBatch()
	_, err = plain.Get([]byte("k"))
	require.ErrorIs(t, err, ErrNotIndexed)
	_, err = plain.NewIterator(nil, nil)
	require.ErrorIs(t, err, ErrNotIndexed)
	b := db.NewIndexedBatch()
	_, err = b.Get(nil)
	require.ErrorIs(t, err, ErrEmptyKey)
	require.NoError(t, db.Close())
	_, err = b.Get([]byte("k"))
	require.ErrorIs(t, err, ErrClosed)
	_, err = b.NewIterator(nil, nil)
	require.ErrorIs(t, err, ErrClosed)

	o := testOptions(vfs.NewMem())
	o.Comparator = reverseOrder
	rdb, err := Open("/db", o)
	require.NoError(t, err)
	defer rdb.Close()
	require.ErrorIs(t, rdb.NewIndexedBatch().DeleteRange([]byte("a"), []byte("b")), ErrRangeDelOrder)
	_, err = rdb.NewIndexedBatch().NewPrefixIterator([]byte("a"))
	require.ErrorIs(t, err, ErrPrefixOrder)
}

// FuzzIndexedBatch writes to a database and to an indexed batch over it
// as the input says, and checks every read of the batch against a model.
func FuzzIndexedBatch(f *testing.F) {
	f.Add([]byte("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b"))
	f.Add([]byte("p1ap2bd1g1s0rxg2s1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		opts := testOptions(vfs.NewMem())
		opts.Merger = AppendMerger
		db, err := Open("/db", opts)
		require.NoError(t, err)
		defer db.Close()
		next := func() byte {
			if len(data) == 0 {
				return 0
			}
			c := data[0]
			data = data[1:]
			return c
		}
		key := func() []byte { return []byte{'k', '0' + next()%12} }
		dbModel := model{}
		for range next() % 16 {
			k, v := key(), fmt.Appendf(nil, "db%d", next())
			if v[2]%3 == 0 {
				require.NoError(t, db.Merge(k, v, DefaultSync))
				dbModel.merge(k, v)
				continue
			}
			require.NoError(t, db.Put(k, v, DefaultSync))
			dbModel[string(k)] = string(v)
		}
		if next()%2 == 0 {
			require.NoError(t, db.Flush())
		}
		b, staged := db.NewIndexedBatch(), maps.Clone(dbModel)
		for step := 0; len(data) > 0 && step < 64; step++ {
			msg := fmt.Sprintf("step %d", step)
			switch next() % 7 {
			case 6:
				k, o := key(), fmt.Appendf(nil, "+%d", step)
				require.NoError(t, b.Merge(k, o))
				staged.merge(k, o)
			case 0, 1:
				k, v := key(), fmt.Appendf(nil, "b%d", step)
				require.NoError(t, b.Put(k, v))
				staged[string(k)] = string(v)
			case 2:
				k := key()
				require.NoError(t, b.Delete(k))
				delete(staged, string(k))
			case 3:
				lo, hi := key(), key()
				if next()%4 == 0 {
					lo = nil
				}
				require.NoError(t, b.DeleteRange(lo, hi))
				if lo == nil || string(lo) < string(hi) {
					staged.deleteRange(lo, hi)
				}
			case 4:
				checkGet(t, b, staged, key(), msg)
			default:
				checkScan(t, sstables.Bytewise.Compare, b.NewIterator, staged, key(), key(), msg)
			}
		}
		require.NoError(t, db.Write(b, DefaultSync))
		checkScan(t, sstables.Bytewise.Compare, db.NewIterator, staged, nil, nil, "after Write")
	})
}
