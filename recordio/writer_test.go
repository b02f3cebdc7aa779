package recordio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stratadb/strata/internal/race"
	"github.com/stretchr/testify/require"
)

// roundTripRecords covers nil, empty, tiny, compressible, incompressible,
// and records larger than the default buffers.
func roundTripRecords() [][]byte {
	return [][]byte{
		nil,
		{},
		[]byte("x"),
		bytes.Repeat([]byte("strata "), 1000),
		seededBytes(4096, 7),
		nil,
		bytes.Repeat([]byte{0x91, 0x8D, 0x4C}, 100),
		seededBytes(DefaultBufferSize+12345, 8),
		bytes.Repeat([]byte("z"), 3*DefaultBufferSize),
		{},
	}
}

// readerModes are the sequential reader's ways of reading a file: mapped or
// through a buffer, returning owned or aliased records.
func readerModes() []ReaderOptions {
	var modes []ReaderOptions
	for _, noMmap := range []bool{false, true} {
		for _, zeroCopy := range []bool{false, true} {
			modes = append(modes, ReaderOptions{NoMmap: noMmap, ZeroCopy: zeroCopy})
		}
	}
	return modes
}

// compressionFor returns the Compression that writes codec.
func compressionFor(codec Codec) Compression {
	for _, c := range []Compression{NoCompression, SnappyCompression, ZstdCompression, GzipCompression} {
		if got, err := c.Codec(); err == nil && got == codec {
			return c
		}
	}
	panic("no compression writes " + codec.String())
}

type formatCase struct {
	version Version
	codec   Codec
}

func writableFormats() []formatCase {
	var out []formatCase
	for _, c := range []Codec{CodecNone, CodecGzip, CodecSnappy, CodecZstd} {
		out = append(out, formatCase{VersionStrata, c})
		if c != CodecZstd {
			out = append(out, formatCase{VersionV4, c})
		}
	}
	return out
}

// encodeFile writes records into memory and returns the file and the
// offset of each record.
func encodeFile(t testing.TB, opts *WriterOptions, records [][]byte) ([]byte, []int64) {
	t.Helper()
	f := &failingFile{failAfter: 1 << 62}
	w, err := NewWriter(f, opts)
	require.NoError(t, err)
	var offsets []int64
	for _, rec := range records {
		size := w.Size()
		off, err := w.Write(rec)
		require.NoError(t, err)
		require.Equal(t, size, off)
		offsets = append(offsets, off)
	}
	require.NoError(t, w.Close())
	return f.Bytes(), offsets
}

// writeFile writes records to a new file at path and returns their offsets.
func writeFile(t testing.TB, path string, opts *WriterOptions, records [][]byte) []int64 {
	t.Helper()
	file, offsets := encodeFile(t, opts, records)
	require.NoError(t, os.WriteFile(path, file, 0o644))
	return offsets
}

func TestRoundTrip(t *testing.T) {
	records := roundTripRecords()
	for _, fc := range writableFormats() {
		t.Run(fmt.Sprintf("%v_%v", fc.version, fc.codec), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f.rio")
			offsets := writeFile(t, path, &WriterOptions{Version: fc.version, Compression: compressionFor(fc.codec)}, records)

			for _, ro := range readerModes() {
				ro.BufferSize = 1024
				r, err := Open(path, &ro)
				require.NoError(t, err)
				require.Equal(t, FileHeader{Version: fc.version, Codec: fc.codec}, r.Header())
				for i, want := range records {
					got, err := r.Next()
					require.NoError(t, err)
					requireSameRecord(t, want, got, "record %d %+v", i, ro)
					require.Equal(t, offsets[i], r.Offset())
				}
				_, err = r.Next()
				require.Equal(t, io.EOF, err)
				require.NoError(t, r.Close())
			}

			for _, noMmap := range []bool{false, true} {
				rr, err := OpenRandom(path, &ReaderOptions{NoMmap: noMmap})
				require.NoError(t, err)
				var buf []byte
				for i := len(records) - 1; i >= 0; i-- {
					got, err := rr.RecordAt(offsets[i], buf)
					require.NoError(t, err)
					requireSameRecord(t, records[i], got, "record %d noMmap=%v", i, noMmap)
					if got != nil {
						buf = got[:0]
					}
				}
				require.NoError(t, rr.Close())
			}
		})
	}
}

