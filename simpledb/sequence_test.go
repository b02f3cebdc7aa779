package simpledb

import (
	"encoding/binary"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/stratadb/strata/vfs"
	"github.com/stretchr/testify/require"
)

var seqKey = []byte("seq")

// takeIDs takes n ids from s, and checks that each is above the one before
// it, and above after.
func takeIDs(t *testing.T, s *Sequence, n int, after int64) []uint64 {
	t.Helper()
	ids := make([]uint64, n)
	for i := range ids {
		id, err := s.Next()
		require.NoError(t, err)
		require.Greater(t, int64(id), after, "id %d", i)
		after, ids[i] = int64(id), id
	}
	return ids
}

// storedNext returns the next unleased id the database holds for seqKey.
func storedNext(t *testing.T, db *DB) uint64 {
	t.Helper()
	v, err := db.Get(seqKey)
	require.NoError(t, err)
	require.Len(t, v, 8)
	return binary.BigEndian.Uint64(v)
}

// A sequence hands out 0, 1, 2, ... a lease at a time; the key holds the
// first id after the lease, or, after Release, the next id.
func TestSequenceLeases(t *testing.T) {
	for _, tc := range []struct {
		name      string
		lease     uint64
		take      int
		wantLease uint64 // the key after the ids are taken
	}{
		{"default lease", 0, 1, DefaultSequenceLease},
		{"one lease", 10, 10, 10},
		{"into a second lease", 10, 11, 20},
		{"lease of one", 1, 5, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := Open("/db", testOptions(vfs.NewMem()))
			require.NoError(t, err)
			defer db.Close()
			s, err := db.NewSequence(seqKey, tc.lease)
			require.NoError(t, err)
			_, err = db.Get(seqKey)
			require.ErrorIs(t, err, ErrNotFound, "no lease before the first Next")
			ids := takeIDs(t, s, tc.take, -1)
			require.Equal(t, uint64(0), ids[0], "a new sequence starts at 0")
			require.Equal(t, uint64(tc.take-1), ids[len(ids)-1], "no id skipped")
			require.Equal(t, tc.wantLease, storedNext(t, db))
			require.NoError(t, s.Release())
			require.Equal(t, uint64(tc.take), storedNext(t, db), "Release stores the next id")
		})
	}
}

// Ids go on rising across reopens, with or without Release, and across
// power losses; Release skips none, a crash or a Close without it at most
// the rest of a lease.
func TestSequenceAcrossReopenAndCrash(t *testing.T) {
	mem := vfs.NewMem()
	opts := testOptions(mem)
	opts.NoSync = true // leases are synced all the same
	db, err := Open("/db", opts)
	require.NoError(t, err)
	s, err := db.NewSequence(seqKey, 10)
	require.NoError(t, err)
	last := int64(-1)
	take := func(n int) {
		t.Helper()
		ids := takeIDs(t, s, n, last)
		last = int64(ids[len(ids)-1])
	}
	reopen := func(fsys vfs.FS, release bool) {
		t.Helper()
		if release {
			require.NoError(t, s.Release())
		}
		require.NoError(t, db.Close())
		o := *opts
		o.FS = fsys
		db, err = Open("/db", &o)
		require.NoError(t, err)
		s, err = db.NewSequence(seqKey, 10)
		require.NoError(t, err)
	}

	take(15) // 0 to 14; 20 stored
	reopen(mem, true)
	take(1)
	require.Equal(t, int64(15), last, "Release skipped nothing")

	take(2) // 16, 17
	reopen(mem, false)
	take(1)
	require.Equal(t, int64(25), last, "a Close without Release skips the rest of the lease (18 and 19), and no more")

	take(3) // 26 to 28 of the lease up to 35
	crashed := mem.CrashClone(vfs.CrashOptions{})
	mem = crashed
	reopen(crashed, false) // as if the power failed, Release or not
	take(1)
	require.Equal(t, int64(35), last, "after a power loss the sequence starts after the synced lease")

	take(4) // 36 to 39
	require.NoError(t, s.Release())
	crashed = mem.CrashClone(vfs.CrashOptions{})
	require.NoError(t, db.Close())
	db, err = Open("/db", testOptions(crashed))
	require.NoError(t, err)
	defer db.Close()
	s, err = db.NewSequence(seqKey, 10)
	require.NoError(t, err)
	take(1)
	require.Equal(t, int64(40), last, "Release's write is synced")
	require.NoError(t, s.Release())
}

