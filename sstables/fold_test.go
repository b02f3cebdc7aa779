package sstables

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// concat folds by concatenation, with a separator: associative, not
// commutative, so a fold in the wrong order or over the wrong versions
// shows.
func concat(_, older, newer []byte) ([]byte, error) {
	return slices.Concat(older, []byte("+"), newer), nil
}

// foldSources builds merge sources in an LSM tree's order from data: each
// op byte picks a source, a key, a kind and whether it is a range
// deletion. Source i's sequence numbers all lie above source i+1's, so
// that every range tombstone is newer than what it covers in older
// sources, as the merge assumes.
func foldSources(data []byte) ([][]entry, [][]RangeTombstone) {
	const nsrc = 3
	sources := make([][]entry, nsrc)
	tombs := make([][]RangeTombstone, nsrc)
	for i, b := range data {
		src := int(b>>6) % nsrc
		seq := uint64(nsrc-src)<<20 + uint64(i) + 1
		key := []byte{'a' + b&3}
		switch kind := (b >> 2) & 7; {
		case kind == 0:
			end := []byte{'a' + (b>>5)&3 + 1}
			if bytes.Compare(key, end) < 0 {
				tombs[src] = append(tombs[src], RangeTombstone{Start: key, End: end, Seq: seq})
			}
		case kind == 1:
			sources[src] = append(sources[src], entry{key, seq, KindDelete, nil})
		case kind <= 3:
			sources[src] = append(sources[src], entry{key, seq, KindSet, fmt.Appendf(nil, "s%d", i)})
		default:
			sources[src] = append(sources[src], entry{key, seq, KindMerge, fmt.Appendf(nil, "m%d", i)})
		}
	}
	for _, s := range sources {
		sortEntries(s)
	}
	return sources, tombs
}

// expectedFold computes what a newest-only merge with Fold shows at seq,
// from first principles: per key, the visible versions newest first, cut
// at the first value, tombstone or covered entry, folded oldest first; a
// value, unless the versions ran out with no range deletion beneath.
func expectedFold(sources [][]entry, tombs [][]RangeTombstone, seq uint64, dropTombstones bool) []entry {
	var all []entry
	for _, s := range sources {
		for _, e := range s {
			if e.seq <= seq {
				all = append(all, e)
			}
		}
	}
	sortEntries(all)
	covered := func(e entry) bool {
		for _, ts := range tombs {
			for _, t := range ts {
				if t.Seq <= seq && t.Seq > e.seq && bytes.Compare(t.Start, e.key) <= 0 && bytes.Compare(e.key, t.End) < 0 {
					return true
				}
			}
		}
		return false
	}
	var out []entry
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && bytes.Equal(all[j].key, all[i].key) {
			j++
		}
		versions := all[i:j]
		i = j
		newest := versions[0]
		if covered(newest) {
			continue
		}
		if newest.kind != KindMerge {
			if newest.kind != KindDelete || !dropTombstones {
				out = append(out, newest)
			}
			continue
		}
		ops, kind := [][]byte{newest.value}, KindMerge
		for _, e := range versions[1:] {
			if covered(e) || e.kind == KindDelete {
				kind = KindSet
				break
			}
			ops = append(ops, e.value)
			if e.kind == KindSet {
				kind = KindSet
				break
			}
		}
		if kind == KindMerge && covered(entry{key: newest.key}) {
			// A range deletion under every operand: nothing older is
			// left to fold onto.
			kind = KindSet
		}
		slices.Reverse(ops)
		v := ops[0]
		for _, op := range ops[1:] {
			v, _ = concat(nil, v, op)
		}
		out = append(out, entry{newest.key, newest.seq, kind, v})
	}
	return out
}

// checkFold compares a folding merge over sources, forward, backward and
// by seeks, with expectedFold.
func checkFold(t *testing.T, sources [][]entry, tombs [][]RangeTombstone, seq uint64, dropTombstones bool) {
	iters := make([]EntryIterator, len(sources))
	for i, s := range sources {
		iters[i] = &sliceIter{es: s}
	}
	m := NewMergingIterator(&MergeOptions{Seq: seq, DropTombstones: dropTombstones, RangeDeletions: tombs, Fold: concat}, iters...)
	defer m.Close()
	want := entryStrings(expectedFold(sources, tombs, seq, dropTombstones))
	got := []string{}
	for ok := m.First(); ok; ok = m.Next() {
		got = append(got, entryStrings([]entry{{m.Key(), m.Seq(), m.Kind(), m.Value()}})...)
	}
	require.NoError(t, m.Err())
	require.Equal(t, want, got, "forward")
	got = []string{}
	for ok := m.Last(); ok; ok = m.Prev() {
		got = append(got, entryStrings([]entry{{m.Key(), m.Seq(), m.Kind(), m.Value()}})...)
	}
	require.NoError(t, m.Err())
	slices.Reverse(got)
	require.Equal(t, want, got, "backward")
	for i, w := range want {
		k := []byte(w[1:2])
		require.True(t, m.SeekGE(k))
		require.Equal(t, want[i], entryStrings([]entry{{m.Key(), m.Seq(), m.Kind(), m.Value()}})[0], "SeekGE")
		require.True(t, m.SeekLT(append(k, 0)))
		require.Equal(t, want[i], entryStrings([]entry{{m.Key(), m.Seq(), m.Kind(), m.Value()}})[0], "SeekLT")
	}
}