func TestCompressionOnlyWhenItPays(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.rio")
	compressible := bytes.Repeat([]byte("abcd"), 1000)
	incompressible := seededBytes(4000, 3)
	writeFile(t, path, &WriterOptions{Compression: SnappyCompression}, [][]byte{compressible, incompressible})

	r, err := Open(path, nil)
	require.NoError(t, err)
	defer r.Close()
	// Read the headers directly: the first payload is compressed, the
	// second stored as is.
	raw := r.buf[r.r:r.w]
	h, n, err := r.hdr.decodeRecordHeader(raw)
	require.NoError(t, err)
	require.True(t, h.compressed)
	require.Less(t, h.plen, h.ulen)
	h2, _, err := r.hdr.decodeRecordHeader(raw[n+int(h.plen):])
	require.NoError(t, err)
	require.False(t, h2.compressed)
	require.Equal(t, uint64(len(incompressible)), h2.plen)
}

// Compressed tells how the last record was stored, for each way a record
// goes in.
func TestWriterCompressed(t *testing.T) {
	compressible := bytes.Repeat([]byte("abcd"), 1000)
	for _, tc := range []struct {
		name   string
		opts   *WriterOptions
		write  func(w *Writer, rec []byte) (int64, error)
		record []byte
		want   bool
	}{
		{"compressible", nil, (*Writer).Write, compressible, true},
		{"incompressible", nil, (*Writer).Write, seededBytes(4000, 3), false},
		{"empty", nil, (*Writer).Write, []byte{}, false},
		{"nil", nil, (*Writer).Write, nil, false},
		{"uncompressed on request", nil, (*Writer).WriteUncompressed, compressible, false},
		{"no codec", &WriterOptions{Compression: NoCompression}, (*Writer).Write, compressible, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := Create(filepath.Join(t.TempDir(), "f.rio"), tc.opts)
			require.NoError(t, err)
			defer w.Close()
			_, err = w.Write(compressible) // the state before: compressed
			require.NoError(t, err)
			_, err = tc.write(w, tc.record)
			require.NoError(t, err)
			require.Equal(t, tc.want, w.Compressed())
		})
	}
}

// A zero compression means snappy, as in every layer; each constant writes
// its codec into the file header.
func TestWriterCompressionSetsTheCodec(t *testing.T) {
	for _, tc := range []struct {
		compression Compression
		want        Codec
	}{
		{DefaultCompression, CodecSnappy},
		{NoCompression, CodecNone},
		{SnappyCompression, CodecSnappy},
		{ZstdCompression, CodecZstd},
		{GzipCompression, CodecGzip},
	} {
		t.Run(tc.compression.String(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "records")
			w, err := Create(path, &WriterOptions{Compression: tc.compression})
			require.NoError(t, err)
			require.NoError(t, w.Close())
			r, err := Open(path, nil)
			require.NoError(t, err)
			defer r.Close()
			require.Equal(t, tc.want, r.Header().Codec)
		})
	}
}

func TestWriterRejects(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		opts WriterOptions
		want error
	}{
		{"v4 zstd", WriterOptions{Version: VersionV4, Compression: ZstdCompression}, ErrUnsupported},
		{"v3", WriterOptions{Version: VersionV3}, ErrUnsupported},
		{"unknown compression", WriterOptions{Compression: 9}, ErrUnknownCompression},
		{"bad gzip level", WriterOptions{Compression: GzipCompression, Level: 42}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := Create(filepath.Join(dir, tc.name), &tc.opts)
			require.Error(t, err)
			require.Nil(t, w)
			require.NotErrorIs(t, err, ErrCorruption, "a usage error, not damage")
			require.NotErrorIs(t, err, ErrUnknownCodec, "a kind of damage")
			if tc.want != nil {
				require.ErrorIs(t, err, tc.want)
			}
		})
	}
}