// Concurrent Next calls get distinct ids, each caller's rising, and
// together every id from 0 on.
func TestSequenceConcurrentNext(t *testing.T) {
	db, err := Open("/db", testOptions(vfs.NewMem()))
	require.NoError(t, err)
	defer db.Close()
	s, err := db.NewSequence(seqKey, 7)
	require.NoError(t, err)
	const callers, each = 8, 300
	got := make([][]uint64, callers)
	var wg sync.WaitGroup
	for c := range callers {
		wg.Go(func() {
			for range each {
				id, err := s.Next()
				if err != nil {
					t.Error(err)
					return
				}
				got[c] = append(got[c], id)
			}
		})
	}
	wg.Wait()
	var all []uint64
	for c, ids := range got {
		require.True(t, slices.IsSorted(ids), "caller %d's ids rise", c)
		all = append(all, ids...)
	}
	slices.Sort(all)
	for i, id := range all {
		require.Equal(t, uint64(i), id, "every id once")
	}
	require.NoError(t, s.Release())
	require.Equal(t, uint64(callers*each), storedNext(t, db))
}

// A key has one open Sequence at a time; Release frees it.
func TestSequenceInUse(t *testing.T) {
	db, err := Open("/db", testOptions(vfs.NewMem()))
	require.NoError(t, err)
	defer db.Close()
	s, err := db.NewSequence(seqKey, 0)
	require.NoError(t, err)
	_, err = db.NewSequence(seqKey, 5)
	require.ErrorIs(t, err, ErrSequenceInUse)
	other, err := db.NewSequence([]byte("other"), 0)
	require.NoError(t, err, "another key")
	require.NoError(t, other.Release())

	takeIDs(t, s, 3, -1)
	require.NoError(t, s.Release())
	require.ErrorIs(t, s.Release(), ErrClosed)
	_, err = s.Next()
	require.ErrorIs(t, err, ErrClosed)
	s, err = db.NewSequence(seqKey, 0)
	require.NoError(t, err, "released")
	takeIDs(t, s, 1, 2)
	require.NoError(t, s.Release())
}

func TestSequenceRefuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stored []byte // the key's value beforehand; nil: none
		key    []byte
		want   error
	}{
		{"malformed, short", []byte("1234567"), seqKey, ErrSequenceMalformed},
		{"malformed, long", []byte("123456789"), seqKey, ErrSequenceMalformed},
		{"malformed, empty", []byte{}, seqKey, ErrSequenceMalformed},
		{"empty key", nil, nil, ErrEmptyKey},
		{"key too large", nil, make([]byte, MaxKeySize+1), ErrKeyTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := Open("/db", testOptions(vfs.NewMem()))
			require.NoError(t, err)
			defer db.Close()
			if tc.stored != nil {
				require.NoError(t, db.Put(tc.key, tc.stored, DefaultSync))
			}
			_, err = db.NewSequence(tc.key, 0)
			require.ErrorIs(t, err, tc.want)
			if tc.stored != nil {
				require.NoError(t, db.Put(tc.key, make([]byte, 8), DefaultSync))
				s, err := db.NewSequence(tc.key, 0)
				require.NoError(t, err, "a refused NewSequence leaves the key free")
				require.NoError(t, s.Release())
			}
		})
	}

	t.Run("exhausted", func(t *testing.T) {
		db, err := Open("/db", testOptions(vfs.NewMem()))
		require.NoError(t, err)
		defer db.Close()
		require.NoError(t, db.Put(seqKey, binary.BigEndian.AppendUint64(nil, math.MaxUint64-2), DefaultSync))
		s, err := db.NewSequence(seqKey, 0)
		require.NoError(t, err)
		for _, want := range []uint64{math.MaxUint64 - 2, math.MaxUint64 - 1} {
			id, err := s.Next()
			require.NoError(t, err)
			require.Equal(t, want, id)
		}
		_, err = s.Next()
		require.ErrorIs(t, err, ErrSequenceExhausted)
		require.NoError(t, s.Release())
	})

	t.Run("read-only", func(t *testing.T) {
		mem := vfs.NewMem()
		db, err := Open("/db", testOptions(mem))
		require.NoError(t, err)
		require.NoError(t, db.Close())
		opts := testOptions(mem)
		opts.ReadOnly = true
		db, err = Open("/db", opts)
		require.NoError(t, err)
		defer db.Close()
		_, err = db.NewSequence(seqKey, 0)
		require.ErrorIs(t, err, ErrReadOnly)
	})

	t.Run("closed", func(t *testing.T) {
		db, err := Open("/db", testOptions(vfs.NewMem()))
		require.NoError(t, err)
		s, err := db.NewSequence(seqKey, 0)
		require.NoError(t, err)
		takeIDs(t, s, 1, -1)
		require.NoError(t, db.Close())
		_, err = s.Next()
		require.ErrorIs(t, err, ErrClosed, "Next after the database's Close")
		require.ErrorIs(t, s.Release(), ErrClosed, "Release after the database's Close")
		_, err = db.NewSequence(seqKey, 0)
		require.ErrorIs(t, err, ErrClosed)
	})
}
