package sstables

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stratadb/strata/internal/itertest"
	"github.com/stratadb/strata/internal/testseed"
	"github.com/stretchr/testify/require"
)

// sliceIter is an EntryIterator over sorted entries, standing in for a
// memstore in merge tests.
type sliceIter struct {
	es  []entry
	pos int
}

func (s *sliceIter) First() bool            { s.pos = 0; return s.Valid() }
func (s *sliceIter) Last() bool             { s.pos = len(s.es) - 1; return s.Valid() }
func (s *sliceIter) SeekGE(key []byte) bool { s.pos = s.search(key); return s.Valid() }
func (s *sliceIter) SeekLT(key []byte) bool { s.pos = s.search(key) - 1; return s.Valid() }

// search returns the index of the first entry at or after key.
func (s *sliceIter) search(key []byte) int {
	i, _ := slices.BinarySearchFunc(s.es, key, func(e entry, k []byte) int { return bytes.Compare(e.key, k) })
	return i
}

func (s *sliceIter) Next() bool    { s.pos++; return s.Valid() }
func (s *sliceIter) Prev() bool    { s.pos--; return s.Valid() }
func (s *sliceIter) Valid() bool   { return s.pos >= 0 && s.pos < len(s.es) }
func (s *sliceIter) Key() []byte   { return s.es[s.pos].key }
func (s *sliceIter) Seq() uint64   { return s.es[s.pos].seq }
func (s *sliceIter) Kind() Kind    { return s.es[s.pos].kind }
func (s *sliceIter) Value() []byte { return s.es[s.pos].value }
func (s *sliceIter) Err() error    { return nil }
func (s *sliceIter) Close() error  { return nil }

// expectedMerge computes what merging sources must show, from first
// principles: every visible entry, ordered by key, seq descending and then
// source; then each option's filter.
func expectedMerge(sources [][]entry, o MergeOptions) []entry {
	type ranked struct {
		entry
		rank int
	}
	var all []ranked
	for rank, src := range sources {
		for _, e := range src {
			if o.Seq == 0 || e.seq <= o.Seq {
				all = append(all, ranked{e, rank})
			}
		}
	}
	slices.SortStableFunc(all, func(a, b ranked) int {
		if c := compareInternal(bytes.Compare, a.key, a.seq, b.key, b.seq); c != 0 {
			return c
		}
		return a.rank - b.rank
	})
	var out []entry
	for i, e := range all {
		first := i == 0 || !bytes.Equal(all[i-1].key, e.key)
		switch {
		case !o.AllVersions && !first:
		case o.DropTombstones && e.kind == KindDelete:
		default:
			out = append(out, e.entry)
		}
	}
	return out
}

func TestMergingIteratorMatchesModel(t *testing.T) {
	seed := testseed.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 2))
	dir := t.TempDir()
	rounds := 15
	if testseed.Long() {
		rounds = 200
	}
	for round := range rounds {
		nsrc := 1 + rng.IntN(5)
		sources := make([][]entry, nsrc)
		for i := range sources {
			sources[i] = randomEntries(rng, rng.IntN(300))
			// Collide sequence numbers sometimes, as in tables written
			// without them: the earlier source must win.
			if rng.IntN(2) == 0 {
				for j := range sources[i] {
					sources[i][j].seq %= 3
				}
				sources[i] = dedupe(sources[i])
			}
		}
		for _, o := range []MergeOptions{
			{}, {DropTombstones: true}, {AllVersions: true}, {AllVersions: true, DropTombstones: true},
			{Seq: 1 << 39}, {Seq: 1 << 39, DropTombstones: true},
		} {
			// Alternate table and in-memory sources.
			iters := make([]EntryIterator, nsrc)
			for i, src := range sources {
				if i%2 == 0 {
					iters[i] = &sliceIter{es: src}
					continue
				}
				path := filepath.Join(dir, fmt.Sprintf("r%d-s%d.sst", round, i))
				writeTable(t, path, &WriterOptions{BlockSize: 200}, src)
				r, err := Open(path, nil)
				require.NoError(t, err)
				defer r.Close()
				iters[i] = r.NewIterator(nil)
			}
			m := NewMergingIterator(&o, iters...)
			want := expectedMerge(sources, o)
			var got []entry
			for ok := m.First(); ok; ok = m.Next() {
				got = append(got, entry{bytes.Clone(m.Key()), m.Seq(), m.Kind(), bytes.Clone(m.Value())})
			}
			require.NoError(t, m.Err())
			msg := fmt.Sprintf("seed %d round %d options %+v", seed, round, o)
			require.Equal(t, len(want), len(got), msg)
			for i := range want {
				require.Equal(t, want[i].String(), got[i].String(), msg)
				require.Equal(t, string(want[i].value), string(got[i].value), msg)
			}

			// Backward, the same in reverse.
			got = got[:0]
			for ok := m.Last(); ok; ok = m.Prev() {
				got = append(got, entry{bytes.Clone(m.Key()), m.Seq(), m.Kind(), bytes.Clone(m.Value())})
			}
			require.NoError(t, m.Err())
			slices.Reverse(got)
			require.Equal(t, entryStrings(want), entryStrings(got), msg+" backward")

			// SeekGE, SeekLT, and walks that switch direction anywhere,
			// against a cursor over want.
			keys := make([][]byte, len(want))
			for i, e := range want {
				keys[i] = e.key
			}
			c := itertest.NewCursor(keys)
			for ok := c.Last(); ok; ok = c.Prev() { // where the merge is
			}
			itertest.Walk(t, rng, m, c, 300, func() []byte {
				return fmt.Appendf(nil, "key-%06d", rng.IntN(700))
			}, func(i int) {
				require.Equal(t, want[i].String(), entry{m.Key(), m.Seq(), m.Kind(), nil}.String(), msg)
				require.Equal(t, string(want[i].value), string(m.Value()), msg)
			}, msg)
			require.NoError(t, m.Err())
			require.NoError(t, m.Close())
		}
	}
}

// entryStrings describes entries, values included.
func entryStrings(es []entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = fmt.Sprintf("%v=%q", e, e.value)
	}
	return out
}

// dedupe drops entries whose (key, seq) repeats, keeping the first.
func dedupe(es []entry) []entry {
	sortEntries(es)
	return slices.CompactFunc(es, func(a, b entry) bool { return bytes.Equal(a.key, b.key) && a.seq == b.seq })
}

func TestMergingIteratorReportsChildErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.sst")
	rng := rand.New(rand.NewPCG(5, 5))
	es := randomEntries(rng, 500)
	writeTable(t, path, &WriterOptions{BlockSize: 256, Compression: NoCompression}, es)
	r, err := Open(path, &ReaderOptions{NoMmap: true})
	require.NoError(t, err)
	defer r.Close()
	// Close the table under the iterator: the merge must stop with the
	// child's error rather than end quietly.
	m := NewMergingIterator(nil, &sliceIter{es: es[:10]}, r.NewIterator(nil))
	require.True(t, m.First())
	require.NoError(t, r.Close())
	for m.Next() {
	}
	require.ErrorIs(t, m.Err(), ErrClosed)
}