// A record is refused when it, or in v4 its compressed payload, exceeds
// MaxRecordSize: nothing is written, the writer goes on, and its readers
// accept everything it did write.
func TestWriterRecordTooLarge(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   WriterOptions
		record []byte
	}{
		{"record", WriterOptions{MaxRecordSize: 10}, make([]byte, 11)},
		{"v4 snappy grows it", WriterOptions{Version: VersionV4, Compression: SnappyCompression, MaxRecordSize: 4096}, seededBytes(4096, 1)},
		{"v4 gzip grows it", WriterOptions{Version: VersionV4, Compression: GzipCompression, MaxRecordSize: 4096}, seededBytes(4096, 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &failingFile{failAfter: 1 << 62}
			w, err := NewWriter(f, &tc.opts)
			require.NoError(t, err)
			_, err = w.Write(tc.record)
			require.ErrorIs(t, err, ErrRecordTooLarge)
			require.NotErrorIs(t, err, ErrCorruption)
			require.Equal(t, int64(FileHeaderSize), w.Size(), "nothing written")
			// The writer still works.
			_, err = w.Write([]byte("small"))
			require.NoError(t, err)
			require.NoError(t, w.Close())

			got, err := readAll(t, f.Bytes(), &ReaderOptions{MaxRecordSize: tc.opts.MaxRecordSize})
			require.Equal(t, io.EOF, err)
			require.Equal(t, [][]byte{[]byte("small")}, got)
		})
	}
}

func TestClosedWriterAndReaders(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.rio")
	w, err := Create(path, nil)
	require.NoError(t, err)
	_, err = w.Write([]byte("a"))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	for name, call := range map[string]func() error{
		"Write":     func() error { _, err := w.Write(nil); return err },
		"WriteSync": func() error { _, err := w.WriteSync(nil); return err },
		"Flush":     w.Flush,
		"Sync":      w.Sync,
		"Close":     w.Close,
	} {
		require.ErrorIs(t, call(), ErrClosed, name)
	}

	r, err := Open(path, nil)
	require.NoError(t, err)
	require.NoError(t, r.Close())
	_, err = r.Next()
	require.ErrorIs(t, err, ErrClosed)
	_, err = r.Resync()
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, r.Close(), ErrClosed)

	rr, err := OpenRandom(path, nil)
	require.NoError(t, err)
	require.NoError(t, rr.Close())
	_, err = rr.RecordAt(FileHeaderSize, nil)
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, rr.Close(), ErrClosed)
}

// failingFile fails every write after the first failAfter bytes.
type failingFile struct {
	bytes.Buffer
	failAfter int
	syncs     int
}

var errDiskFull = errors.New("disk full")

func (f *failingFile) Write(p []byte) (int, error) {
	if f.Len()+len(p) > f.failAfter {
		return 0, errDiskFull
	}
	return f.Buffer.Write(p)
}
func (f *failingFile) Sync() error  { f.syncs++; return nil }
func (f *failingFile) Close() error { return nil }

func TestWriterErrorIsSticky(t *testing.T) {
	f := &failingFile{failAfter: 100}
	w, err := NewWriter(f, &WriterOptions{BufferSize: 16, Compression: NoCompression})
	require.NoError(t, err)
	_, err = w.Write(make([]byte, 200))
	require.ErrorIs(t, err, errDiskFull)
	_, err = w.Write([]byte("small"))
	require.ErrorIs(t, err, errDiskFull, "the file's tail is unknown: refuse further writes")
	require.ErrorIs(t, w.Sync(), errDiskFull)
	require.Zero(t, f.syncs)
}

