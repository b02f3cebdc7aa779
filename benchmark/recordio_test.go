package benchmark

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stratadb/strata/benchmark/internal/benchdata"
	"github.com/stratadb/strata/recordio"
)

// recordSizes are go-sstables' RecordIO write sizes.
var recordSizes = []struct {
	name string
	size int
}{
	{"RecordSize1k", 1024},
	{"RecordSize10k", 10240},
	{"RecordSize100k", 102400},
	{"RecordSize1M", 1024000},
}

// rotateAt bounds benchmark files: past it a file is truncated, outside the
// timer, which keeps dirty page-cache data (and the kernel's writeback of it)
// small and the figures steadier.
const rotateAt = 64 << 20

// recordioSink writes records to a recordio file, rotating it at rotateAt.
type recordioSink struct {
	b           *testing.B
	path        string
	compression recordio.Compression
	sync        bool
	w           *recordio.Writer
}

func newRecordioSink(b *testing.B, compression recordio.Compression, sync bool) *recordioSink {
	s := &recordioSink{b: b, path: filepath.Join(benchDir(b), "bench.rio"), compression: compression, sync: sync}
	s.open()
	return s
}

func (s *recordioSink) open() {
	w, err := recordio.Create(s.path, &recordio.WriterOptions{Compression: s.compression})
	if err != nil {
		s.b.Fatal(err)
	}
	s.w = w
}

func (s *recordioSink) write(record []byte) {
	var err error
	if s.sync {
		_, err = s.w.WriteSync(record)
	} else {
		_, err = s.w.Write(record)
	}
	if err != nil {
		s.b.Fatal(err)
	}
}

// full reports whether the file should be rotated.
func (s *recordioSink) full() bool { return s.w.Size() > rotateAt }

func (s *recordioSink) rotate() {
	if err := s.w.Close(); err != nil {
		s.b.Fatal(err)
	}
	s.open()
}

func (s *recordioSink) close() {
	if err := s.w.Close(); err != nil {
		s.b.Fatal(err)
	}
}

// bufioSink is the baseline: the same bytes through a plain bufio.Writer of
// recordio's buffer size on an os.File, fsync'd per record when syncing.
type bufioSink struct {
	b       *testing.B
	f       *os.File
	bw      *bufio.Writer
	sync    bool
	written int64
}

func newBufioSink(b *testing.B, sync bool) *bufioSink {
	f, err := os.Create(filepath.Join(benchDir(b), "bench.raw"))
	if err != nil {
		b.Fatal(err)
	}
	return &bufioSink{b: b, f: f, bw: bufio.NewWriterSize(f, recordio.DefaultBufferSize), sync: sync}
}

func (s *bufioSink) write(record []byte) {
	if _, err := s.bw.Write(record); err != nil {
		s.b.Fatal(err)
	}
	s.written += int64(len(record))
	if s.sync {
		if err := s.bw.Flush(); err != nil {
			s.b.Fatal(err)
		}
		if err := s.f.Sync(); err != nil {
			s.b.Fatal(err)
		}
	}
}

func (s *bufioSink) full() bool { return s.written > rotateAt }

func (s *bufioSink) rotate() {
	if err := s.bw.Flush(); err != nil {
		s.b.Fatal(err)
	}
	if err := s.f.Sync(); err != nil {
		s.b.Fatal(err)
	}
	if err := s.f.Truncate(0); err != nil {
		s.b.Fatal(err)
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		s.b.Fatal(err)
	}
	s.written = 0
}

func (s *bufioSink) close() {
	if err := s.bw.Flush(); err != nil {
		s.b.Fatal(err)
	}
	s.f.Close()
}

// BenchmarkRecordIOWrite is go-sstables' write table: one op appends one
// record of seeded random (incompressible) bytes, so compressed rows measure
// codec overhead. Sync rows make every record durable before the next.
func BenchmarkRecordIOWrite(b *testing.B) {
	rows := []struct {
		prefix string
		codec  recordio.Compression
		sync   bool
	}{
		{"", recordio.NoCompression, false},
		{"Gzip", recordio.GzipCompression, false},
		{"Snappy", recordio.SnappyCompression, false},
		{"Zstd", recordio.ZstdCompression, false},
		{"Sync", recordio.NoCompression, true},
	}
	for _, row := range rows {
		for _, rs := range recordSizes {
			b.Run(row.prefix+rs.name, func(b *testing.B) {
				record := benchdata.Bytes(rs.size, uint64(rs.size))
				sink := newRecordioSink(b, row.codec, row.sync)
				// One record outside the timer sizes the codec's buffers:
				// what follows is the steady state.
				sink.write(record)
				b.SetBytes(int64(rs.size))
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					sink.write(record)
					if sink.full() {
						b.StopTimer()
						sink.rotate()
						b.StartTimer()
					}
				}
				b.StopTimer()
				sink.close()
			})
		}
	}
}

