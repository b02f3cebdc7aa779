package raftstore_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/stratadb/strata/raftstore"
	"github.com/stretchr/testify/require"
)

// logStore is what raft needs of a store: the contract these tests check.
type logStore interface {
	raft.LogStore
	raft.StableStore
}

// storeKind makes stores for the contract tests. reopen closes a store and
// opens it again on the same data; for raft.InmemStore, which cannot be
// reopened, it returns the store itself, so the contract holds there too
// and the tests are known to be right.
type storeKind struct {
	name   string
	open   func(t *testing.T) logStore
	reopen func(t *testing.T, s logStore) logStore
}

func storeKinds() []storeKind {
	return []storeKind{
		{
			name: "inmem",
			open: func(t *testing.T) logStore { return raft.NewInmemStore() },
			reopen: func(t *testing.T, s logStore) logStore {
				return s
			},
		},
		{
			name: "strata",
			open: func(t *testing.T) logStore {
				dir := t.TempDir()
				s, err := raftstore.Open(dir, nil)
				require.NoError(t, err)
				t.Cleanup(func() { s.Close() })
				dirs[s] = dir
				return s
			},
			reopen: func(t *testing.T, s logStore) logStore {
				dir := dirs[s.(*raftstore.Store)]
				require.NoError(t, s.(*raftstore.Store).Close())
				s2, err := raftstore.Open(dir, nil)
				require.NoError(t, err)
				t.Cleanup(func() { s2.Close() })
				dirs[s2] = dir
				return s2
			},
		},
	}
}

// dirs remembers each strata store's directory for reopen. Tests using it
// do not run in parallel.
var dirs = map[*raftstore.Store]string{}

// entry makes the log entry at index i in term; size is its data length.
func entry(i, term uint64, size int) *raft.Log {
	data := make([]byte, size)
	for j := range data {
		data[j] = byte(i*31 + uint64(j))
	}
	return &raft.Log{
		Index: i, Term: term, Type: raft.LogCommand, Data: data,
		AppendedAt: time.Unix(1700000000, int64(i)),
	}
}

func entries(lo, hi, term uint64, size int) []*raft.Log {
	var ls []*raft.Log
	for i := lo; i <= hi; i++ {
		ls = append(ls, entry(i, term, size))
	}
	return ls
}

// requireLog checks that s holds want at want.Index: every field, with
// times compared as instants and nil and empty slices alike.
func requireLog(t *testing.T, s raft.LogStore, want *raft.Log) {
	t.Helper()
	var got raft.Log
	require.NoError(t, s.GetLog(want.Index, &got), "index %d", want.Index)
	require.Equal(t, want.Index, got.Index)
	require.Equal(t, want.Term, got.Term, "index %d", want.Index)
	require.Equal(t, want.Type, got.Type, "index %d", want.Index)
	require.True(t, bytes.Equal(want.Data, got.Data), "index %d: data differs", want.Index)
	require.True(t, bytes.Equal(want.Extensions, got.Extensions), "index %d: extensions differ", want.Index)
	require.True(t, want.AppendedAt.Equal(got.AppendedAt), "index %d: appendedAt %v, want %v", want.Index, got.AppendedAt, want.AppendedAt)
}

func requireBounds(t *testing.T, s raft.LogStore, first, last uint64) {
	t.Helper()
	f, err := s.FirstIndex()
	require.NoError(t, err)
	l, err := s.LastIndex()
	require.NoError(t, err)
	require.Equal(t, [2]uint64{first, last}, [2]uint64{f, l}, "first and last index")
}

func requireMissing(t *testing.T, s raft.LogStore, indexes ...uint64) {
	t.Helper()
	for _, i := range indexes {
		var l raft.Log
		require.Equal(t, raft.ErrLogNotFound, s.GetLog(i, &l), "index %d", i) // raft compares with ==
	}
}

