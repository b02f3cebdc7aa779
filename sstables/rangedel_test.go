package sstables

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/itertest"
	"github.com/stratadb/strata/internal/rangedel"
	"github.com/stratadb/strata/internal/testseed"
	"github.com/stretchr/testify/require"
)

func TestRangeDeletionsRoundTrip(t *testing.T) {
	for _, tc := range tableCases() {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.sst")
			w, err := NewWriter(path, &tc.wopts)
			require.NoError(t, err)
			require.NoError(t, w.AddRangeDel([]byte("d"), []byte("h"), 9))
			require.NoError(t, w.AddRangeDel([]byte("b"), []byte("f"), 7))
			require.NoError(t, w.AddRangeDel([]byte("x"), nil, 3))
			require.NoError(t, w.AddEntry([]byte("a"), 8, KindSet, []byte("a8")))
			require.NoError(t, w.AddEntry([]byte("c"), 8, KindSet, []byte("c8")))
			require.NoError(t, w.AddEntry([]byte("e"), 8, KindSet, []byte("e8")))
			require.NoError(t, w.AddEntry([]byte("z"), 5, KindSet, []byte("z5")))
			require.NoError(t, w.Close())
			m := w.Metadata()
			require.Equal(t, uint64(formatVersion), uint64(m.FormatVersion))
			require.Equal(t, uint64(4), m.RangeDeletions)

			r, err := Open(path, &tc.ropts)
			require.NoError(t, err)
			defer r.Close()
			require.Equal(t, m.RangeDeletions, r.Metadata().RangeDeletions)
			frags := r.RangeDeletions()
			require.Len(t, frags, 4)
			require.Equal(t, []uint64{9, 7}, frags[1].Seqs)
			require.Empty(t, frags[3].End, "an open end")

			tests := []struct {
				key   string
				seq   uint64
				kind  Kind
				found bool
				value string
			}{
				{"a", MaxSeq, KindSet, true, "a8"},         // nothing covers it
				{"c", MaxSeq, KindSet, true, "c8"},         // covered at 7 < 8
				{"e", MaxSeq, KindDelete, true, ""},        // covered at 9 > 8
				{"e", 8, KindSet, true, "e8"},              // the tombstone at 9 is not visible
				{"g", MaxSeq, KindDelete, true, ""},        // no entry, a tombstone
				{"g", 8, 0, false, ""},                     // not visible at 8
				{"z", MaxSeq, KindSet, true, "z5"},         // covered at 3 < 5
				{"zz", MaxSeq, KindDelete, true, ""},       // open end
				{"w", MaxSeq, 0, false, ""},                // a gap
				{"ab", MaxSeq, 0, false, ""},               // before every tombstone
				{"f", MaxSeq, KindDelete, true, ""},        // [f, h) at 9
				{"h", MaxSeq, 0, false, ""},                // end exclusive
				{"b", 7, KindDelete, true, ""},             // start inclusive
				{"b", 6, 0, false, ""},                     // and not yet
				{"d", MaxSeq, KindDelete, true, ""},        // a fragment's start
				{"x", MaxSeq, KindDelete, true, ""},        // the open fragment's start
				{"xa", 2, 0, false, ""},                    // before it
				{"e", 9, KindDelete, true, ""},             // exactly at the tombstone's seq
				{"c", 7, KindDelete, true, ""},             // c8 is not visible: the tombstone is
				{"zzzzzzzz", MaxSeq, KindDelete, true, ""}, // far along the open end
			}
			for _, tt := range tests {
				var got []byte
				kind, found, err := r.Find([]byte(tt.key), tt.seq, func(v []byte) { got = bytes.Clone(v) })
				require.NoError(t, err)
				require.Equal(t, tt.found, found, "%s@%d", tt.key, tt.seq)
				if found {
					require.Equal(t, tt.kind, kind, "%s@%d", tt.key, tt.seq)
					require.Equal(t, tt.value, string(got), "%s@%d", tt.key, tt.seq)
				}
			}
			_, err = r.Get([]byte("e"))
			require.ErrorIs(t, err, ErrNotFound)
		})
	}
}

