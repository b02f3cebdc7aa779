package raftstore_test

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/hashicorp/raft"
	"github.com/stratadb/strata/raftstore"
	"github.com/stratadb/strata/simpledb"
	"github.com/stratadb/strata/sstables"
	"github.com/stratadb/strata/vfs"
	"github.com/stretchr/testify/require"
)

func openStore(t *testing.T, dir string, opts *raftstore.Options) *raftstore.Store {
	t.Helper()
	s, err := raftstore.Open(dir, opts)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// Bad input to the log is refused with a matchable error, and nothing of
// it is written: the bounds and the entries stay, also across a reopen.
func TestStoreLogsBadInput(t *testing.T) {
	cases := []struct {
		name  string
		store func(s *raftstore.Store) error
		want  error
	}{
		{"GapInsideBatch", func(s *raftstore.Store) error {
			return s.StoreLogs([]*raft.Log{entry(11, 1, 8), entry(12, 1, 8), entry(14, 1, 8)})
		}, raftstore.ErrLogGap},
		{"DescendingBatch", func(s *raftstore.Store) error {
			return s.StoreLogs([]*raft.Log{entry(12, 1, 8), entry(11, 1, 8)})
		}, raftstore.ErrLogGap},
		{"GapAfterLast", func(s *raftstore.Store) error {
			return s.StoreLogs(entries(12, 15, 1, 8))
		}, raftstore.ErrLogGap},
		{"GapBeforeFirst", func(s *raftstore.Store) error {
			return s.StoreLogs(entries(1, 3, 1, 8))
		}, raftstore.ErrLogGap},
		{"IndexZero", func(s *raftstore.Store) error {
			return s.StoreLog(&raft.Log{Index: 0, Term: 1})
		}, raftstore.ErrInvalidLog},
		{"NilEntry", func(s *raftstore.Store) error {
			return s.StoreLogs([]*raft.Log{entry(11, 1, 8), nil})
		}, raftstore.ErrInvalidLog},
		{"DeleteInside", func(s *raftstore.Store) error {
			return s.DeleteRange(7, 8)
		}, raftstore.ErrLogGap},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := raftstore.Open(dir, nil)
			require.NoError(t, err)
			require.NoError(t, s.StoreLogs(entries(5, 10, 1, 8)))
			require.ErrorIs(t, c.store(s), c.want)
			requireBounds(t, s, 5, 10)
			require.NoError(t, s.Close())
			s = openStore(t, dir, nil)
			requireBounds(t, s, 5, 10)
			for _, l := range entries(5, 10, 1, 8) {
				requireLog(t, s, l)
			}
			requireMissing(t, s, 4, 11, 12, 13, 14)
		})
	}
}

// Where the log continues or overlaps what is held, StoreLogs accepts it.
func TestStoreLogsAdjoining(t *testing.T) {
	cases := []struct {
		name        string
		lo, hi      uint64
		first, last uint64
	}{
		{"Continues", 11, 12, 5, 12},
		{"EndsBeforeFirst", 2, 4, 2, 10},
		{"OverlapsFirst", 3, 6, 3, 10},
		{"OverlapsLast", 9, 13, 5, 13},
		{"Covers", 1, 20, 1, 20},
		{"Inside", 6, 7, 5, 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := openStore(t, t.TempDir(), nil)
			require.NoError(t, s.StoreLogs(entries(5, 10, 1, 8)))
			require.NoError(t, s.StoreLogs(entries(c.lo, c.hi, 2, 4)))
			requireBounds(t, s, c.first, c.last)
			requireLog(t, s, entry(c.lo, 2, 4))
		})
	}
}

// DeleteRange to the largest index works (its end key is the end of the
// log's keys), as does one of a range holding nothing.
func TestDeleteRangeEdges(t *testing.T) {
	s := openStore(t, t.TempDir(), nil)
	require.NoError(t, s.DeleteRange(1, 10)) // empty store
	require.NoError(t, s.StoreLogs(entries(5, 10, 1, 8)))
	require.NoError(t, s.DeleteRange(20, 30))
	require.NoError(t, s.DeleteRange(3, 2))
	requireBounds(t, s, 5, 10)
	require.NoError(t, s.DeleteRange(8, 1<<64-1))
	requireBounds(t, s, 5, 7)
	require.NoError(t, s.DeleteRange(0, 1<<64-1))
	requireBounds(t, s, 0, 0)
	require.NoError(t, s.StoreLog(&raft.Log{Index: 1<<64 - 1, Term: 1}))
	requireBounds(t, s, 1<<64-1, 1<<64-1)
	require.NoError(t, s.DeleteRange(1<<64-1, 1<<64-1))
	requireBounds(t, s, 0, 0)
}

// A directory that holds something else is refused, with nothing written.
func TestOpenForeignDirectory(t *testing.T) {
	cases := []struct {
		name    string
		prepare func(t *testing.T, dir string)
		want    error
	}{
		{"OtherFiles", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello"), 0o644))
		}, simpledb.ErrNotDB},
		{"OtherDatabase", func(t *testing.T, dir string) {
			db, err := simpledb.Open(dir, nil)
			require.NoError(t, err)
			require.NoError(t, db.Put([]byte("user"), []byte("data"), simpledb.DefaultSync))
			require.NoError(t, db.Close())
		}, raftstore.ErrNotRaftStore},
		{"OtherMarker", func(t *testing.T, dir string) {
			db, err := simpledb.Open(dir, nil)
			require.NoError(t, err)
			require.NoError(t, db.Put([]byte("mformat"), []byte("something-else\x01"), simpledb.DefaultSync))
			require.NoError(t, db.Close())
		}, raftstore.ErrNotRaftStore},
		{"NewerFormat", func(t *testing.T, dir string) {
			db, err := simpledb.Open(dir, nil)
			require.NoError(t, err)
			require.NoError(t, db.Put([]byte("mformat"), []byte("strata-raftstore\x09"), simpledb.DefaultSync))
			require.NoError(t, db.Close())
		}, raftstore.ErrFormatVersion},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.prepare(t, dir)
			before := dirListing(t, dir)
			_, err := raftstore.Open(dir, nil)
			require.ErrorIs(t, err, c.want)
			require.Equal(t, before, dirListing(t, dir), "Open changed the directory")
		})
	}
}

