package sstables

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/stratadb/strata/internal/testseed"
	"github.com/stratadb/strata/recordio"
	"github.com/stratadb/strata/vfs"
	"github.com/stratadb/strata/vfs/errorfs"
	"github.com/stretchr/testify/require"
)

// readEverything opens a table and reads it every way: a scan, forward or
// backward, point reads of the given entries. It returns the first error,
// and fails the test if any read returns a wrong value.
func readEverything(t *testing.T, path string, es []entry, opts *ReaderOptions, backward bool) error {
	r, err := Open(path, opts)
	if err != nil {
		return err
	}
	defer r.Close()
	it := r.NewIterator(nil)
	scan, order := it.All(), slices.Clone(es)
	if backward {
		scan = it.Backward()
		slices.Reverse(order)
	}
	i := 0
	for k, v := range scan {
		if i >= len(order) || !bytes.Equal(k, order[i].key) || !bytes.Equal(v, order[i].value) || it.Seq() != order[i].seq || it.Kind() != order[i].kind {
			t.Fatalf("scan (backward %v) returned a wrong entry %d: %q@%d", backward, i, k, it.Seq())
		}
		i++
	}
	if err := it.Err(); err != nil {
		return err
	}
	if i != len(order) {
		t.Fatalf("scan (backward %v) ended after %d of %d entries without an error", backward, i, len(order))
	}
	for _, e := range es {
		var got []byte
		kind, found, err := r.Find(e.key, e.seq, func(v []byte) { got = bytes.Clone(v) })
		if err != nil {
			return err
		}
		if !found || kind != e.kind || !bytes.Equal(got, e.value) {
			t.Fatalf("point read of %v returned %q (found %v) without an error", e, got, found)
		}
	}
	return nil
}

// Any flipped byte of a table is reported as corruption naming the file,
// by Open or by a read, and never yields a wrong value or a panic. Half
// the flips are read with a backward scan, half with a forward one. Every
// byte is flipped in the plain table read through a mapping; in the other
// three (read with pread, compressed, both) a third of the bytes each in
// make test, which together flip every byte once more, and every byte in
// each with -long.
func TestEveryByteFlipIsDetected(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	es := randomEntries(rng, 60)
	config := 0
	for _, c := range []Compression{NoCompression, SnappyCompression} {
		for _, noMmap := range []bool{false, true} {
			stride, first := 1, 0
			if config > 0 && !testseed.Long() {
				stride, first = 3, config-1
			}
			config++
			dir := t.TempDir()
			path := filepath.Join(dir, "t.sst")
			writeTable(t, path, &WriterOptions{Compression: c, BlockSize: 256, BloomBitsPerKey: 10}, es)
			good, err := os.ReadFile(path)
			require.NoError(t, err)
			damaged := filepath.Join(dir, "damaged.sst")
			for pos := first; pos < len(good); pos += stride {
				data := bytes.Clone(good)
				data[pos] ^= 1 << (pos % 8)
				require.NoError(t, os.WriteFile(damaged, data, 0o644))
				// A third of the flips are read with the index and the
				// filter loaded at the first read rather than at Open.
				err := readEverything(t, damaged, es, &ReaderOptions{NoMmap: noMmap, LoadOnRead: pos%3 == 0}, pos%2 == 1)
				msg := fmt.Sprintf("compression %d noMmap %v: flip at %d", c, noMmap, pos)
				require.ErrorIs(t, err, ErrCorruption, msg)
				require.Contains(t, err.Error(), damaged, msg)
			}
		}
	}
}

func TestTruncatedAndForeignFiles(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(4, 4))
	es := randomEntries(rng, 200)
	path := filepath.Join(dir, "t.sst")
	writeTable(t, path, &WriterOptions{BloomBitsPerKey: 10}, es)
	good, err := os.ReadFile(path)
	require.NoError(t, err)

	cut := filepath.Join(dir, "cut.sst")
	for _, n := range []int{0, 1, 7, 8, 100, len(good) / 2, len(good) - footerRecordSize, len(good) - 1} {
		require.NoError(t, os.WriteFile(cut, good[:n], 0o644))
		_, err := Open(cut, nil)
		require.ErrorIs(t, err, ErrCorruption, "cut at %d", n)
		_, err = ReadMetadata(cut, nil)
		require.ErrorIs(t, err, ErrCorruption, "ReadMetadata, cut at %d", n)
	}

	// A valid recordio file that is not a table.
	foreign := filepath.Join(dir, "foreign.rio")
	w, err := recordio.Create(foreign, nil)
	require.NoError(t, err)
	for range 10 {
		_, err := w.Write(bytes.Repeat([]byte("not a table "), 20))
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	_, err = Open(foreign, nil)
	require.ErrorIs(t, err, ErrBadFooter)
	_, err = ReadMetadata(foreign, nil)
	require.ErrorIs(t, err, ErrBadFooter)

	// Random bytes.
	noise := filepath.Join(dir, "noise")
	require.NoError(t, os.WriteFile(noise, bytes.Repeat([]byte{0xAB, 0x12}, 500), 0o644))
	_, err = Open(noise, nil)
	require.ErrorIs(t, err, ErrCorruption)

	_, err = Open(filepath.Join(dir, "missing.sst"), nil)
	require.Error(t, err)
	require.False(t, errors.Is(err, ErrCorruption))
}

