package sstables

import (
	"bytes"
	"errors"
	"iter"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/rangedel"
	"github.com/stretchr/testify/require"
)

// fuzzBlock builds a small data block to seed the decoders.
func fuzzBlock(index bool) []byte {
	b := blockBuilder{restartInterval: 2}
	for i, k := range []string{"apple", "apricot", "banana", "blueberry", "cherry"} {
		trailer := uint64(i)<<8 | uint64(KindSet)
		value := []byte(k + "-value")
		if index {
			trailer = indexTrailer(uint64(i))
			value = BlockHandle{Offset: uint64(100 * i), Length: 50}.append(nil)
		}
		b.add([]byte(k), trailer, value)
	}
	return b.finish()
}

// shortKeysBlock is a data block whose keys are short enough for entry
// hints: versions of a key, and keys told apart only by a trailing zero.
func shortKeysBlock() []byte {
	b := blockBuilder{restartInterval: 4}
	for i, k := range []string{"key-0", "key-0", "key-0\x00", "key-1", "key-10", "key-2", "key-2\x00\x00", "key-3"} {
		b.add([]byte(k), uint64(20-i)<<8|uint64(KindSet), []byte(k+"-value, long enough for entry hints of its own"))
	}
	return b.finish()
}

// checkBlockDecoder runs every blockIter operation over arbitrary bytes,
// both ways: it must return entries or an error, never panic or loop.
func checkBlockDecoder(t *testing.T, data []byte, index bool, target []byte) {
	var it blockIter
	if err := it.init(bytes.Compare, data, index); err != nil {
		return
	}
	n := 0
	for ok := it.first(); ok; ok = it.nextEntry() {
		if n++; n > len(data) {
			t.Fatal("more entries than bytes")
		}
		if index {
			decodeHandle(it.value, 1<<20)
		}
	}
	n = 0
	for ok := it.last(); ok; ok = it.prevEntry() {
		if n++; n > len(data) {
			t.Fatal("more entries than bytes, backward")
		}
	}
	it.seekGE(target, base.MaxSeq)
	it.seekGE(target, 0)
	it.seekLT(target, base.MaxSeq)
	it.seekLT(target, 0)
	// An index block held by a Reader, and a data block a point read
	// cached, are searched with restart hints, built only over restart
	// keys in order: they land where the block's own search does, damage
	// and all.
	var hinted blockIter
	if hinted.init(bytes.Compare, data, index) != nil {
		t.Fatal("a block that initialized once fails a second time")
	}
	hinted.buildHints()
	checkHintedSeeks(t, &it, &hinted, target)
	if index {
		checkBlockSlots(t, &it, target)
	}
	// A cached data block of short keys is searched with entry hints,
	// built only over a block that decodes whole and in order.
	if index || hinted.init(bytes.Compare, data, index) != nil || !hinted.buildEntryHints() {
		return
	}
	checkHintedSeeks(t, &it, &hinted, target)
}

// checkBlockSlots checks that the index entry a Reader's block slots name
// for target, where their numbers can tell, is the one the index's own
// search lands on, at any sequence number.
func checkBlockSlots(t *testing.T, index *blockIter, target []byte) {
	slots := newBlockSlots(index)
	entry, known := slots.entry(target)
	if !known {
		return
	}
	for _, seq := range []uint64{base.MaxSeq, 1, 0} {
		var it blockIter
		it.over(index)
		want := len(slots.keys) // past the last
		if it.seekGE(target, seq) {
			at := it.offset
			want = 0
			for ok := it.first(); ok && it.offset != at; ok = it.nextEntry() {
				want++
			}
		} else if it.err != nil {
			t.Fatalf("slots over an index whose search of %q fails: %v", target, it.err)
		}
		if want != entry {
			t.Fatalf("slots name entry %d for %q@%d, the index's search entry %d", entry, target, seq, want)
		}
	}
}

// checkHintedSeeks checks that seeks of target in hinted land where the
// block's own search, in it, does.
func checkHintedSeeks(t *testing.T, it, hinted *blockIter, target []byte) {
	for _, seq := range []uint64{base.MaxSeq, 1, 0} {
		want, got := it.seekGE(target, seq), hinted.seekGE(target, seq)
		if want != got || (it.err == nil) != (hinted.err == nil) || want && (!bytes.Equal(it.key, hinted.key) || it.seq() != hinted.seq() || !bytes.Equal(it.value, hinted.value)) {
			t.Fatalf("seek of %q@%d: hinted %v at %q (%v), the block's %v at %q (%v)", target, seq, got, hinted.key, hinted.err, want, it.key, it.err)
		}
	}
}

