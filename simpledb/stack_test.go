package simpledb

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stratadb/strata/vfs"
	"github.com/stretchr/testify/require"
)

// A hot key's versions stack in its memstore entry, 32 to an entry
// (memstore's doc): snapshots taken between its writes read each its own
// version, by Get and by iterators both ways, from the memstore and,
// after a flush that keeps the versions they need, from the table.
func TestHotKeyVersionsForSnapshots(t *testing.T) {
	db, err := Open("/db", &Options{FS: vfs.NewMem(), Logger: quietLogger})
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	require.NoError(t, db.Put([]byte("a"), []byte("a"), NoSync))
	require.NoError(t, db.Put([]byte("z"), []byte("z"), NoSync))

	const writes = 100 // over three full stacks
	snaps := make([]*Snapshot, writes)
	want := make([]string, writes) // "" for a deletion
	for i := range writes {
		if i%9 == 8 {
			require.NoError(t, db.Delete([]byte("k"), NoSync))
		} else {
			want[i] = fmt.Sprintf("v%03d", i)
			require.NoError(t, db.Put([]byte("k"), []byte(want[i]), NoSync))
		}
		snaps[i] = db.NewSnapshot()
	}
	defer func() {
		for _, s := range snaps {
			require.NoError(t, s.Release())
		}
	}()

	check := func(stage string) {
		for i, s := range snaps {
			v, err := s.Get([]byte("k"))
			if want[i] == "" {
				require.True(t, errors.Is(err, ErrNotFound), "%s, snapshot %d: %v", stage, i, err)
			} else {
				require.NoError(t, err, "%s, snapshot %d", stage, i)
				require.Equal(t, want[i], string(v), "%s, snapshot %d", stage, i)
			}
			wantKeys := []string{"a", "k", "z"}
			if want[i] == "" {
				wantKeys = []string{"a", "z"}
			}
			it, err := s.NewIterator(nil, nil)
			require.NoError(t, err)
			var fwd, back []string
			for ok := it.First(); ok; ok = it.Next() {
				fwd = append(fwd, string(it.Key()))
				if string(it.Key()) == "k" {
					require.Equal(t, want[i], string(it.Value()), "%s, snapshot %d", stage, i)
				}
			}
			for ok := it.Last(); ok; ok = it.Prev() {
				back = append([]string{string(it.Key())}, back...)
			}
			require.NoError(t, it.Close())
			require.Equal(t, wantKeys, fwd, "%s, snapshot %d", stage, i)
			require.Equal(t, wantKeys, back, "%s, snapshot %d, backward", stage, i)
		}
	}
	check("in the memstore")
	require.NoError(t, db.Flush())
	check("in a table")
}