func TestWriterRejectsBadRangeDel(t *testing.T) {
	w, err := NewWriter(filepath.Join(t.TempDir(), "t.sst"), nil)
	require.NoError(t, err)
	defer w.Abort()
	require.ErrorIs(t, w.AddRangeDel([]byte("b"), []byte("b"), 1), ErrBadRangeDel)
	require.ErrorIs(t, w.AddRangeDel([]byte("c"), []byte("b"), 1), ErrBadRangeDel)
	require.ErrorIs(t, w.AddRangeDel([]byte("a"), []byte("b"), MaxSeq+1), ErrBadRangeDel)
	require.ErrorIs(t, w.AddRangeDel(make([]byte, base.MaxKeySize+1), nil, 1), ErrKeyTooLarge)
	require.NoError(t, w.AddRangeDel(nil, nil, 1), "the whole key space")
}

func TestTableOfRangeDeletionsOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.sst")
	w, err := NewWriter(path, &WriterOptions{BloomBitsPerKey: 10})
	require.NoError(t, err)
	require.NoError(t, w.AddRangeDel([]byte("b"), []byte("d"), 4))
	require.NoError(t, w.Close())
	r, err := Open(path, nil)
	require.NoError(t, err)
	defer r.Close()
	kind, found, err := r.Find([]byte("c"), MaxSeq, nil)
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, KindDelete, kind)
	it := r.NewIterator(nil)
	require.False(t, it.First())
	require.NoError(t, it.Close())
}

// TestReadsFormatV1 opens a table that a build before range deletions
// wrote (format version 1, testdata/v1.sst: key00..key19 at seqs 100..81,
// every fifth a tombstone, 64-byte blocks, a bloom filter).
func TestReadsFormatV1(t *testing.T) {
	r, err := Open("testdata/v1.sst", nil)
	require.NoError(t, err)
	defer r.Close()
	require.Equal(t, uint32(formatVersionV1), r.Metadata().FormatVersion)
	require.Empty(t, r.RangeDeletions())
	n := 0
	it := r.NewIterator(nil)
	for k, v := range it.All() {
		require.Equal(t, fmt.Sprintf("key%02d", n), string(k))
		require.Equal(t, uint64(100-n), it.Seq())
		if n%5 == 4 {
			require.Equal(t, KindDelete, it.Kind())
		} else {
			require.Equal(t, fmt.Sprintf("value%02d", n), string(v))
		}
		n++
	}
	require.NoError(t, it.Err())
	require.NoError(t, it.Close())
	require.Equal(t, 20, n)
	v, err := r.Get([]byte("key07"))
	require.NoError(t, err)
	require.Equal(t, "value07", string(v))
	_, err = r.Get([]byte("key09"))
	require.ErrorIs(t, err, ErrNotFound)
}

func TestRangeDelBlockCorruption(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.sst")
	w, err := NewWriter(path, nil)
	require.NoError(t, err)
	require.NoError(t, w.AddEntry([]byte("a"), 1, KindSet, []byte("v")))
	require.NoError(t, w.AddRangeDel([]byte("b"), []byte("d"), 4))
	require.NoError(t, w.Close())
	m := w.Metadata()
	good, err := os.ReadFile(path)
	require.NoError(t, err)
	// Flip each byte of the block's record in turn: every one is caught.
	for off := m.rangeDelOffset; off < m.rangeDelOffset+m.RangeDelSize; off++ {
		bad := bytes.Clone(good)
		bad[off] ^= 0x40
		require.NoError(t, os.WriteFile(path, bad, 0o644))
		_, err := Open(path, nil)
		require.ErrorIs(t, err, ErrCorruption, "byte %d", off)
		var ce *CorruptionError
		require.ErrorAs(t, err, &ce)
		require.Equal(t, path, ce.Path)
		require.Equal(t, int64(m.rangeDelOffset), ce.Offset, "byte %d: %v", off, err)
	}
}