func TestWriteSyncFlushesAndSyncs(t *testing.T) {
	f := &failingFile{failAfter: 1 << 20}
	w, err := NewWriter(f, nil)
	require.NoError(t, err)
	_, err = w.Write([]byte("buffered"))
	require.NoError(t, err)
	require.Zero(t, f.Len(), "Write buffers")
	off, err := w.WriteSync([]byte("durable"))
	require.NoError(t, err)
	require.Equal(t, int64(f.Len()), w.Size())
	require.Equal(t, 1, f.syncs)

	r, err := NewRandomReader(bytes.NewReader(f.Bytes()), int64(f.Len()), nil)
	require.NoError(t, err)
	got, err := r.RecordAt(off, nil)
	require.NoError(t, err)
	require.Equal(t, "durable", string(got))
}

// Steady-state writes allocate nothing, for every codec and format.
func TestWriteAllocations(t *testing.T) {
	rec := seededBytes(10<<10, 5)
	compressible := bytes.Repeat([]byte("abc"), 3000)
	for _, fc := range writableFormats() {
		for _, data := range [][]byte{rec, compressible} {
			w, err := NewWriter(&failingFile{failAfter: 1 << 62}, &WriterOptions{Version: fc.version, Compression: compressionFor(fc.codec)})
			require.NoError(t, err)
			for range 3 {
				_, err := w.Write(data)
				require.NoError(t, err)
			}
			allocs := testing.AllocsPerRun(50, func() {
				if _, err := w.Write(data); err != nil {
					t.Fatal(err)
				}
			})
			require.Zero(t, allocs, "%v %v", fc.version, fc.codec)
		}
	}
}

// A zero-copy scan allocates nothing per record, and a random read into a
// reused buffer allocates nothing either.
func TestReadAllocations(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector makes sync.Pool drop pooled state")
	}
	for _, fc := range writableFormats() {
		path := filepath.Join(t.TempDir(), "f.rio")
		var records [][]byte
		for i := range 300 {
			records = append(records, bytes.Repeat([]byte{byte(i)}, 1000))
			records = append(records, seededBytes(1000, uint64(i)))
		}
		offsets := writeFile(t, path, &WriterOptions{Version: fc.version, Compression: compressionFor(fc.codec)}, records)

		r, err := Open(path, &ReaderOptions{ZeroCopy: true})
		require.NoError(t, err)
		for range 10 {
			_, err := r.Next()
			require.NoError(t, err)
		}
		allocs := testing.AllocsPerRun(200, func() {
			if _, err := r.Next(); err != nil {
				t.Fatal(err)
			}
		})
		require.Zero(t, allocs, "sequential %v %v", fc.version, fc.codec)
		require.NoError(t, r.Close())

		rr, err := OpenRandom(path, nil)
		require.NoError(t, err)
		buf := make([]byte, 0, 2000)
		for _, off := range offsets[:10] {
			_, err := rr.RecordAt(off, buf)
			require.NoError(t, err)
		}
		i := 0
		allocs = testing.AllocsPerRun(200, func() {
			i = (i + 1) % len(offsets)
			if _, err := rr.RecordAt(offsets[i], buf); err != nil {
				t.Fatal(err)
			}
		})
		require.Zero(t, allocs, "random %v %v", fc.version, fc.codec)
		require.NoError(t, rr.Close())
	}
}

func TestWriteUncompressed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.rio")
	w, err := Create(path, &WriterOptions{Compression: SnappyCompression})
	require.NoError(t, err)
	compressible := bytes.Repeat([]byte("a"), 1000)
	raw, err := w.WriteUncompressed(compressible)
	require.NoError(t, err)
	// magic 3, flags 1, two 2-byte uvarints, two checksums: 16 bytes.
	require.Equal(t, int64(FileHeaderSize+16+1000), w.Size())
	packed, err := w.Write(compressible)
	require.NoError(t, err)
	require.Less(t, w.Size()-packed, int64(1000))
	require.NoError(t, w.Close())

	for _, noMmap := range []bool{false, true} {
		rr, err := OpenRandom(path, &ReaderOptions{NoMmap: noMmap})
		require.NoError(t, err)
		for _, off := range []int64{raw, packed} {
			got, inPlace, err := rr.RecordView(off, nil)
			require.NoError(t, err)
			require.Equal(t, compressible, got)
			require.Equal(t, !noMmap && off == raw, inPlace)
		}
		require.NoError(t, rr.Close())
	}

	v4, err := Create(filepath.Join(t.TempDir(), "v4.rio"), &WriterOptions{Version: VersionV4, Compression: SnappyCompression})
	require.NoError(t, err)
	_, err = v4.WriteUncompressed([]byte("x"))
	require.ErrorIs(t, err, ErrUnsupported)
	require.NoError(t, v4.Close())
}

