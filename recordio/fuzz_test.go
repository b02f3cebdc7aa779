package recordio

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The record decoder fuzz targets, one per format version. Each builds a
// file from a codec number and the fuzzed bytes after the file header, and
// checks that reading it never panics, that the sequential reader (in both
// modes) and the random-access reader agree on every record, and that
// resynchronisation always terminates.
func FuzzRecordsV1(f *testing.F)     { fuzzRecords(f, VersionV1) }
func FuzzRecordsV2(f *testing.F)     { fuzzRecords(f, VersionV2) }
func FuzzRecordsV3(f *testing.F)     { fuzzRecords(f, VersionV3) }
func FuzzRecordsV4(f *testing.F)     { fuzzRecords(f, VersionV4) }
func FuzzRecordsStrata(f *testing.F) { fuzzRecords(f, VersionStrata) }

func fuzzRecords(f *testing.F, v Version) {
	names, err := filepath.Glob(filepath.Join("testdata", "*.rio"))
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range names {
		if !strings.HasPrefix(filepath.Base(name), v.String()+"_") {
			continue
		}
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		if len(data) >= FileHeaderSize {
			f.Add(data[4], data[FileHeaderSize:])
		}
	}
	f.Fuzz(func(t *testing.T, codec byte, body []byte) {
		file := append(goldenFileHeader(v, Codec(codec%5)), body...)
		checkReadersAgree(t, file)
	})
}

func checkReadersAgree(t *testing.T, file []byte) {
	opts := &ReaderOptions{MaxRecordSize: 1 << 20, BufferSize: 64}
	rr, rerr := NewRandomReader(bytes.NewReader(file), int64(len(file)), opts)
	for _, zeroCopy := range []bool{false, true} {
		o := *opts
		o.ZeroCopy = zeroCopy
		r, err := NewReader(bytes.NewReader(file), &o)
		if (err == nil) != (rerr == nil) {
			t.Fatalf("readers disagree on the file header: %v vs %v", err, rerr)
		}
		if err != nil {
			if !errors.Is(err, ErrCorruption) {
				t.Fatalf("file header error is not corruption: %v", err)
			}
			return
		}
		for steps := 0; ; steps++ {
			if steps > len(file)+1 {
				t.Fatalf("reader does not terminate")
			}
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				if !errors.Is(err, ErrCorruption) {
					t.Fatalf("unexpected error kind: %v", err)
				}
				if _, err := r.Resync(); err == io.EOF {
					break
				} else if err != nil {
					t.Fatalf("resync: %v", err)
				}
				continue
			}
			got, err := rr.RecordAt(r.Offset(), nil)
			if err != nil {
				t.Fatalf("random reader fails at %d where the sequential reader read a record: %v", r.Offset(), err)
			}
			if (rec == nil) != (got == nil) || !bytes.Equal(rec, got) {
				t.Fatalf("readers disagree at offset %d", r.Offset())
			}
		}
	}
}

// FuzzRoundTrip writes records cut from the fuzzed bytes with every
// writable format and codec, and reads them back unchanged.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte("hello\x00\x00world"), byte(3))
	f.Add(bytes.Repeat([]byte("ab"), 500), byte(0))
	f.Fuzz(func(t *testing.T, data []byte, sep byte) {
		var records [][]byte
		for i, part := range bytes.Split(data, []byte{sep}) {
			if i%3 == 2 && len(part) == 0 {
				part = nil
			}
			records = append(records, part)
		}
		for _, fc := range writableFormats() {
			file, offsets := encodeFile(t, &WriterOptions{Version: fc.version, Codec: fc.codec}, records)
			r, err := NewReader(bytes.NewReader(file), nil)
			if err != nil {
				t.Fatal(err)
			}
			rr, err := NewRandomReader(bytes.NewReader(file), int64(len(file)), nil)
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range records {
				got, err := r.Next()
				if err != nil || (want == nil) != (got == nil) || !bytes.Equal(want, got) {
					t.Fatalf("%v %v record %d: %q, %v; want %q", fc.version, fc.codec, i, got, err, want)
				}
				got, err = rr.RecordAt(offsets[i], nil)
				if err != nil || (want == nil) != (got == nil) || !bytes.Equal(want, got) {
					t.Fatalf("%v %v random record %d: %q, %v; want %q", fc.version, fc.codec, i, got, err, want)
				}
			}
			if _, err := r.Next(); err != io.EOF {
				t.Fatalf("want io.EOF, got %v", err)
			}
		}
	})
}