func TestRangeDelBlockMalformedButChecksummed(t *testing.T) {
	// A block whose record is intact but whose fragments overlap: what a
	// buggy writer could leave. The reader refuses it as ErrBadRangeDels.
	path := filepath.Join(t.TempDir(), "t.sst")
	w, err := NewWriter(path, nil)
	require.NoError(t, err)
	require.NoError(t, w.AddRangeDel([]byte("b"), []byte("d"), 4))
	w.rangeDels = nil
	bad := rangedel.List{{Start: []byte("a"), End: []byte("c"), Seqs: []uint64{1}}, {Start: []byte("b"), End: []byte("d"), Seqs: []uint64{1}}}
	require.NoError(t, w.writeRawRangeDels(bad.Encode(nil), uint64(len(bad))))
	require.NoError(t, w.Close())
	_, err = Open(path, nil)
	require.ErrorIs(t, err, ErrBadRangeDels)
	require.ErrorIs(t, err, ErrCorruption)
	require.Contains(t, err.Error(), path)
}

func TestMergingIteratorHidesRangeDeletions(t *testing.T) {
	rng := rand.New(rand.NewPCG(testseed.Seed(t), 0))
	for round := 0; round < 50; round++ {
		es := randomEntries(rng, 200)
		var tombs []RangeTombstone
		for range rng.IntN(6) {
			a, b := fmt.Appendf(nil, "key-%06d", rng.IntN(400)), fmt.Appendf(nil, "key-%06d", rng.IntN(400))
			if bytes.Compare(a, b) > 0 {
				a, b = b, a
			}
			if bytes.Equal(a, b) {
				b = nil
			}
			tombs = append(tombs, RangeTombstone{Start: a, End: b, Seq: rng.Uint64N(1 << 40)})
		}
		seq := rng.Uint64N(1 << 40)
		// The model: each key's newest entry at or below seq, unless a
		// tombstone or a visible range tombstone above it hides it.
		l := rangedel.Build(bytes.Compare, tombs)
		var want []string
		for i, e := range es {
			if e.seq > seq || i > 0 && bytes.Equal(es[i-1].key, e.key) && es[i-1].seq <= seq {
				continue
			}
			if e.kind == KindDelete || l.SeqAt(bytes.Compare, e.key, seq) > e.seq {
				continue
			}
			want = append(want, string(e.key))
		}
		path := filepath.Join(t.TempDir(), fmt.Sprint(round))
		writeTable(t, path, &WriterOptions{BlockSize: 256}, es)
		r, err := Open(path, nil)
		require.NoError(t, err)
		m := NewMergingIterator(&MergeOptions{Seq: seq, DropTombstones: true, RangeDeletions: [][]RangeTombstone{tombs}}, r.NewIterator(nil))
		var got []string
		for k := range m.All() {
			got = append(got, string(k))
		}
		require.Equal(t, want, got, "forward")
		got = got[:0]
		for k := range m.Backward() {
			got = append([]string{string(k)}, got...)
		}
		require.Equal(t, want, got, "backward")
		require.NoError(t, m.Close())
		require.NoError(t, r.Close())
	}
}

// writeRawRangeDels makes b, as it is, the table's range-deletion block,
// for tests of a malformed one.
func (w *Writer) writeRawRangeDels(b []byte, n uint64) error {
	h, err := w.writeBlock(b)
	if err != nil {
		return err
	}
	w.meta.rangeDelOffset, w.meta.RangeDelSize, w.meta.RangeDeletions = h.Offset, h.Length, n
	return nil
}

// TestNewerFormatIsRefused: a reader refuses a table of a format newer
// than its own, as a version 1 reader refuses version 2 tables, rather
// than read it without what the newer format added.
func TestNewerFormatIsRefused(t *testing.T) {
	f := footer{index: BlockHandle{100, 20}, props: BlockHandle{120, 9}, version: formatVersion + 1}
	_, err := decodeFooter(f.encode(), 200)
	require.ErrorContains(t, err, "unknown format version")
	for _, v := range []uint32{formatVersionV1, formatVersion} {
		f.version = v
		_, err := decodeFooter(f.encode(), 200)
		require.NoError(t, err, "version %d", v)
	}
	m := Metadata{FormatVersion: formatVersionV1, RangeDelSize: 10, rangeDelOffset: 8, RangeDeletions: 1}
	_, err = decodeMetadata(m.encode())
	require.ErrorContains(t, err, "range deletions in a version 1 table")
}