// BenchmarkRecordIOWriteVsBufio measures uncompressed writes against the
// physical limit, the same bytes through bufio on an os.File, in
// alternating turns (see pair). x-baseline is the ratio the targets name.
func BenchmarkRecordIOWriteVsBufio(b *testing.B) {
	for _, sync := range []bool{false, true} {
		for _, rs := range recordSizes {
			name := rs.name
			turn := max(1, (8<<20)/rs.size)
			if sync {
				name, turn = "Sync"+name, 8
			}
			b.Run(name, func(b *testing.B) {
				record := benchdata.Bytes(rs.size, uint64(rs.size))
				ours, base := newRecordioSink(b, recordio.NoCompression, sync), newBufioSink(b, sync)
				ours.write(record)
				base.write(record)
				p := newPair(b, int64(rs.size))
				for done := 0; done < b.N; done += turn {
					n := min(turn, b.N-done)
					p.candidate(func() {
						for range n {
							ours.write(record)
						}
					})
					p.baseline(func() {
						for range n {
							base.write(record)
						}
					})
					if ours.full() || base.full() {
						ours.rotate()
						base.rotate()
					}
				}
				p.report()
				ours.close()
				base.close()
			})
		}
	}
}

// readRecordSize is go-sstables' RecordIORead record size.
const readRecordSize = 1024

// writeReadFile writes seeded 1 KiB records until the file reaches size and
// returns its path, length and record count.
func writeReadFile(b *testing.B, size int64) (string, int64, int) {
	b.Helper()
	path := filepath.Join(benchDir(b), "read.rio")
	w, err := recordio.Create(path, nil)
	if err != nil {
		b.Fatal(err)
	}
	record := benchdata.Bytes(readRecordSize, 1)
	n := 0
	for w.Size() < size {
		if _, err := w.Write(record); err != nil {
			b.Fatal(err)
		}
		n++
	}
	length := w.Size()
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return path, length, n
}

// scanRecordio reads every record of path and checks the count and the
// last record, so that no run can skip work.
func scanRecordio(b *testing.B, path string, records int, zeroCopy bool, want []byte) {
	r, err := recordio.Open(path, &recordio.ReaderOptions{ZeroCopy: zeroCopy})
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	var last []byte
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		last = rec
		n++
	}
	if n != records || !bytes.Equal(last, want) {
		b.Fatalf("read %d records, want %d", n, records)
	}
	r.Close()
}

// scanBufio reads path in 1 KiB pieces through a plain bufio.Reader of
// recordio's buffer size: the physical limit for scanRecordio.
func scanBufio(b *testing.B, path string, length int64, buf []byte) {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	br := bufio.NewReaderSize(f, recordio.DefaultBufferSize)
	var total int64
	for {
		n, err := io.ReadFull(br, buf)
		total += int64(n)
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	if total != length {
		b.Fatalf("read %d bytes, want %d", total, length)
	}
	f.Close()
}

// BenchmarkRecordIORead is go-sstables' read table: one op opens a file of
// 1 KiB records and reads every record, returning records the caller owns;
// ZeroCopy rows return records that alias the reader's buffer instead.
func BenchmarkRecordIORead(b *testing.B) {
	want := benchdata.Bytes(readRecordSize, 1)
	for _, zeroCopy := range []bool{false, true} {
		for _, fs := range fileSizes() {
			name := fs.name
			if zeroCopy {
				name = "ZeroCopy/" + name
			}
			b.Run(name, func(b *testing.B) {
				path, length, records := writeReadFile(b, fs.bytes)
				b.SetBytes(length)
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					scanRecordio(b, path, records, zeroCopy, want)
				}
			})
		}
	}
}

// BenchmarkRecordIOReadVsBufio measures scans against the physical limit,
// the same file read through bufio, in alternating turns (see pair).
func BenchmarkRecordIOReadVsBufio(b *testing.B) {
	want := benchdata.Bytes(readRecordSize, 1)
	for _, zeroCopy := range []bool{false, true} {
		for _, fs := range fileSizes()[:3] {
			b.Run(fmt.Sprintf("ZeroCopy=%v/%s", zeroCopy, fs.name), func(b *testing.B) {
				path, length, records := writeReadFile(b, fs.bytes)
				buf := make([]byte, readRecordSize)
				p := newPair(b, length)
				for range b.N {
					p.candidate(func() { scanRecordio(b, path, records, zeroCopy, want) })
					p.baseline(func() { scanBufio(b, path, length, buf) })
				}
				p.report()
			})
		}
	}
}