// TestContract checks each store kind against what raft expects of a
// LogStore and StableStore. Each case starts from an empty store.
func TestContract(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, k storeKind, s logStore)
	}{
		{"EmptyStore", func(t *testing.T, k storeKind, s logStore) {
			requireBounds(t, s, 0, 0)
			requireMissing(t, s, 0, 1, 1000)
			s = k.reopen(t, s)
			requireBounds(t, s, 0, 0)
		}},
		{"StoreAndGet", func(t *testing.T, k storeKind, s logStore) {
			require.NoError(t, s.StoreLog(entry(1, 1, 10)))
			require.NoError(t, s.StoreLogs(entries(2, 100, 1, 100)))
			requireBounds(t, s, 1, 100)
			requireLog(t, s, entry(1, 1, 10))
			for _, l := range entries(2, 100, 1, 100) {
				requireLog(t, s, l)
			}
			requireMissing(t, s, 0, 101)
		}},
		{"AllFields", func(t *testing.T, k storeKind, s logStore) {
			ls := []*raft.Log{
				{Index: 5, Term: 2, Type: raft.LogNoop},
				{Index: 6, Term: 3, Type: raft.LogConfiguration, Data: []byte("conf"), Extensions: []byte("ext")},
				{Index: 7, Term: 3, Type: raft.LogBarrier, Extensions: []byte("only ext")},
				{Index: 8, Term: 1<<64 - 1, Type: raft.LogCommand, Data: []byte{0}, AppendedAt: time.Unix(0, 1)},
			}
			require.NoError(t, s.StoreLogs(ls))
			s = k.reopen(t, s)
			for _, l := range ls {
				requireLog(t, s, l)
			}
			requireBounds(t, s, 5, 8)
		}},
		{"DeletePrefix", func(t *testing.T, k storeKind, s logStore) {
			require.NoError(t, s.StoreLogs(entries(1, 50, 1, 20)))
			require.NoError(t, s.DeleteRange(1, 30))
			requireBounds(t, s, 31, 50)
			requireMissing(t, s, 1, 15, 30)
			requireLog(t, s, entry(31, 1, 20))
			s = k.reopen(t, s)
			requireBounds(t, s, 31, 50)
			requireMissing(t, s, 30)
		}},
		{"DeleteSuffixThenAppend", func(t *testing.T, k storeKind, s logStore) {
			// A follower's conflict: drop the tail, store the leader's.
			require.NoError(t, s.StoreLogs(entries(1, 50, 1, 20)))
			require.NoError(t, s.DeleteRange(41, 50))
			requireBounds(t, s, 1, 40)
			requireMissing(t, s, 41, 50)
			require.NoError(t, s.StoreLogs(entries(41, 45, 2, 30)))
			requireBounds(t, s, 1, 45)
			requireLog(t, s, entry(41, 2, 30))
			s = k.reopen(t, s)
			requireBounds(t, s, 1, 45)
			requireLog(t, s, entry(45, 2, 30))
			requireMissing(t, s, 46)
		}},
		{"DeleteAllThenStoreHigher", func(t *testing.T, k storeKind, s logStore) {
			// After a snapshot install a monotonic store loses every entry
			// and the log goes on after the snapshot's index.
			require.NoError(t, s.StoreLogs(entries(1, 20, 1, 8)))
			require.NoError(t, s.DeleteRange(1, 20))
			requireBounds(t, s, 0, 0)
			requireMissing(t, s, 1, 20)
			require.NoError(t, s.StoreLogs(entries(1001, 1010, 4, 8)))
			requireBounds(t, s, 1001, 1010)
			s = k.reopen(t, s)
			requireBounds(t, s, 1001, 1010)
			requireLog(t, s, entry(1005, 4, 8))
		}},
		{"DeleteBeyondBounds", func(t *testing.T, k storeKind, s logStore) {
			require.NoError(t, s.StoreLogs(entries(10, 20, 1, 8)))
			require.NoError(t, s.DeleteRange(1, 12))
			requireBounds(t, s, 13, 20)
			// past the end (InmemStore walks every index of the range, so not to 2^64-1)
			require.NoError(t, s.DeleteRange(18, 1000))
			requireBounds(t, s, 13, 17)
			requireLog(t, s, entry(17, 1, 8))
			requireMissing(t, s, 12, 18)
		}},
		{"Overwrite", func(t *testing.T, k storeKind, s logStore) {
			require.NoError(t, s.StoreLogs(entries(1, 10, 1, 8)))
			require.NoError(t, s.StoreLogs(entries(6, 8, 2, 16)))
			requireBounds(t, s, 1, 10)
			requireLog(t, s, entry(5, 1, 8))
			requireLog(t, s, entry(7, 2, 16))
			requireLog(t, s, entry(9, 1, 8))
			s = k.reopen(t, s)
			requireLog(t, s, entry(8, 2, 16))
		}},
		{"BigEntries", func(t *testing.T, k storeKind, s logStore) {
			sizes := []int{0, 1, 64 << 10, 1 << 20, 8 << 20}
			for i, size := range sizes {
				require.NoError(t, s.StoreLog(entry(uint64(i+1), 1, size)))
			}
			s = k.reopen(t, s)
			for i, size := range sizes {
				requireLog(t, s, entry(uint64(i+1), 1, size))
			}
		}},
		{"StableStore", func(t *testing.T, k storeKind, s logStore) {
			v, err := s.Get([]byte("never"))
			require.Error(t, err)
			require.Equal(t, "not found", err.Error()) // what raft checks for
			require.Empty(t, v)
			u, err := s.GetUint64([]byte("never"))
			require.NoError(t, err)
			require.Zero(t, u)

			require.NoError(t, s.Set([]byte("LastVoteCand"), []byte("node-2")))
			require.NoError(t, s.SetUint64([]byte("CurrentTerm"), 7))
			require.NoError(t, s.SetUint64([]byte("CurrentTerm"), 1<<63))
			require.NoError(t, s.Set([]byte("empty"), []byte{}))
			s = k.reopen(t, s)
			v, err = s.Get([]byte("LastVoteCand"))
			require.NoError(t, err)
			require.Equal(t, "node-2", string(v))
			u, err = s.GetUint64([]byte("CurrentTerm"))
			require.NoError(t, err)
			require.Equal(t, uint64(1<<63), u)
			v, err = s.Get([]byte("empty"))
			require.NoError(t, err)
			require.Empty(t, v)
		}},
		{"StableBesideLog", func(t *testing.T, k storeKind, s logStore) {
			// The stable store's keys never show up as entries, nor the
			// other way round, and deleting every entry leaves them.
			require.NoError(t, s.SetUint64([]byte("k"), 1))
			require.NoError(t, s.StoreLogs(entries(1, 5, 1, 8)))
			require.NoError(t, s.DeleteRange(1, 100))
			requireBounds(t, s, 0, 0)
			u, err := s.GetUint64([]byte("k"))
			require.NoError(t, err)
			require.Equal(t, uint64(1), u)
		}},
	}
	for _, k := range storeKinds() {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/%s", k.name, c.name), func(t *testing.T) {
				c.run(t, k, k.open(t))
			})
		}
	}
}
