package recordio

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// go-sstables' own golden files live in testdata/gosstables, copied from its
// recordio/test_files at v1.7.0, beside expected.json: what go-sstables'
// FileReader (ReadNext) and MMapReader (ReadNextAt) return for each of them,
// recorded by running those readers (see the README there). Strata must read
// every one of them as go-sstables does: the same records at the same
// offsets, nil and empty alike, stopping at the same offset.
const gosstablesDir = "testdata/gosstables"

type gosstablesExpectations struct {
	Files []gosstablesFile `json:"files"`
}

type gosstablesFile struct {
	Path    string             `json:"path"`
	Size    int64              `json:"size"`
	Records []gosstablesRecord `json:"records"`
	// FileReader and MMapReader say where each go-sstables reader stopped.
	// The MMapReader is driven to the offsets the FileReader read records
	// at, and returns the same records there.
	FileReader gosstablesEnd `json:"file_reader"`
	MMapReader gosstablesEnd `json:"mmap_reader"`
}

// gosstablesRecord is one record go-sstables returned: nil, or its bytes in
// hex, or for a long record its length and SHA-256.
type gosstablesRecord struct {
	Offset int64   `json:"offset"`
	Nil    bool    `json:"nil"`
	Hex    *string `json:"hex"`
	Len    int     `json:"len"`
	SHA256 string  `json:"sha256"`
}

// gosstablesEnd is how a go-sstables reader stopped: it could not open the
// file, or the read at Offset failed with Error, which matched io.EOF or not.
type gosstablesEnd struct {
	OpenError string `json:"open_error"`
	Offset    int64  `json:"offset"`
	EOF       bool   `json:"eof"`
	Error     string `json:"error"`
}

// gosstablesErrorKinds maps go-sstables' error messages to the kind of
// damage Strata reports for the same bytes.
var gosstablesErrorKinds = []struct {
	text string
	kind error
}{
	{"version mismatch", ErrUnknownVersion},
	{"unknown compression type", ErrUnknownCodec},
	{"magic number mismatch", ErrBadMagic},
	{"header checksum mismatch", ErrHeaderChecksum},
	{"decompressing record", ErrBadPayload},
}

func gosstablesKind(t *testing.T, msg string) error {
	t.Helper()
	for _, k := range gosstablesErrorKinds {
		if strings.Contains(msg, k.text) {
			return k.kind
		}
	}
	t.Fatalf("no Strata kind for go-sstables error %q", msg)
	return nil
}

// outcome returns what a Strata reader must do where a go-sstables reader
// stopped: end cleanly (kind nil) or report damage of kind at the offset.
//
// go-sstables ends with io.EOF at the end of the file and, in its
// FileReader, where only zero padding follows. Its MMapReader reports such
// padding as a magic number mismatch; Strata's RandomReader, like every
// Strata reader, ends cleanly there. An io.EOF anywhere else is a decoder's
// io.EOF that go-sstables wraps (gzip on an empty payload): damage for
// Strata, which keeps io.EOF for the end of the file.
func (e gosstablesEnd) outcome(t *testing.T, data []byte) error {
	t.Helper()
	if e.OpenError != "" {
		return gosstablesKind(t, e.OpenError)
	}
	onlyZeros := firstNonZero(data[e.Offset:]) < 0
	if e.EOF && onlyZeros {
		return nil
	}
	kind := gosstablesKind(t, e.Error)
	if kind == ErrBadMagic && onlyZeros {
		return nil
	}
	return kind
}

func (g gosstablesRecord) require(t *testing.T, got []byte, msgAndArgs ...any) {
	t.Helper()
	if g.Nil {
		require.Nil(t, got, msgAndArgs...)
		return
	}
	require.NotNil(t, got, msgAndArgs...)
	if g.Hex != nil {
		require.Equal(t, *g.Hex, hex.EncodeToString(got), msgAndArgs...)
		return
	}
	require.Len(t, got, g.Len, msgAndArgs...)
	sum := sha256.Sum256(got)
	require.Equal(t, g.SHA256, hex.EncodeToString(sum[:]), msgAndArgs...)
}

