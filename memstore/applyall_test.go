package memstore

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stratadb/strata/internal/testseed"
	"github.com/stretchr/testify/require"
)

// entries lists every version m holds, in order, and its range deletions.
func entries(m *Memstore) []string {
	var out []string
	it := m.NewEntryIterator(&IterOptions{Seq: MaxSeq})
	for ok := it.First(); ok; ok = it.Next() {
		out = append(out, fmt.Sprintf("%q@%d/%d=%q", it.Key(), it.Seq(), it.Kind(), it.Value()))
	}
	for _, f := range m.RangeDeletions() {
		out = append(out, fmt.Sprintf("range %q-%q %v", f.Start, f.End, f.Seqs))
	}
	return out
}

// ApplyAll of writes in chunks, each shuffled, leaves the memstore Apply of
// the same writes one by one, in order, leaves.
func TestApplyAllMatchesApply(t *testing.T) {
	rng := rand.New(rand.NewPCG(testseed.Seed(t), 0))
	var writes []Write
	for seq := uint64(1); seq <= 5000; seq++ {
		k := fmt.Appendf(nil, "k%03d", rng.IntN(400))
		switch r := rng.IntN(20); {
		case r == 0:
			hi := fmt.Appendf(nil, "k%03d", rng.IntN(400))
			if string(hi) <= string(k) {
				hi = nil // unbounded
			}
			writes = append(writes, Write{Seq: seq, Kind: KindRangeDelete, Key: k, Value: hi})
		case r < 5:
			writes = append(writes, Write{Seq: seq, Kind: KindDelete, Key: k})
		default:
			writes = append(writes, Write{Seq: seq, Kind: KindSet, Key: k, Value: fmt.Appendf(nil, "v%d", seq)})
		}
	}
	want := New(nil)
	for _, w := range writes {
		require.NoError(t, want.Apply(w.Seq, w.Kind, w.Key, w.Value))
	}
	got := New(nil)
	for len(writes) > 0 {
		n := min(len(writes), 1+rng.IntN(700))
		chunk := append([]Write(nil), writes[:n]...)
		rng.Shuffle(len(chunk), func(i, j int) { chunk[i], chunk[j] = chunk[j], chunk[i] })
		require.NoError(t, got.ApplyAll(chunk))
		writes = writes[n:]
	}
	require.Equal(t, want.LastSeq(), got.LastSeq())
	require.Equal(t, want.Len(), got.Len())
	require.Equal(t, entries(want), entries(got))
}

// A bad write anywhere in the batch leaves the memstore unchanged.
func TestApplyAllRefuses(t *testing.T) {
	set := func(seq uint64, key string) Write {
		return Write{Seq: seq, Kind: KindSet, Key: []byte(key), Value: []byte("v")}
	}
	for _, tc := range []struct {
		name   string
		writes []Write
		err    error
	}{
		{"a sequence number not above LastSeq", []Write{set(11, "a"), set(10, "b")}, ErrSeqNotIncreasing},
		{"a sequence number above MaxSeq", []Write{set(11, "a"), set(MaxSeq+1, "b")}, ErrSeqTooLarge},
		{"a key twice at one sequence number", []Write{set(11, "a"), set(12, "b"), set(11, "a")}, ErrSeqNotIncreasing},
		{"an empty key", []Write{set(11, "a"), set(12, "")}, ErrEmptyKey},
		{"an empty range", []Write{set(11, "a"), {Seq: 12, Kind: KindRangeDelete, Key: []byte("b"), Value: []byte("a")}}, ErrBadRangeDel},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New(nil)
			require.NoError(t, m.Apply(10, KindSet, []byte("x"), []byte("y")))
			before := entries(m)
			require.ErrorIs(t, m.ApplyAll(tc.writes), tc.err)
			require.Equal(t, before, entries(m))
			require.Equal(t, uint64(10), m.LastSeq())
		})
	}
}