// dirListing returns each file's name and contents, LOCK aside: a
// read-only open creates and removes one.
func dirListing(t *testing.T, dir string) map[string]string {
	out := map[string]string{}
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range ents {
		if e.Name() == "LOCK" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		out[e.Name()] = string(b)
	}
	return out
}

func TestOpenOptions(t *testing.T) {
	reverse := &sstables.Comparator{Name: "reverse", Compare: func(a, b []byte) int { return -sstables.Bytewise.Compare(a, b) }}
	_, err := raftstore.Open(t.TempDir(), &raftstore.Options{DB: simpledb.Options{Comparator: reverse}})
	require.ErrorIs(t, err, raftstore.ErrKeyOrder)

	// A read-only store reads and refuses writes.
	dir := t.TempDir()
	s, err := raftstore.Open(dir, nil)
	require.NoError(t, err)
	require.NoError(t, s.StoreLogs(entries(1, 3, 1, 8)))
	require.NoError(t, s.Close())
	ro := openStore(t, dir, &raftstore.Options{DB: simpledb.Options{ReadOnly: true}})
	requireBounds(t, ro, 1, 3)
	require.ErrorIs(t, ro.StoreLog(entry(4, 1, 8)), simpledb.ErrReadOnly)
	requireBounds(t, ro, 1, 3)
}

// A stored entry that does not decode is an error naming its index, never
// a wrong entry; so is a uint64 of the wrong length.
func TestCorruptEntries(t *testing.T) {
	s := openStore(t, t.TempDir(), nil)
	require.NoError(t, s.StoreLogs(entries(1, 5, 1, 8)))
	key := func(i byte) []byte { return []byte{'l', 0, 0, 0, 0, 0, 0, 0, i} }
	good := func() []byte {
		v, err := s.DB().Get(key(1))
		require.NoError(t, err)
		return v
	}()
	cases := []struct {
		name  string
		value []byte
	}{
		{"Empty", nil},
		{"ShortHeader", good[:10]},
		{"UnknownFormat", append([]byte{2}, good[1:]...)},
		{"UnknownFlags", append(append([]byte{}, good[:2]...), append([]byte{0x80}, good[3:]...)...)},
		{"DataPastEnd", good[:len(good)-1]},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			idx := byte(i + 1)
			require.NoError(t, s.DB().Put(key(idx), c.value, simpledb.DefaultSync))
			var l raft.Log
			err := s.GetLog(uint64(idx), &l)
			require.ErrorIs(t, err, raftstore.ErrCorruptEntry)
			require.Contains(t, err.Error(), "log entry ")
		})
	}
	require.NoError(t, s.Set([]byte("term"), []byte{1, 2, 3}))
	_, err := s.GetUint64([]byte("term"))
	require.ErrorIs(t, err, raftstore.ErrCorruptEntry)
}

// Every StoreLogs, DeleteRange and Set that returned survives a power loss
// at any moment after it: the store's writes are synced.
func TestPowerLoss(t *testing.T) {
	fs := vfs.NewMem()
	opts := &raftstore.Options{DB: simpledb.Options{FS: fs, MemstoreSize: simpledb.MinMemstoreSize}}
	s, err := raftstore.Open("db", opts)
	require.NoError(t, err)
	var next uint64 = 1
	for round := range 40 {
		n := uint64(round%7 + 1)
		require.NoError(t, s.StoreLogs(entries(next, next+n-1, uint64(round), 300)))
		next += n
		if round%10 == 9 {
			require.NoError(t, s.DeleteRange(1, next-20))
		}
		require.NoError(t, s.SetUint64([]byte("round"), uint64(round)))

		crashed := fs.CrashClone(vfs.CrashOptions{})
		c, err := raftstore.Open("db", &raftstore.Options{DB: simpledb.Options{FS: crashed}})
		require.NoError(t, err)
		f, _ := s.FirstIndex()
		l, _ := s.LastIndex()
		requireBounds(t, c, f, l)
		requireLog(t, c, entry(next-1, uint64(round), 300))
		r, err := c.GetUint64([]byte("round"))
		require.NoError(t, err)
		require.Equal(t, uint64(round), r)
		require.NoError(t, c.Close())
	}
	require.NoError(t, s.Close())
}

// Readers run alongside the writer; under -race this checks the store's
// synchronisation.
func TestConcurrentReaders(t *testing.T) {
	s := openStore(t, t.TempDir(), nil)
	const total = 400
	var wg sync.WaitGroup
	done := make(chan struct{})
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				last, _ := s.LastIndex()
				first, _ := s.FirstIndex()
				if last == 0 || first == 0 {
					continue
				}
				var l raft.Log
				if err := s.GetLog(last, &l); err != nil && err != raft.ErrLogNotFound {
					t.Error(err)
					return
				}
			}
		}()
	}
	for i := uint64(1); i <= total; i += 4 {
		require.NoError(t, s.StoreLogs(entries(i, i+3, 1, 64)))
		if i > 100 {
			require.NoError(t, s.DeleteRange(1, i-100))
		}
	}
	close(done)
	wg.Wait()
	requireBounds(t, s, total-99-3, total)
}