// randomReaders returns a RandomReader over file read through ReadAt, and
// one over file as if mapped, each with the counter of its ReadAt calls.
func randomReaders(t *testing.T, file []byte, opts *ReaderOptions) map[string]*readAtCounter {
	out := map[string]*readAtCounter{}
	for _, mapped := range []bool{false, true} {
		ra := &readAtCounter{Reader: bytes.NewReader(file)}
		rr, err := NewRandomReader(ra, int64(len(file)), opts)
		require.NoError(t, err)
		if mapped {
			rr.mapped = file
		}
		ra.rr = rr
		out[fmt.Sprintf("mapped=%v", mapped)] = ra
	}
	return out
}

// RecordViewSized reads a record in one ReadAt (none when mapped) and
// otherwise behaves as RecordView, except that the length must match.
func TestRecordViewSized(t *testing.T) {
	records := [][]byte{bytes.Repeat([]byte("ab"), 500), seededBytes(700, 3), {}, nil}
	data, offsets := encodeFile(t, &WriterOptions{Compression: SnappyCompression}, records)
	end := int64(len(data))
	length := func(i int) int64 {
		if i+1 < len(offsets) {
			return offsets[i+1] - offsets[i]
		}
		return end - offsets[i]
	}
	file := append(bytes.Clone(data), make([]byte, 100)...)

	type tc struct {
		name    string
		off     int64
		length  int64
		want    []byte
		inPlace bool  // when mapped
		err     error // io.EOF or a kind of corruption
	}
	var cases []tc
	for i, rec := range records {
		cases = append(cases, tc{name: fmt.Sprintf("record %d", i), off: offsets[i], length: length(i), want: rec, inPlace: i == 1 || i == 2})
	}
	cases = append(cases,
		tc{name: "unknown length", off: offsets[1], length: 0, want: records[1], inPlace: true},
		tc{name: "short length", off: offsets[0], length: length(0) - 1, err: ErrBadHeader},
		tc{name: "long length", off: offsets[1], length: length(1) + 1, err: ErrBadHeader},
		tc{name: "whole file", off: offsets[0], length: int64(len(file)), err: ErrBadHeader},
		tc{name: "zero padding", off: end, length: 100, err: io.EOF},
	)
	for name, ra := range randomReaders(t, file, nil) {
		mapped := ra.rr.mapped != nil
		for _, c := range cases {
			ra.calls = 0
			got, inPlace, err := ra.rr.RecordViewSized(c.off, c.length, nil)
			msg := fmt.Sprintf("%s %s", name, c.name)
			switch c.err {
			case nil:
				require.NoError(t, err, msg)
				requireSameRecord(t, c.want, got, msg)
				require.Equal(t, mapped && c.inPlace, inPlace, msg)
				reads := 1 // header and payload at once
				if c.length == 0 {
					reads = 2
				}
				if mapped {
					reads = 0
				}
				require.Equal(t, reads, ra.calls, "%s: ReadAt calls", msg)
			case io.EOF:
				require.Equal(t, io.EOF, err, msg)
			default:
				require.ErrorIs(t, err, c.err, msg)
				requireCorruption(t, err, c.err, c.off)
			}
		}
	}

	// A length beyond the limit is refused as RecordAt refuses it.
	for name, ra := range randomReaders(t, file, &ReaderOptions{MaxRecordSize: 900}) {
		_, err := ra.rr.RecordAt(offsets[0], nil)
		requireCorruption(t, err, ErrRecordTooLarge, offsets[0])
		_, _, sizedErr := ra.rr.RecordViewSized(offsets[0], length(0), nil)
		require.Equal(t, err.Error(), sizedErr.Error(), name)
	}
}