func loadGosstablesExpectations(t *testing.T) []gosstablesFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(gosstablesDir, "expected.json"))
	require.NoError(t, err)
	var exp gosstablesExpectations
	require.NoError(t, json.Unmarshal(b, &exp))
	require.NotEmpty(t, exp.Files)
	return exp.Files
}

// Every file go-sstables ships is covered, and nothing else.
func TestGosstablesGoldenFilesAllExpected(t *testing.T) {
	want := map[string]int64{}
	for _, f := range loadGosstablesExpectations(t) {
		want[f.Path] = f.Size
	}
	got := map[string]int64{}
	err := filepath.WalkDir(gosstablesDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(gosstablesDir, p)
		if err != nil || rel == "README.md" || rel == "expected.json" {
			return err
		}
		info, err := d.Info()
		got[filepath.ToSlash(rel)] = info.Size()
		return err
	})
	require.NoError(t, err)
	require.Equal(t, want, got)
}

func TestGosstablesGoldenFiles(t *testing.T) {
	sequential := append(readerModes(),
		ReaderOptions{NoMmap: true, BufferSize: 16},
		ReaderOptions{NoMmap: true, BufferSize: 16, ZeroCopy: true},
	)
	for _, f := range loadGosstablesExpectations(t) {
		t.Run(f.Path, func(t *testing.T) {
			path := filepath.Join(gosstablesDir, filepath.FromSlash(f.Path))
			data, err := os.ReadFile(path)
			require.NoError(t, err)

			end := f.FileReader.outcome(t, data)
			for _, ro := range sequential {
				r, err := Open(path, &ro)
				if f.FileReader.OpenError != "" {
					requireCorruption(t, err, end, 0)
					continue
				}
				require.NoError(t, err)
				for i, want := range f.Records {
					got, err := r.Next()
					require.NoError(t, err, "record %d, %+v", i, ro)
					want.require(t, got, "record %d, %+v", i, ro)
					require.Equal(t, want.Offset, r.Offset())
				}
				_, err = r.Next()
				if end == nil {
					require.Equal(t, io.EOF, err, "%+v", ro)
				} else {
					requireCorruption(t, err, end, f.FileReader.Offset)
				}
				require.NoError(t, r.Close())
			}

			end = f.MMapReader.outcome(t, data)
			for _, noMmap := range []bool{false, true} {
				rr, err := OpenRandom(path, &ReaderOptions{NoMmap: noMmap})
				if f.MMapReader.OpenError != "" {
					requireCorruption(t, err, end, 0)
					continue
				}
				require.NoError(t, err)
				for i, want := range f.Records {
					next := f.MMapReader.Offset
					if i+1 < len(f.Records) {
						next = f.Records[i+1].Offset
					}
					got, err := rr.RecordAt(want.Offset, nil)
					require.NoError(t, err, "record %d", i)
					want.require(t, got, "RecordAt, record %d, noMmap %v", i, noMmap)
					got, err = rr.RecordAt(want.Offset, make([]byte, 0, 8))
					require.NoError(t, err, "record %d", i)
					want.require(t, got, "RecordAt with a buffer, record %d, noMmap %v", i, noMmap)
					got, _, err = rr.RecordView(want.Offset, nil)
					require.NoError(t, err, "record %d", i)
					want.require(t, got, "RecordView, record %d, noMmap %v", i, noMmap)
					got, _, err = rr.RecordViewSized(want.Offset, next-want.Offset, nil)
					require.NoError(t, err, "record %d", i)
					want.require(t, got, "RecordViewSized, record %d, noMmap %v", i, noMmap)
				}
				_, err = rr.RecordAt(f.MMapReader.Offset, nil)
				if end == nil {
					require.Equal(t, io.EOF, err)
				} else {
					requireCorruption(t, err, end, f.MMapReader.Offset)
				}
				require.NoError(t, rr.Close())
			}
		})
	}
}