// rewriteTable copies the table at src to dst record by record through
// recordio, so that every checksum is valid, passing each data block handle
// in the index through editHandle and the encoded footer through
// editFooter (either may be nil). It crafts tables whose damage only the
// table format can see.
func rewriteTable(t *testing.T, src, dst string, editHandle func(BlockHandle) BlockHandle, editFooter func(b []byte)) {
	t.Helper()
	rr, err := recordio.OpenRandom(src, &recordio.ReaderOptions{NoMmap: true})
	require.NoError(t, err)
	footOff := rr.Size() - footerRecordSize
	raw, err := rr.RecordAt(footOff, nil)
	require.NoError(t, err)
	require.NoError(t, rr.Close())
	old, err := decodeFooter(raw, uint64(footOff))
	require.NoError(t, err)

	r, err := recordio.Open(src, nil)
	require.NoError(t, err)
	defer r.Close()
	compression := SnappyCompression
	if r.Header().Codec == recordio.CodecNone {
		compression = NoCompression
	}
	w, err := recordio.Create(dst, &recordio.WriterOptions{Compression: compression})
	require.NoError(t, err)
	f := footer{version: formatVersion}
	for {
		rec, err := r.Next()
		require.NoError(t, err)
		off := uint64(r.Offset())
		if off == uint64(footOff) {
			break
		}
		if off == old.index.Offset && editHandle != nil {
			rec = editIndex(t, rec, editHandle)
		}
		at, err := w.Write(rec)
		require.NoError(t, err)
		h := BlockHandle{Offset: uint64(at), Length: uint64(w.Size() - at)}
		switch {
		case off == old.index.Offset:
			f.index = h
		case off == old.props.Offset:
			f.props = h
		case off == old.filter.Offset && old.filter.Length > 0:
			f.filter = h
		}
	}
	b := f.encode()
	if editFooter != nil {
		editFooter(b)
	}
	_, err = w.WriteUncompressed(b)
	require.NoError(t, err)
	require.NoError(t, w.Close())
}

// editIndex rebuilds an index block with every handle passed through edit.
func editIndex(t *testing.T, index []byte, edit func(BlockHandle) BlockHandle) []byte {
	var it blockIter
	require.NoError(t, it.init(bytes.Compare, index, true))
	b := blockBuilder{restartInterval: 1}
	for ok := it.first(); ok; ok = it.nextEntry() {
		h, err := decodeHandle(it.value, 1<<62)
		require.NoError(t, err)
		b.add(it.key, it.trailer, edit(h).append(nil))
	}
	require.NoError(t, it.err)
	return b.finish()
}

// Footer slots of the index, filter and properties handles.
const (
	footerIndex  = 0
	footerFilter = 16
	footerProps  = 32
)

