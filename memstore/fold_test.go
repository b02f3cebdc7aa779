package memstore

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stratadb/strata/internal/testseed"
	"github.com/stretchr/testify/require"
)

// addMerge adds 8-byte little-endian counters, as a database's uint64
// merger does.
func addMerge(_, older, newer []byte) ([]byte, error) {
	if len(older) != 8 || len(newer) != 8 {
		return nil, errors.New("not a counter")
	}
	return binary.LittleEndian.AppendUint64(nil, binary.LittleEndian.Uint64(older)+binary.LittleEndian.Uint64(newer)), nil
}

func u64(n uint64) []byte { return binary.LittleEndian.AppendUint64(nil, n) }

// What folds and what does not, and what each read sees after.
func TestApplyMergeFolds(t *testing.T) {
	add := Folder{Merge: addMerge}
	type write struct {
		kind Kind // KindMerge: ApplyMerge with the case's folder
		key  string
		val  []byte
	}
	for _, tc := range []struct {
		name   string
		folder Folder
		writes []write // at sequence numbers 1, 2, ...
		folded []bool  // ApplyMerge's report, for each merge
		len    int
		// the key "k" at each sequence number from 1: its value and result
		at []Result
		v  []uint64
	}{
		{"onto a value", add, []write{{KindSet, "k", u64(5)}, {KindMerge, "k", u64(1)}, {KindMerge, "k", u64(2)}},
			[]bool{true, true}, 1, []Result{Found, Found, Found}, []uint64{5, 6, 8}},
		{"onto an operand: an operand", add, []write{{KindMerge, "k", u64(1)}, {KindMerge, "k", u64(2)}},
			[]bool{false, true}, 1, []Result{Merge, Merge}, []uint64{1, 3}},
		{"onto a deletion: the operand, a value", add, []write{{KindDelete, "k", nil}, {KindMerge, "k", u64(2)}},
			[]bool{true}, 1, []Result{Deleted, Found}, []uint64{0, 2}},
		{"not onto a stack", add, []write{{KindSet, "k", u64(5)}, {KindDelete, "k", nil}, {KindMerge, "k", u64(2)}},
			[]bool{false}, 3, []Result{Found, Deleted, Merge}, []uint64{5, 0, 2}},
		{"not onto another key", add, []write{{KindSet, "j", u64(5)}, {KindMerge, "k", u64(2)}},
			[]bool{false}, 2, []Result{Absent, Merge}, []uint64{0, 2}},
		{"not at or below Above", Folder{Merge: addMerge, Above: 1}, []write{{KindSet, "k", u64(5)}, {KindMerge, "k", u64(1)}, {KindMerge, "k", u64(2)}},
			[]bool{false, true}, 2, []Result{Found, Merge, Merge}, []uint64{5, 1, 3}},
		{"not across a range deletion", add, []write{{KindSet, "k", u64(5)}, {KindRangeDelete, "a", []byte("z")}, {KindMerge, "k", u64(2)}},
			[]bool{false}, 2, []Result{Found, Deleted, Merge}, []uint64{5, 0, 2}},
		{"not when the merge fails", add, []write{{KindSet, "k", []byte("five")}, {KindMerge, "k", u64(2)}},
			[]bool{false}, 2, []Result{Found, Merge}, []uint64{0, 2}},
		{"not without a merge", Folder{}, []write{{KindSet, "k", u64(5)}, {KindMerge, "k", u64(2)}},
			[]bool{false}, 2, []Result{Found, Merge}, []uint64{5, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New(nil)
			var folded []bool
			for i, w := range tc.writes {
				seq := uint64(i + 1)
				if w.kind == KindMerge {
					f, err := m.ApplyMerge(seq, []byte(w.key), w.val, tc.folder)
					require.NoError(t, err)
					folded = append(folded, f)
					continue
				}
				require.NoError(t, m.Apply(seq, w.kind, []byte(w.key), w.val))
			}
			require.Equal(t, tc.folded, folded)
			require.Equal(t, tc.len, m.Len())
			require.Equal(t, uint64(len(tc.writes)), m.LastSeq())
			for i, want := range tc.at {
				seq := uint64(i + 1)
				v, res := m.GetAt([]byte("k"), seq)
				require.Equal(t, want, res, "at %d", seq)
				if (res == Found || res == Merge) && len(v) == 8 {
					require.Equal(t, tc.v[i], binary.LittleEndian.Uint64(v), "at %d", seq)
				}
				// The raw view at seq shows the version GetAt found, at
				// its own sequence number.
				it := m.NewEntryIterator(&IterOptions{LowerBound: []byte("k"), UpperBound: []byte("l"), Seq: seq})
				if it.First() && (res == Found || res == Merge) {
					require.Equal(t, v, it.Value(), "at %d", seq)
					require.LessOrEqual(t, it.Seq(), seq)
				}
			}
		})
	}
}

// Readers at fixed sequence numbers read on while a writer folds operands
// into a few counters: each sees, every time, the count of the increments
// up to its sequence number, by GetAt and by iterators both ways.
func TestConcurrentReadersDuringFolds(t *testing.T) {
	rng := rand.New(rand.NewPCG(testseed.Seed(t), 0))
	const keys = 4
	n := 20_000
	if testseed.Long() {
		n = 500_000
	}
	keyOf := make([]int, n+1)
	for seq := 1; seq <= n; seq++ {
		keyOf[seq] = rng.IntN(keys)
	}
	countAt := func(k int, seq uint64) uint64 {
		c := uint64(0)
		for s := 1; s <= int(seq); s++ {
			if keyOf[s] == k {
				c++
			}
		}
		return c
	}
	key := func(k int) []byte { return []byte{'k', byte('0' + k)} }
	m := New(&Options{Seed: rng.Uint64()})
	var written atomic.Uint64
	var wg sync.WaitGroup
	wg.Go(func() {
		for seq := 1; seq <= n; seq++ {
			if _, err := m.ApplyMerge(uint64(seq), key(keyOf[seq]), u64(1), Folder{Merge: addMerge}); err != nil {
				t.Error(err)
				return
			}
			written.Store(uint64(seq))
		}
	})
	for r := range 2 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(r), 1))
			for written.Load() < uint64(n) {
				seq := m.LastSeq()
				if seq == 0 {
					continue
				}
				seq = 1 + rng.Uint64N(seq)
				for k := range keys {
					want := countAt(k, seq)
					v, res := m.GetAt(key(k), seq)
					if want == 0 {
						if res != Absent {
							t.Errorf("key %d at %d: %v, want absent", k, seq, res)
						}
						continue
					}
					if res != Merge || binary.LittleEndian.Uint64(v) != want {
						t.Errorf("key %d at %d: %v %v, want %d", k, seq, res, v, want)
						return
					}
				}
				it := m.NewIterator(&IterOptions{Seq: seq})
				for ok := it.Last(); ok; ok = it.Prev() {
					k := int(it.Key()[1] - '0')
					if got, want := binary.LittleEndian.Uint64(it.Value()), countAt(k, seq); got != want || it.Seq() > seq {
						t.Errorf("iterator at %d, key %d: %d at %d, want %d", seq, k, got, it.Seq(), want)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	require.Equal(t, keys, m.Len(), "every operand folded into the first of its key")
}