// A mapped file is read in place: headers and payloads, compressed or not,
// are never copied out with ReadAt.
func TestMappedRandomReadsInPlace(t *testing.T) {
	for _, codec := range []Codec{CodecNone, CodecSnappy, CodecGzip, CodecZstd} {
		records := roundTripRecords()
		file, offsets := encodeFile(t, &WriterOptions{Compression: compressionFor(codec)}, records)
		ra := randomReaders(t, file, nil)["mapped=true"]
		ra.calls = 0
		for i, off := range offsets {
			got, err := ra.rr.RecordAt(off, nil)
			require.NoError(t, err)
			requireSameRecord(t, records[i], got, "%v record %d", codec, i)
			got, _, err = ra.rr.RecordView(off, nil)
			require.NoError(t, err)
			requireSameRecord(t, records[i], got, "%v record %d", codec, i)
		}
		require.Zero(t, ra.calls, "%v: ReadAt calls", codec)
	}
}

// Records that alias the reader's memory end at their length, so that a
// caller's append copies instead of writing over the records that follow
// (or into a read-only mapping).
func TestZeroCopyRecordsEndAtTheirLength(t *testing.T) {
	records := [][]byte{seededBytes(100, 1), bytes.Repeat([]byte("ab"), 100), seededBytes(100, 2)}
	for _, codec := range []Codec{CodecNone, CodecSnappy} {
		path := filepath.Join(t.TempDir(), "f.rio")
		offsets := writeFile(t, path, &WriterOptions{Compression: compressionFor(codec)}, records)
		for _, noMmap := range []bool{false, true} {
			r, err := Open(path, &ReaderOptions{ZeroCopy: true, NoMmap: noMmap})
			require.NoError(t, err)
			for i, want := range records {
				got, err := r.Next()
				require.NoError(t, err)
				require.Equal(t, want, got)
				require.Equal(t, len(got), cap(got), "%v record %d, noMmap %v", codec, i, noMmap)
			}
			require.NoError(t, r.Close())

			rr, err := OpenRandom(path, &ReaderOptions{NoMmap: noMmap})
			require.NoError(t, err)
			for i, off := range offsets {
				got, _, err := rr.RecordView(off, nil)
				require.NoError(t, err)
				require.Equal(t, records[i], got)
				require.Equal(t, len(got), cap(got), "%v record %d, noMmap %v", codec, i, noMmap)
			}
			require.NoError(t, rr.Close())
		}
	}
}