// FuzzDataBlock fuzzes the data block decoder.
func FuzzDataBlock(f *testing.F) {
	f.Add(fuzzBlock(false), []byte("banana"))
	f.Add(shortKeysBlock(), []byte("key-0\x00"))
	f.Fuzz(func(t *testing.T, data, target []byte) { checkBlockDecoder(t, data, false, target) })
}

// FuzzIndexBlock fuzzes the index block decoder and block handles.
func FuzzIndexBlock(f *testing.F) {
	f.Add(fuzzBlock(true), []byte("b"))
	f.Fuzz(func(t *testing.T, data, target []byte) { checkBlockDecoder(t, data, true, target) })
}

// FuzzFooter fuzzes the footer decoder: a footer that decodes must encode
// back to the same bytes.
func FuzzFooter(f *testing.F) {
	f.Add(footer{index: BlockHandle{10, 20}, filter: BlockHandle{30, 5}, props: BlockHandle{35, 7}, version: formatVersion}.encode(), uint64(100))
	f.Fuzz(func(t *testing.T, data []byte, at uint64) {
		ft, err := decodeFooter(data, at)
		if err != nil {
			return
		}
		if !bytes.Equal(ft.encode(), data) {
			t.Fatal("footer does not round-trip")
		}
	})
}

// FuzzProperties fuzzes the properties decoder.
func FuzzProperties(f *testing.F) {
	m := Metadata{FormatVersion: formatVersion, Records: 3, MinKey: []byte("a"), MaxKey: []byte("c"), Comparator: "strata.bytewise"}
	f.Add(m.encode())
	m.rangeDelOffset, m.RangeDelSize, m.RangeDeletions = 100, 20, 2
	f.Add(m.encode())
	m.ID = 0x1234_5678_9abc_def0
	f.Add(m.encode())
	m.BlobRefs = []BlobRef{{FileNum: 5, Values: 10, ValueBytes: 40960}, {FileNum: 9, Values: 1, ValueBytes: 1024}}
	f.Add(m.encode())
	f.Fuzz(func(t *testing.T, data []byte) {
		if m, err := decodeMetadata(data); err == nil {
			if _, err := decodeMetadata(m.encode()); err != nil {
				t.Fatalf("re-encoded properties do not decode: %v", err)
			}
		}
	})
}

// FuzzRangeDelBlock fuzzes the range-deletion block's decoder: a block
// that decodes is sorted and disjoint, and encodes back to a block that
// decodes the same.
func FuzzRangeDelBlock(f *testing.F) {
	f.Add(rangedel.List{{Start: []byte("a"), End: []byte("c"), Seqs: []uint64{5, 3}}, {Start: []byte("c"), Seqs: []uint64{1}}}.Encode(nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := rangedel.Decode(bytes.Compare, data)
		if err != nil {
			return
		}
		for i := 1; i < len(l); i++ {
			if len(l[i-1].End) == 0 || bytes.Compare(l[i-1].End, l[i].Start) > 0 {
				t.Fatalf("fragments %d and %d overlap", i-1, i)
			}
		}
		again, err := rangedel.Decode(bytes.Compare, l.Encode(nil))
		require.NoError(t, err)
		require.Equal(t, l.Encode(nil), again.Encode(nil))
	})
}

// FuzzOpen opens arbitrary bytes as a table, mapped and not, and reads it
// every way. It must never panic, and every error must report corruption
// (or a comparator mismatch, which is no damage).
func FuzzOpen(f *testing.F) {
	es := randomEntries(rand.New(rand.NewPCG(14, 14)), 40)
	for _, opts := range []WriterOptions{
		{Compression: NoCompression, BlockSize: 128, BloomBitsPerKey: 10},
		{Compression: SnappyCompression, BlockSize: 128, RestartInterval: 2},
		{},
	} {
		path := filepath.Join(f.TempDir(), "seed.sst")
		writeTable(f, path, &opts, es)
		data, err := os.ReadFile(path)
		require.NoError(f, err)
		f.Add(data)
	}
	// A table with range deletions.
	path := filepath.Join(f.TempDir(), "rangedel.sst")
	w, err := NewWriter(path, nil)
	require.NoError(f, err)
	require.NoError(f, w.AddRangeDel(es[1].key, es[5].key, 1<<41))
	require.NoError(f, w.AddRangeDel(es[3].key, nil, 7))
	for _, e := range es[:10] {
		require.NoError(f, w.AddEntry(e.key, e.seq, e.kind, e.value))
	}
	require.NoError(f, w.Close())
	data, err := os.ReadFile(path)
	require.NoError(f, err)
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "t.sst")
		require.NoError(t, os.WriteFile(path, data, 0o644))
		for _, noMmap := range []bool{false, true} {
			readAnything(t, path, &ReaderOptions{NoMmap: noMmap}, es[0].key, es[len(es)/2].key)
		}
	})
}

