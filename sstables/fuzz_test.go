package sstables

import (
	"bytes"
	"testing"

	"github.com/stratadb/strata/internal/base"
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

// checkBlockDecoder runs every blockIter operation over arbitrary bytes: it
// must return entries or an error, never panic or loop.
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
	it.seekGE(target, base.MaxSeq)
	it.seekGE(target, 0)
}

// FuzzDataBlock fuzzes the data block decoder.
func FuzzDataBlock(f *testing.F) {
	f.Add(fuzzBlock(false), []byte("banana"))
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
	f.Fuzz(func(t *testing.T, data []byte) {
		if m, err := decodeMetadata(data); err == nil {
			if _, err := decodeMetadata(m.encode()); err != nil {
				t.Fatalf("re-encoded properties do not decode: %v", err)
			}
		}
	})
}