// Concurrent zstd writers compress in parallel, each with an encoder of its
// own (run with -race).
func TestConcurrentZstdWriters(t *testing.T) {
	const writers = 4
	ws := make([]*Writer, writers)
	files := make([]*failingFile, writers)
	for i := range ws {
		files[i] = &failingFile{failAfter: 1 << 62}
		w, err := NewWriter(files[i], &WriterOptions{Compression: ZstdCompression})
		require.NoError(t, err)
		for _, other := range ws[:i] {
			require.NotSame(t, other.comp.zstd, w.comp.zstd)
		}
		ws[i] = w
	}
	records := roundTripRecords()
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Go(func() {
			for _, rec := range records {
				if _, err := w.Write(rec); err != nil {
					t.Error(err)
					return
				}
			}
			if err := w.Close(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for _, f := range files {
		got, err := readAll(t, f.Bytes(), nil)
		require.Equal(t, io.EOF, err)
		require.Len(t, got, len(records))
		for i := range records {
			requireSameRecord(t, records[i], got[i], "record %d", i)
		}
	}
}

// With BytesPerSync, the writer starts the writeback of what reached the
// file every BytesPerSync bytes, and the file reads back whole.
func TestWriterStartsWritebackEveryBytesPerSync(t *testing.T) {
	for _, bytesPerSync := range []int64{0, 4096, 64 << 10} {
		t.Run(fmt.Sprint(bytesPerSync), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "records")
			w, err := Create(path, &WriterOptions{BufferSize: 1024, BytesPerSync: bytesPerSync, Compression: NoCompression})
			require.NoError(t, err)
			rec := bytes.Repeat([]byte("r"), 1000)
			for range 100 {
				_, err := w.Write(rec)
				require.NoError(t, err)
			}
			if bytesPerSync == 0 {
				require.Zero(t, w.writebackTo)
			} else {
				require.Positive(t, w.writebackTo)
				require.Less(t, w.written-w.writebackTo, bytesPerSync, "writeback lags by less than BytesPerSync")
			}
			require.NoError(t, w.Close())
			r, err := Open(path, nil)
			require.NoError(t, err)
			defer r.Close()
			n := 0
			for {
				got, err := r.Next()
				if err == io.EOF {
					break
				}
				require.NoError(t, err)
				require.Equal(t, rec, got)
				n++
			}
			require.Equal(t, 100, n)
		})
	}
}

// Info describes each record as stored: where it starts, its length on
// disk, whether it was compressed; the offsets are the writer's.
func TestReaderInfo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.rio")
	records := [][]byte{bytes.Repeat([]byte("abcd"), 1000), seededBytes(4000, 3), nil, {}}
	w, err := Create(path, &WriterOptions{Compression: SnappyCompression})
	require.NoError(t, err)
	var offsets []int64
	for _, rec := range records {
		off, err := w.Write(rec)
		require.NoError(t, err)
		offsets = append(offsets, off)
	}
	require.NoError(t, w.Close())
	info, err := os.Stat(path)
	require.NoError(t, err)

	r, err := Open(path, nil)
	require.NoError(t, err)
	defer r.Close()
	var got []RecordInfo
	for {
		_, err := r.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		got = append(got, r.Info())
	}
	require.Len(t, got, len(records))
	for i, g := range got {
		require.Equal(t, offsets[i], g.Offset, "record %d", i)
		end := info.Size()
		if i+1 < len(offsets) {
			end = offsets[i+1]
		}
		require.Equal(t, end-offsets[i], g.Size, "record %d", i)
		require.Equal(t, len(records[i]), g.Length, "record %d", i)
		require.Equal(t, records[i] == nil, g.Nil, "record %d", i)
	}
	require.True(t, got[0].Compressed)
	require.False(t, got[1].Compressed)
}

// Scan reports each damaged place and, with resync, the records after it;
// without, it stops at the first damage.
func TestReaderScan(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.rio")
	w, err := Create(path, &WriterOptions{Compression: NoCompression})
	require.NoError(t, err)
	var offsets []int64
	for i := range 5 {
		off, err := w.Write(bytes.Repeat([]byte{byte('a' + i)}, 100))
		require.NoError(t, err)
		offsets = append(offsets, off)
	}
	require.NoError(t, w.Close())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	data[offsets[2]+50] ^= 1
	require.NoError(t, os.WriteFile(path, data, 0o644))

	for _, resync := range []bool{true, false} {
		r, err := Open(path, nil)
		require.NoError(t, err)
		var seen []int64
		var damage []error
		require.NoError(t, r.Scan(resync, func(info RecordInfo) { seen = append(seen, info.Offset) }, func(err error) { damage = append(damage, err) }))
		require.NoError(t, r.Close())
		require.Len(t, damage, 1)
		var ce *CorruptionError
		require.True(t, errors.As(damage[0], &ce))
		require.Equal(t, offsets[2], ce.Offset)
		if resync {
			require.Equal(t, []int64{offsets[0], offsets[1], offsets[3], offsets[4]}, seen)
		} else {
			require.Equal(t, offsets[:2], seen)
		}
	}
}
