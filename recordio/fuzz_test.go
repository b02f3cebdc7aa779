package recordio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// The record decoder fuzz targets, one per format version. Each builds a
// file from a codec number and the fuzzed bytes after the file header, and
// checks it with checkReadersAgree.
func FuzzRecordsV1(f *testing.F)     { fuzzRecords(f, VersionV1) }
func FuzzRecordsV2(f *testing.F)     { fuzzRecords(f, VersionV2) }
func FuzzRecordsV3(f *testing.F)     { fuzzRecords(f, VersionV3) }
func FuzzRecordsV4(f *testing.F)     { fuzzRecords(f, VersionV4) }
func FuzzRecordsStrata(f *testing.F) { fuzzRecords(f, VersionStrata) }

func fuzzRecords(f *testing.F, v Version) {
	for _, data := range goldenTestdata(f) {
		if len(data) >= FileHeaderSize && Version(binary.LittleEndian.Uint32(data)) == v {
			f.Add(data[4], data[FileHeaderSize:])
		}
	}
	f.Fuzz(func(t *testing.T, codec byte, body []byte) {
		file := append(goldenFileHeader(v, Codec(codec%5)), body...)
		checkReadersAgree(t, file)
	})
}

// FuzzFile reads the fuzzed bytes as a whole file, file header included,
// so that unknown versions and codecs reach the decoders too.
func FuzzFile(f *testing.F) {
	for _, data := range goldenTestdata(f) {
		f.Add(data)
	}
	f.Fuzz(checkReadersAgree)
}

// goldenTestdata returns the golden files by name: ours and go-sstables'.
func goldenTestdata(f *testing.F) map[string][]byte {
	names, err := filepath.Glob(filepath.Join("testdata", "*.rio"))
	if err != nil {
		f.Fatal(err)
	}
	theirs, err := filepath.Glob(filepath.Join(gosstablesDir, "v*_compat", "*"))
	if err != nil {
		f.Fatal(err)
	}
	names = append(names, theirs...)
	files := map[string][]byte{}
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		files[filepath.ToSlash(name)] = data
	}
	return files
}

// checkReadersAgree reads file with every reader: the sequential one
// through a small buffer (owning and zero-copy records) and in place as if
// mapped, and the random-access one through ReadAt and as if mapped, by
// offset and with the record's length. None may panic; all must agree on
// the file header, on every record and on where and what the damage is;
// the sequential reader must stay at damage until Resync, and
// resynchronisation must terminate.
func checkReadersAgree(t *testing.T, file []byte) {
	opts := ReaderOptions{MaxRecordSize: 1 << 20, BufferSize: 64}
	var randoms []*RandomReader
	var headerErr error
	for _, mapped := range []bool{false, true} {
		rr, err := NewRandomReader(bytes.NewReader(file), int64(len(file)), &opts)
		if headerErr = err; err != nil {
			break
		}
		if mapped {
			rr.mapped = file
		}
		randoms = append(randoms, rr)
	}
	sequential := map[string]func() (*Reader, error){
		"owning": func() (*Reader, error) { return NewReader(bytes.NewReader(file), &opts) },
		"zero-copy": func() (*Reader, error) {
			o := opts
			o.ZeroCopy = true
			return NewReader(bytes.NewReader(file), &o)
		},
		"mapped": func() (*Reader, error) { return newMappedReader(file, "", opts.withDefaults()) },
	}
	for mode, open := range sequential {
		r, err := open()
		if (err == nil) != (headerErr == nil) {
			t.Fatalf("%s: readers disagree on the file header: %v vs %v", mode, err, headerErr)
		}
		if err != nil {
			if !errors.Is(err, ErrCorruption) {
				t.Fatalf("%s: file header error is not corruption: %v", mode, err)
			}
			continue
		}
		for steps := 0; ; steps++ {
			if steps > len(file)+1 {
				t.Fatalf("%s: reader does not terminate", mode)
			}
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				var ce *CorruptionError
				if !errors.As(err, &ce) {
					t.Fatalf("%s: unexpected error kind: %v", mode, err)
				}
				if _, again := r.Next(); again == nil || again.Error() != err.Error() {
					t.Fatalf("%s: Next does not stay at the damage: %v, then %v", mode, err, again)
				}
				for _, rr := range randoms {
					_, rerr := rr.RecordAt(ce.Offset, nil)
					var rce *CorruptionError
					if !errors.As(rerr, &rce) || rce.Offset != ce.Offset || rce.Kind != ce.Kind {
						t.Fatalf("%s: readers disagree on damage: %v vs %v", mode, err, rerr)
					}
				}
				if _, err := r.Resync(); err == io.EOF {
					break
				} else if err != nil {
					t.Fatalf("%s: resync: %v", mode, err)
				}
				continue
			}
			off, length := r.Offset(), r.pos-r.Offset()
			for _, rr := range randoms {
				reads := map[string]func() ([]byte, error){
					"RecordAt": func() ([]byte, error) { return rr.RecordAt(off, nil) },
					"RecordView": func() ([]byte, error) {
						rec, _, err := rr.RecordView(off, nil)
						return rec, err
					},
					"RecordViewSized": func() ([]byte, error) {
						rec, _, err := rr.RecordViewSized(off, length, nil)
						return rec, err
					},
				}
				for name, read := range reads {
					got, err := read()
					if err != nil {
						t.Fatalf("%s, mapped=%v: fails at %d where the sequential reader read a record: %v", name, rr.mapped != nil, off, err)
					}
					if (rec == nil) != (got == nil) || !bytes.Equal(rec, got) {
						t.Fatalf("%s, mapped=%v: disagrees at offset %d", name, rr.mapped != nil, off)
					}
				}
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
			file, offsets := encodeFile(t, &WriterOptions{Version: fc.version, Compression: compressionFor(fc.codec)}, records)
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