// readAnything opens a table that may be damaged, scans it both ways (a
// table that reads without an error reads the same both ways), then reads
// the given keys and the first keys scanned with Get, SeekGE and SeekLT,
// and with scans bounded by each, both ways.
func readAnything(t *testing.T, path string, opts *ReaderOptions, keys ...[]byte) {
	check := func(err error) {
		t.Helper()
		if err != nil && !errors.Is(err, ErrCorruption) && !errors.Is(err, ErrComparatorMismatch) && !errors.Is(err, ErrNotFound) {
			t.Fatalf("error that is not corruption: %v", err)
		}
	}
	r, err := Open(path, opts)
	if check(err); err != nil {
		return
	}
	defer r.Close()
	type seen struct {
		key, value string
		seq        uint64
		kind       Kind
	}
	scan := func(it *Iterator, entries iter.Seq2[[]byte, []byte]) []seen {
		var out []seen
		for k, v := range entries {
			out = append(out, seen{string(k), string(v), it.Seq(), it.Kind()})
		}
		check(it.Err())
		return out
	}
	it, back := r.NewIterator(nil), r.NewIterator(nil)
	forward, backward := scan(it, it.All()), scan(back, back.Backward())
	slices.Reverse(backward)
	if it.Err() == nil && back.Err() == nil && !slices.Equal(forward, backward) {
		t.Fatalf("the table reads %v forward, %v backward", forward, backward)
	}
	for _, s := range forward {
		if len(keys) < 6 {
			keys = append(keys, []byte(s.key))
		}
	}
	for _, k := range keys {
		_, err := r.Get(k)
		check(err)
		it.SeekGE(k)
		check(it.Err())
		it.SeekLT(k)
		check(it.Err())
		for _, o := range []IterOptions{{UpperBound: k}, {LowerBound: k}} {
			bounded := r.NewIterator(&o)
			for range bounded.All() {
			}
			check(bounded.Err())
			bounded = r.NewIterator(&o)
			for range bounded.Backward() {
			}
			check(bounded.Err())
		}
	}
}

// FuzzBlobFile opens arbitrary bytes as a blob file, verifies it and reads
// a value at an arbitrary handle: an error or a value of the handle's
// length, never a panic.
func FuzzBlobFile(f *testing.F) {
	path := filepath.Join(f.TempDir(), "000001.blob")
	w, err := NewBlobWriter(path, 1, &WriterOptions{ID: 42})
	require.NoError(f, err)
	var handles []BlobHandle
	for _, v := range []string{"", "small", strings.Repeat("compressible ", 100)} {
		h, err := w.Add([]byte(v))
		require.NoError(f, err)
		handles = append(handles, h)
	}
	require.NoError(f, w.Close())
	data, err := os.ReadFile(path)
	require.NoError(f, err)
	for _, h := range handles {
		f.Add(data, AppendBlobHandle(nil, h))
	}
	f.Add(data[:len(data)/2], AppendBlobHandle(nil, handles[1]))
	f.Fuzz(func(t *testing.T, data, handle []byte) {
		path := filepath.Join(t.TempDir(), "000001.blob")
		require.NoError(t, os.WriteFile(path, data, 0o644))
		r, err := OpenBlob(path, &ReaderOptions{NoMmap: true})
		if err != nil {
			return
		}
		defer r.Close()
		r.Verify()
		h, err := DecodeBlobHandle(handle)
		if err != nil {
			return
		}
		var scratch []byte
		check := func(v []byte) {
			if uint64(len(v)) != h.ValueLen {
				t.Fatalf("a value of %d bytes for a handle of %d", len(v), h.ValueLen)
			}
		}
		if err := r.Value(h, &scratch, false, check); err != nil && !errors.Is(err, ErrCorruption) {
			t.Fatalf("not damage: %v", err)
		}
		// A scan's read-ahead: the first read alone, the next from a span
		// (RecordIn), of the same bytes.
		var ra blobReadahead
		for _, at := range []BlobHandle{h, {FileNum: h.FileNum, Offset: h.Offset + h.Length, Length: h.Length, ValueLen: h.ValueLen}, h} {
			h = at
			if err := r.valueAhead(at, &ra, &scratch, check); err != nil && !errors.Is(err, ErrCorruption) {
				t.Fatalf("read ahead, not damage: %v", err)
			}
		}
	})
}
