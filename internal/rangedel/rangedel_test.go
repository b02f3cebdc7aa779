package rangedel

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stratadb/strata/internal/testseed"
	"github.com/stretchr/testify/require"
)

var cmp Cmp = bytes.Compare

func k(s string) []byte { return []byte(s) }

func TestBuildFragments(t *testing.T) {
	tests := []struct {
		name  string
		tombs []Tombstone
		want  List
	}{
		{"none", nil, nil},
		{"one", []Tombstone{{k("b"), k("d"), 3}}, List{{k("b"), k("d"), []uint64{3}}}},
		{"overlapping", []Tombstone{{k("b"), k("f"), 7}, {k("d"), k("h"), 9}},
			List{{k("b"), k("d"), []uint64{7}}, {k("d"), k("f"), []uint64{9, 7}}, {k("f"), k("h"), []uint64{9}}}},
		{"adjacent with one seq join", []Tombstone{{k("b"), k("d"), 3}, {k("d"), k("f"), 3}}, List{{k("b"), k("f"), []uint64{3}}}},
		{"a gap stays", []Tombstone{{k("b"), k("c"), 3}, {k("d"), k("f"), 3}},
			List{{k("b"), k("c"), []uint64{3}}, {k("d"), k("f"), []uint64{3}}}},
		{"unbounded both sides", []Tombstone{{nil, k("c"), 2}, {k("b"), nil, 5}},
			List{{k(""), k("b"), []uint64{2}}, {k("b"), k("c"), []uint64{5, 2}}, {k("c"), nil, []uint64{5}}}},
		{"the same seq twice", []Tombstone{{k("a"), k("c"), 4}, {k("a"), k("c"), 4}}, List{{k("a"), k("c"), []uint64{4}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Build(cmp, tt.tombs)
			require.Equal(t, len(tt.want), len(got), "%v", got)
			for i := range got {
				require.Equal(t, string(tt.want[i].Start), string(got[i].Start), "fragment %d", i)
				require.Equal(t, string(tt.want[i].End), string(got[i].End), "fragment %d", i)
				require.Equal(t, tt.want[i].Seqs, got[i].Seqs, "fragment %d", i)
			}
		})
	}
}

// modelSeqAt is SeqAt over the unfragmented tombstones.
func modelSeqAt(tombs []Tombstone, key []byte, seq uint64) uint64 {
	var best uint64
	for _, t := range tombs {
		covers := (len(t.Start) == 0 || bytes.Compare(t.Start, key) <= 0) && (len(t.End) == 0 || bytes.Compare(key, t.End) < 0)
		if covers && t.Seq <= seq && t.Seq > best {
			best = t.Seq
		}
	}
	return best
}

func randomKey(rng *rand.Rand) []byte {
	if rng.IntN(10) == 0 {
		return nil
	}
	return []byte(fmt.Sprintf("%02d", rng.IntN(40)))
}

func randomTombstones(rng *rand.Rand, n int) []Tombstone {
	var tombs []Tombstone
	for len(tombs) < n {
		s, e := randomKey(rng), randomKey(rng)
		if len(s) > 0 && len(e) > 0 && bytes.Compare(s, e) >= 0 {
			continue
		}
		tombs = append(tombs, Tombstone{Start: s, End: e, Seq: uint64(rng.IntN(20) + 1)})
	}
	return tombs
}

// checkList checks the properties every List has.
func checkList(t *testing.T, l List) {
	t.Helper()
	for i, f := range l {
		require.NoError(t, Check(cmp, Tombstone{Start: f.Start, End: f.End}), "fragment %d", i)
		require.NotEmpty(t, f.Seqs)
		for j := 1; j < len(f.Seqs); j++ {
			require.Greater(t, f.Seqs[j-1], f.Seqs[j])
		}
		if i > 0 {
			prev := l[i-1].End
			require.NotEmpty(t, prev, "an open end before fragment %d", i)
			require.NotEmpty(t, f.Start, "an open start at fragment %d", i)
			require.LessOrEqual(t, bytes.Compare(prev, f.Start), 0)
		}
	}
}

func TestListMatchesModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(testseed.Seed(t), 0))
	for round := 0; round < 200; round++ {
		tombs := randomTombstones(rng, rng.IntN(12))
		l := Build(cmp, tombs)
		checkList(t, l)
		// Add, one at a time, builds the same list.
		var inc List
		for _, tb := range tombs {
			inc = inc.Add(cmp, tb)
		}
		require.Equal(t, l.Encode(nil), inc.Encode(nil))
		decoded, err := Decode(cmp, l.Encode(nil))
		require.NoError(t, err)
		require.Equal(t, l.Encode(nil), decoded.Encode(nil))
		for i := 0; i < 50; i++ {
			key := []byte(fmt.Sprintf("%02d", rng.IntN(42)))
			if rng.IntN(2) == 0 {
				key = append(key, 'x')
			}
			seq := uint64(rng.IntN(22))
			require.Equal(t, modelSeqAt(tombs, key, seq), l.SeqAt(cmp, key, seq), "key %s seq %d tombs %v", key, seq, tombs)
			// Truncating to a range keeps the answers inside it.
			lo, hi := randomKey(rng), randomKey(rng)
			tr := l.Truncate(cmp, lo, hi)
			checkList(t, tr)
			inside := (len(lo) == 0 || bytes.Compare(lo, key) <= 0) && (len(hi) == 0 || bytes.Compare(key, hi) < 0)
			want := uint64(0)
			if inside {
				want = modelSeqAt(tombs, key, seq)
			}
			require.Equal(t, want, tr.SeqAt(cmp, key, seq), "key %s in [%s, %s)", key, lo, hi)
			// Newest keeps, per fragment, the newest visible seq.
			require.Equal(t, modelSeqAt(tombs, key, seq), Build(cmp, l.Newest(cmp, nil, seq, nil, nil)).SeqAt(cmp, key, seq))
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	good := List{{k("a"), k("c"), []uint64{5, 3}}, {k("c"), nil, []uint64{1}}}
	_, err := Decode(cmp, good.Encode(nil))
	require.NoError(t, err)
	tests := []struct {
		name string
		l    List
	}{
		{"empty range", List{{k("c"), k("c"), []uint64{1}}}},
		{"overlap", List{{k("a"), k("d"), []uint64{1}}, {k("c"), k("e"), []uint64{1}}}},
		{"after an open end", List{{k("a"), nil, []uint64{1}}, {k("c"), k("e"), []uint64{1}}}},
		{"open start not first", List{{k("a"), k("b"), []uint64{1}}, {nil, k("e"), []uint64{1}}}},
		{"seqs not descending", List{{k("a"), k("b"), []uint64{1, 2}}}},
		{"no seqs", List{{k("a"), k("b"), nil}}},
		{"seq too large", List{{k("a"), k("b"), []uint64{1 << 60}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(cmp, tt.l.Encode(nil))
			require.ErrorIs(t, err, errMalformed)
		})
	}
	enc := good.Encode(nil)
	for n := 0; n < len(enc); n++ {
		_, err := Decode(cmp, enc[:n])
		require.ErrorIs(t, err, errMalformed, "cut at %d", n)
	}
	_, err = Decode(cmp, append(enc, 0))
	require.ErrorIs(t, err, errMalformed)
}

func FuzzDecode(f *testing.F) {
	f.Add(List{{k("a"), k("c"), []uint64{5, 3}}, {k("c"), nil, []uint64{1}}}.Encode(nil))
	f.Add(List{{nil, k("b"), []uint64{2}}}.Encode(nil))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := Decode(cmp, b)
		if err != nil {
			require.ErrorIs(t, err, errMalformed)
			return
		}
		checkList(t, l)
		again, err := Decode(cmp, l.Encode(nil))
		require.NoError(t, err)
		require.Equal(t, l.Encode(nil), again.Encode(nil))
	})
}