// TestMergingIteratorSkipsOlderIterators merges tables layered as an LSM
// tree's levels (each newer than the next, its range tombstones newer than
// everything older), so that the merge moves older tables past a tombstone
// with a seek, and checks random walks that switch direction against the
// model of what must show.
func TestMergingIteratorSkipsOlderIterators(t *testing.T) {
	seed := testseed.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 0))
	key := func() []byte { return fmt.Appendf(nil, "key-%04d", rng.IntN(300)) }
	for round := 0; round < 30; round++ {
		const layers = 4
		seq := uint64(1)
		type version struct {
			seq  uint64
			kind Kind
		}
		latest := map[string]version{} // the model: each key's newest entry
		var tombs []RangeTombstone     // every range tombstone, for the model
		perLayer := make([][]entry, layers)
		layerTombs := make([][]RangeTombstone, layers)
		// Oldest layer first, so that newer layers get higher seqs.
		for layer := layers - 1; layer >= 0; layer-- {
			seen := map[string]bool{}
			for range 150 {
				k := key()
				if seen[string(k)] {
					continue
				}
				seen[string(k)] = true
				kind := KindSet
				if rng.IntN(8) == 0 {
					kind = KindDelete
				}
				perLayer[layer] = append(perLayer[layer], entry{key: k, seq: seq, kind: kind, value: fmt.Appendf(nil, "v%d", seq)})
				latest[string(k)] = version{seq, kind}
				seq++
			}
			for range rng.IntN(4) {
				lo, hi := key(), key()
				if bytes.Compare(lo, hi) > 0 {
					lo, hi = hi, lo
				}
				if bytes.Equal(lo, hi) || rng.IntN(10) == 0 {
					hi = nil
				}
				if rng.IntN(10) == 0 {
					lo = nil
				}
				rt := RangeTombstone{Start: lo, End: hi, Seq: seq}
				layerTombs[layer] = append(layerTombs[layer], rt)
				tombs = append(tombs, rt)
				seq++
			}
			sortEntries(perLayer[layer])
		}
		l := rangedel.Build(bytes.Compare, tombs)
		var want [][]byte
		var values []string
		for k, v := range latest {
			if v.kind == KindSet && l.SeqAt(bytes.Compare, []byte(k), MaxSeq) < v.seq {
				want = append(want, []byte(k))
			}
		}
		slices.SortFunc(want, bytes.Compare)
		for _, k := range want {
			values = append(values, fmt.Sprintf("v%d", latest[string(k)].seq))
		}

		var iters []EntryIterator
		var readers []*Reader
		for layer := range layers {
			path := filepath.Join(t.TempDir(), fmt.Sprint(layer))
			writeTable(t, path, &WriterOptions{BlockSize: 128}, perLayer[layer])
			r, err := Open(path, nil)
			require.NoError(t, err)
			readers = append(readers, r)
			iters = append(iters, r.NewIterator(nil))
		}
		m := NewMergingIterator(&MergeOptions{DropTombstones: true, RangeDeletions: layerTombs}, iters...)
		var got [][]byte
		for k := range m.All() {
			got = append(got, bytes.Clone(k))
		}
		require.Equal(t, want, got, "seed %d round %d: forward", seed, round)
		got = got[:0]
		for k := range m.Backward() {
			got = append([][]byte{bytes.Clone(k)}, got...)
		}
		require.Equal(t, want, got, "seed %d round %d: backward", seed, round)
		require.NoError(t, m.Close())
		iters = iters[:0]
		for _, r := range readers {
			iters = append(iters, r.NewIterator(nil))
		}
		m = NewMergingIterator(&MergeOptions{DropTombstones: true, RangeDeletions: layerTombs}, iters...)
		itertest.Walk(t, rng, m, itertest.NewCursor(want), 100, key, func(i int) {
			require.Equal(t, values[i], string(m.Value()), "seed %d round %d: value of %s", seed, round, want[i])
		}, fmt.Sprintf("seed %d round %d: walk", seed, round))
		require.NoError(t, m.Close())
		for _, r := range readers {
			require.NoError(t, r.Close())
		}
	}
}