// A table whose blocks all have valid checksums but whose handles point
// where no block of theirs can be is reported as corruption naming the
// file, never as io.EOF or a recordio usage error.
func TestBadHandlesAreCorruption(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 5))
	es := randomEntries(rng, 100)
	src := filepath.Join(dir, "t.sst")
	writeTable(t, src, &WriterOptions{Compression: NoCompression, BlockSize: 256, BloomBitsPerKey: 10}, es)
	rr, err := recordio.OpenRandom(src, nil)
	require.NoError(t, err)
	raw, err := rr.RecordAt(rr.Size()-footerRecordSize, nil)
	require.NoError(t, err)
	require.NoError(t, rr.Close())
	f, err := decodeFooter(raw, 1<<62)
	require.NoError(t, err)

	setHandle := func(slot int, off uint64) func([]byte) {
		return func(b []byte) { binary.LittleEndian.PutUint64(b[slot:], off) }
	}
	for _, tc := range []struct {
		name       string
		editHandle func(BlockHandle) BlockHandle
		editFooter func([]byte)
		indexError bool // the error is the index's, at its offset
	}{
		{name: "data block past EOF", editHandle: func(h BlockHandle) BlockHandle { return BlockHandle{1 << 30, h.Length} }, indexError: true},
		{name: "data block at 0", editHandle: func(h BlockHandle) BlockHandle { return BlockHandle{0, h.Length} }, indexError: true},
		{name: "data block in the filter", editHandle: func(h BlockHandle) BlockHandle { return BlockHandle{f.filter.Offset, h.Length} }, indexError: true},
		{name: "data block in the index", editHandle: func(BlockHandle) BlockHandle { return f.index }, indexError: true},
		{name: "data block empty", editHandle: func(h BlockHandle) BlockHandle { return BlockHandle{h.Offset, 0} }, indexError: true},
		{name: "data block mid-record", editHandle: func(h BlockHandle) BlockHandle { return BlockHandle{h.Offset + 1, h.Length - 1} }},
		{name: "index at 0", editFooter: setHandle(footerIndex, 0)},
		{name: "filter at 0", editFooter: setHandle(footerFilter, 0)},
		{name: "props at 0", editFooter: setHandle(footerProps, 0)},
		{name: "props past the footer", editFooter: setHandle(footerProps, 1<<40)},
		{name: "index is the props", editFooter: func(b []byte) { copy(b[footerIndex:footerIndex+16], b[footerProps:]) }},
		{name: "reserved bytes set", editFooter: func(b []byte) { b[52] = 1 }},
	} {
		for _, noMmap := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/noMmap=%v", tc.name, noMmap), func(t *testing.T) {
				dst := filepath.Join(t.TempDir(), "bad.sst")
				rewriteTable(t, src, dst, tc.editHandle, tc.editFooter)
				for _, backward := range []bool{false, true} {
					err := readEverything(t, dst, es, &ReaderOptions{NoMmap: noMmap}, backward)
					require.ErrorIs(t, err, ErrCorruption)
					require.NotErrorIs(t, err, io.EOF)
					require.Contains(t, err.Error(), dst)
					if tc.indexError {
						var ce *CorruptionError
						require.ErrorAs(t, err, &ce)
						require.Equal(t, int64(f.index.Offset), ce.Offset, "%v", err)
					}
				}
			})
		}
	}

	// Without a mapping the lengths are checked too.
	dst := filepath.Join(dir, "long.sst")
	rewriteTable(t, src, dst, func(h BlockHandle) BlockHandle { return BlockHandle{h.Offset, h.Length + 1} }, nil)
	for _, backward := range []bool{false, true} {
		err = readEverything(t, dst, es, &ReaderOptions{NoMmap: true}, backward)
		require.ErrorIs(t, err, ErrCorruption)
	}
}

// An I/O error reading a table is returned as itself, matching its errno,
// and is never mistaken for corruption: it may clear, damage does not.
func TestReadErrorsAreNotCorruption(t *testing.T) {
	fsys := vfs.NewMem()
	es := randomEntries(rand.New(rand.NewPCG(6, 6)), 100)
	writeTable(t, "t.sst", &WriterOptions{FS: fsys, BloomBitsPerKey: 10}, es)
	// Open reads the file header, footer, properties, index and filter.
	for after := range int64(5) {
		rule := &errorfs.Rule{Ops: errorfs.OpReadAt, After: after, Err: syscall.EIO}
		rule.Enable()
		_, err := Open("t.sst", &ReaderOptions{FS: errorfs.Wrap(fsys, rule)})
		require.ErrorIs(t, err, syscall.EIO, "read %d", after)
		require.NotErrorIs(t, err, ErrCorruption, "read %d", after)
	}

	rule := &errorfs.Rule{Ops: errorfs.OpReadAt, Err: syscall.EIO}
	r, err := Open("t.sst", &ReaderOptions{FS: errorfs.Wrap(fsys, rule)})
	require.NoError(t, err)
	defer r.Close()
	rule.Enable()
	_, err = r.Get(es[0].key)
	require.ErrorIs(t, err, syscall.EIO)
	require.NotErrorIs(t, err, ErrCorruption)
	for _, first := range []func(*Iterator) bool{(*Iterator).First, (*Iterator).Last} {
		it := r.NewIterator(nil)
		require.False(t, first(it))
		require.ErrorIs(t, it.Err(), syscall.EIO)
		require.NotErrorIs(t, it.Err(), ErrCorruption)
		require.False(t, it.Next(), "an iterator that failed stays stopped")
		require.False(t, it.Prev())
	}
}
