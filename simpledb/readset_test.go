package simpledb

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stratadb/strata/internal/testseed"
	"github.com/stretchr/testify/require"
)

func TestReadSetSeal(t *testing.T) {
	for _, tc := range []struct {
		name   string
		keys   []string
		ranges []keyRange
		// after sealing
		wantKeys   []string
		wantRanges []keyRange
	}{
		{"nothing", nil, nil, nil, nil},
		{"keys sorted, duplicates gone", []string{"c", "a", "c", "b", "a"}, nil, []string{"a", "b", "c"}, nil},
		{"disjoint ranges sorted", nil, []keyRange{rng("m", "p"), rng("a", "c")}, nil, []keyRange{rng("a", "c"), rng("m", "p")}},
		{"overlapping ranges merged", nil, []keyRange{rng("b", "f"), rng("a", "c"), rng("e", "g")}, nil, []keyRange{rng("a", "g")}},
		{"adjoining ranges merged", nil, []keyRange{rng("c", "e"), rng("a", "c")}, nil, []keyRange{rng("a", "e")}},
		{"a range inside another", nil, []keyRange{rng("a", "z"), rng("c", "d")}, nil, []keyRange{rng("a", "z")}},
		{"duplicates, as every NewIterator adds one", nil, []keyRange{rng("p", "q"), rng("p", "q"), rng("p", "q")}, nil, []keyRange{rng("p", "q")}},
		{"open below first", nil, []keyRange{rng("m", "n"), rng("", "c")}, nil, []keyRange{rng("", "c"), rng("m", "n")}},
		{"open above swallows what follows", nil, []keyRange{rng("x", "y"), rng("m", ""), rng("n", "o")}, nil, []keyRange{rng("m", "")}},
		{"everything", nil, []keyRange{rng("b", "c"), rng("", ""), rng("x", "")}, nil, []keyRange{rng("", "")}},
		{"empty ranges go", nil, []keyRange{rng("d", "d"), rng("f", "e"), rng("a", "b")}, nil, []keyRange{rng("a", "b")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s readSet
			for _, k := range tc.keys {
				s.addKey([]byte(k))
			}
			for _, r := range tc.ranges {
				s.addRange(r.lo, r.hi)
			}
			s.seal(bytes.Compare)
			var keys []string
			for _, k := range s.keys {
				keys = append(keys, string(k))
			}
			require.Equal(t, tc.wantKeys, keys)
			require.Equal(t, len(tc.wantRanges), len(s.ranges), "%v", s.ranges)
			for i, r := range tc.wantRanges {
				require.Equal(t, r.lo, s.ranges[i].lo, "range %d's lower bound", i)
				require.Equal(t, r.hi, s.ranges[i].hi, "range %d's upper bound", i)
			}
		})
	}
}

// touchedByEach is the definition touchedBy's binary searches must agree
// with: a key written that was read or is in a range iterated, or a range
// deleted that holds a key read or overlaps a range iterated, each pair
// compared.
func touchedByEach(keysRead [][]byte, iterated []keyRange, keys [][]byte, ranges []keyRange) bool {
	contains := func(r keyRange, k []byte) bool {
		return (r.lo == nil || bytes.Compare(k, r.lo) >= 0) && (r.hi == nil || bytes.Compare(k, r.hi) < 0)
	}
	for _, k := range keys {
		for _, read := range keysRead {
			if bytes.Equal(k, read) {
				return true
			}
		}
		for _, r := range iterated {
			if contains(r, k) {
				return true
			}
		}
	}
	for _, w := range ranges {
		for _, read := range keysRead {
			if contains(w, read) {
				return true
			}
		}
		for _, r := range iterated {
			empty := r.lo != nil && r.hi != nil && bytes.Compare(r.lo, r.hi) >= 0
			if !empty && (w.hi == nil || r.lo == nil || bytes.Compare(r.lo, w.hi) < 0) &&
				(r.hi == nil || w.lo == nil || bytes.Compare(w.lo, r.hi) < 0) {
				return true
			}
		}
	}
	return false
}

// A sealed read set answers as comparing every pair would, over random
// reads, ranges (empty, open, nested, duplicated) and writes from a small
// key space, where they meet often.
func TestReadSetTouchedByMatchesEachPair(t *testing.T) {
	rng := rand.New(rand.NewPCG(testseed.Seed(t), 0))
	key := func() []byte { return fmt.Appendf(nil, "%02d", rng.IntN(40)) }
	bound := func() []byte {
		if rng.IntN(8) == 0 {
			return nil
		}
		return key()
	}
	rounds := 20_000
	if testseed.Long() {
		rounds = 1_000_000
	}
	touched := 0
	for range rounds {
		var s readSet
		var keysRead [][]byte
		var iterated []keyRange
		for range rng.IntN(6) {
			k := key()
			keysRead = append(keysRead, k)
			s.addKey(k)
		}
		for range rng.IntN(6) {
			r := keyRange{lo: bound(), hi: bound()}
			iterated = append(iterated, r)
			s.addRange(r.lo, r.hi)
		}
		s.seal(bytes.Compare)
		var keys [][]byte
		var ranges []keyRange
		for range rng.IntN(4) {
			keys = append(keys, key())
		}
		for range rng.IntN(3) {
			lo, hi := bound(), bound()
			if lo != nil && hi != nil && bytes.Compare(lo, hi) >= 0 {
				continue // a batch holds no empty range deletion
			}
			ranges = append(ranges, keyRange{lo: lo, hi: hi})
		}
		want := touchedByEach(keysRead, iterated, keys, ranges)
		require.Equal(t, want, s.touchedBy(bytes.Compare, keys, ranges),
			"read %q, iterated %q (sealed %q); written %q, deleted %q", keysRead, iterated, s.ranges, keys, ranges)
		if want {
			touched++
		}
	}
	require.Greater(t, touched, rounds/10, "too few of the cases meet to test much")
	require.Less(t, touched, rounds*9/10, "too few of the cases miss to test much")
}