func TestMergingIteratorFolds(t *testing.T) {
	set := func(k string, seq uint64, v string) entry { return entry{[]byte(k), seq, KindSet, []byte(v)} }
	merge := func(k string, seq uint64, v string) entry { return entry{[]byte(k), seq, KindMerge, []byte(v)} }
	del := func(k string, seq uint64) entry { return entry{[]byte(k), seq, KindDelete, nil} }
	for _, tt := range []struct {
		name    string
		sources [][]entry
		tombs   [][]RangeTombstone
		seq     uint64
		want    []string
	}{
		{"operands onto a value", [][]entry{{merge("a", 30, "3")}, {merge("a", 20, "2"), set("a", 10, "1")}}, nil, 0,
			[]string{`"a"@30:set="1+2+3"`}},
		{"operands alone stay an operand", [][]entry{{merge("a", 30, "3")}, {merge("a", 20, "2")}}, nil, 0,
			[]string{`"a"@30:merge="2+3"`}},
		{"a deletion ends the fold", [][]entry{{merge("a", 30, "3"), del("a", 20)}, {set("a", 10, "1")}}, nil, 0,
			[]string{`"a"@30:set="3"`}},
		{"a range deletion ends the fold", [][]entry{{merge("a", 30, "3")}, {set("a", 10, "1")}},
			[][]RangeTombstone{{{Start: []byte("a"), End: []byte("b"), Seq: 25}}}, 0, []string{`"a"@30:set="3"`}},
		{"a range deletion hides the operand", [][]entry{{merge("a", 30, "3")}, {set("b", 10, "1")}},
			[][]RangeTombstone{{{Start: []byte("a"), End: []byte("b"), Seq: 35}}}, 0, []string{`"b"@10:set="1"`}},
		{"a snapshot below the newest operand", [][]entry{{merge("a", 30, "3"), merge("a", 20, "2"), set("a", 10, "1")}}, nil, 25,
			[]string{`"a"@20:set="1+2"`}},
		{"a value above operands hides them", [][]entry{{set("a", 30, "3"), merge("a", 20, "2")}}, nil, 0,
			[]string{`"a"@30:set="3"`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, s := range tt.sources {
				sortEntries(s)
			}
			seq := tt.seq
			if seq == 0 {
				seq = MaxSeq
			}
			want := entryStrings(expectedFold(tt.sources, tt.tombs, seq, true))
			require.Equal(t, tt.want, want, "the model")
			checkFold(t, tt.sources, tt.tombs, seq, true)
		})
	}
}

func TestMergingIteratorFoldError(t *testing.T) {
	boom := errors.New("boom")
	for _, backward := range []bool{false, true} {
		m := NewMergingIterator(&MergeOptions{Fold: func(_, _, _ []byte) ([]byte, error) { return nil, boom }},
			&sliceIter{es: []entry{{[]byte("a"), 2, KindMerge, []byte("x")}, {[]byte("a"), 1, KindSet, []byte("y")}}})
		ok := m.First()
		if backward {
			ok = m.Last()
		}
		require.False(t, ok)
		require.ErrorIs(t, m.Err(), boom)
	}
}

// FuzzMergeFold checks the merge's folding of merge operands against
// expectedFold, over sources, range deletions and read sequence numbers
// the input picks.
func FuzzMergeFold(f *testing.F) {
	f.Add([]byte{0x10, 0x50, 0x90, 0x14, 0x91}, uint64(0), false)
	f.Add([]byte{0x10, 0x44, 0x11, 0x80, 0x15, 0x51, 0x92}, uint64(3<<20+4), true)
	f.Fuzz(func(t *testing.T, data []byte, seq uint64, dropTombstones bool) {
		if len(data) > 64 {
			data = data[:64]
		}
		if seq == 0 || seq > MaxSeq {
			seq = MaxSeq
		}
		sources, tombs := foldSources(data)
		checkFold(t, sources, tombs, seq, dropTombstones)
	})
}
