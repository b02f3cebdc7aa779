package recordio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/stratadb/strata/internal/testseed"
	"github.com/stretchr/testify/require"
)

// readAll reads data as a file with the sequential reader and returns the
// records before the first error, and that error (io.EOF at a clean end).
func readAll(t *testing.T, data []byte, opts *ReaderOptions) ([][]byte, error) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(data), opts)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for {
		rec, err := r.Next()
		if err != nil {
			return out, err
		}
		out = append(out, rec)
	}
}

// Flipping any bit of a Strata file is detected: the reader returns every
// record before the damaged one intact, then a corruption error at the
// damaged record's offset. It never panics and never returns a wrong record.
func TestEveryBitFlipIsDetected(t *testing.T) {
	records := [][]byte{[]byte("first"), nil, {}, bytes.Repeat([]byte("zz"), 100), seededBytes(50, 9)}
	for _, codec := range []Codec{CodecNone, CodecSnappy, CodecGzip, CodecZstd} {
		data, offsets := encodeFile(t, &WriterOptions{Compression: compressionFor(codec)}, records)
		for pos := FileHeaderSize; pos < len(data); pos++ {
			for _, bit := range []byte{0x01, 0x80} {
				damaged := bytes.Clone(data)
				damaged[pos] ^= bit
				got, err := readAll(t, damaged, nil)
				// The damaged record is the last one starting at or before pos.
				victim := 0
				for i, off := range offsets {
					if int64(pos) >= off {
						victim = i
					}
				}
				msg := fmt.Sprintf("%v: flip %#x at %d", codec, bit, pos)
				require.ErrorIs(t, err, ErrCorruption, msg)
				var ce *CorruptionError
				require.ErrorAs(t, err, &ce, msg)
				require.Equal(t, offsets[victim], ce.Offset, msg)
				require.Len(t, got, victim, msg)
				for i := range got {
					requireSameRecord(t, records[i], got[i], msg)
				}
			}
		}
	}
}

// Truncating a file anywhere gives the whole records before the cut and
// then either a clean end (a cut at a record boundary) or a truncation error.
func TestEveryTruncationIsDetected(t *testing.T) {
	records := [][]byte{[]byte("first"), nil, {}, bytes.Repeat([]byte("zz"), 100), seededBytes(50, 9)}
	for _, fc := range writableFormats() {
		data, offsets := encodeFile(t, &WriterOptions{Version: fc.version, Compression: compressionFor(fc.codec)}, records)
		offsets = append(offsets, int64(len(data)))
		for cut := 0; cut < len(data); cut++ {
			msg := fmt.Sprintf("%v %v: cut at %d", fc.version, fc.codec, cut)
			got, err := readAll(t, data[:cut], nil)
			if cut < FileHeaderSize {
				require.ErrorIs(t, err, ErrTruncatedHeader, msg)
				continue
			}
			complete := 0
			for complete+1 < len(offsets) && offsets[complete+1] <= int64(cut) {
				complete++
			}
			require.Len(t, got, complete, msg)
			if int64(cut) == offsets[complete] {
				require.Equal(t, io.EOF, err, msg)
				continue
			}
			require.True(t, errors.Is(err, ErrTruncatedHeader) || errors.Is(err, ErrTruncatedPayload), "%s: %v", msg, err)
		}
	}
}

// hiddenSize hides the Stat method, so the reader cannot know the file's
// length and must guard against huge length claims by other means.
type hiddenSize struct{ io.Reader }

// A header claiming a huge payload must not make the reader allocate it.
func TestHugeLengthClaimsDoNotAllocate(t *testing.T) {
	header := appendStrataHeader(nil, 0, 900<<20, 900<<20, 0)
	data := append(goldenFileHeader(VersionStrata, CodecNone), header...)
	data = append(data, []byte("only a few bytes follow")...)
	path := filepath.Join(t.TempDir(), "huge.rio")
	require.NoError(t, os.WriteFile(path, data, 0o644))

	for name, open := range map[string]func() (*Reader, error){
		"file": func() (*Reader, error) { return Open(path, nil) },
		"stream": func() (*Reader, error) {
			return NewReader(hiddenSize{bytes.NewReader(data)}, &ReaderOptions{BufferSize: 64})
		},
	} {
		r, err := open()
		require.NoError(t, err)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err = r.Next()
		runtime.ReadMemStats(&after)
		require.ErrorIs(t, err, ErrTruncatedPayload, name)
		require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), name)
	}

	// Beyond MaxRecordSize, the claim is rejected outright.
	_, err := readAll(t, data, &ReaderOptions{MaxRecordSize: 1 << 20})
	require.ErrorIs(t, err, ErrRecordTooLarge)
	rr, err := NewRandomReader(bytes.NewReader(data), int64(len(data)), nil)
	require.NoError(t, err)
	_, err = rr.RecordAt(FileHeaderSize, nil)
	require.ErrorIs(t, err, ErrTruncatedPayload)
}

// Resync finds every intact record after random damage: damage one record
// in the middle of many, and every other record is still recovered.
func TestResyncRecoversEverythingElse(t *testing.T) {
	seed := testseed.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 0))
	var records [][]byte
	for i := range 200 {
		records = append(records, bytes.Repeat([]byte{byte(i)}, rng.IntN(300)))
	}
	for _, codec := range []Codec{CodecNone, CodecSnappy} {
		data, offsets := encodeFile(t, &WriterOptions{Compression: compressionFor(codec)}, records)
		for range 50 {
			victim := 1 + rng.IntN(len(records)-2)
			damaged := bytes.Clone(data)
			end := int64(len(data))
			if victim+1 < len(offsets) {
				end = offsets[victim+1]
			}
			damaged[offsets[victim]+rng.Int64N(end-offsets[victim])] ^= byte(1 + rng.IntN(255))

			r, err := NewReader(bytes.NewReader(damaged), &ReaderOptions{BufferSize: 256})
			require.NoError(t, err, "seed %d", seed)
			var got [][]byte
			for {
				rec, err := r.Next()
				if err == io.EOF {
					break
				}
				if errors.Is(err, ErrCorruption) {
					_, err = r.Resync()
					if err == io.EOF {
						break
					}
					require.NoError(t, err, "seed %d", seed)
					continue
				}
				require.NoError(t, err, "seed %d", seed)
				got = append(got, rec)
			}
			want := append(append([][]byte{}, records[:victim]...), records[victim+1:]...)
			require.Equal(t, len(want), len(got), "seed %d victim %d", seed, victim)
			for i := range want {
				requireSameRecord(t, want[i], got[i], "seed %d victim %d record %d", seed, victim, i)
			}
		}
	}
}

// RandomReader is safe for concurrent use: many goroutines read random
// offsets of a compressed file while checking every record (run with -race).
func TestRandomReaderConcurrent(t *testing.T) {
	var records [][]byte
	for i := range 500 {
		records = append(records, bytes.Repeat([]byte(fmt.Sprintf("record-%d;", i)), 1+i%40))
	}
	for _, codec := range []Codec{CodecGzip, CodecZstd, CodecSnappy, CodecNone} {
		path := filepath.Join(t.TempDir(), "f.rio")
		offsets := writeFile(t, path, &WriterOptions{Compression: compressionFor(codec)}, records)
		rr, err := OpenRandom(path, nil)
		require.NoError(t, err)
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for g := range 8 {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(g), 1))
				var buf []byte
				for range 2000 {
					i := rng.IntN(len(records))
					got, err := rr.RecordAt(offsets[i], buf)
					if err != nil {
						errs <- err
						return
					}
					if !bytes.Equal(got, records[i]) {
						errs <- fmt.Errorf("%v: record %d differs", codec, i)
						return
					}
					buf = got[:0]
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		require.NoError(t, rr.Close())
	}
}

func TestRandomReaderBadOffsets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.rio")
	offsets := writeFile(t, path, nil, [][]byte{[]byte("abc"), []byte("def")})
	rr, err := OpenRandom(path, nil)
	require.NoError(t, err)
	defer rr.Close()

	_, err = rr.RecordAt(3, nil)
	require.ErrorIs(t, err, ErrInvalidOffset)
	_, err = rr.RecordAt(rr.Size(), nil)
	require.Equal(t, io.EOF, err)
	// An offset in the middle of a record is not a record.
	_, err = rr.RecordAt(offsets[0]+1, nil)
	require.ErrorIs(t, err, ErrBadMagic)
}

func TestFirstNonZero(t *testing.T) {
	for _, tc := range []struct {
		b    []byte
		want int
	}{
		{nil, -1},
		{make([]byte, 7), -1},
		{make([]byte, 64), -1},
		{[]byte{1}, 0},
		{append(make([]byte, 7), 1), 7},
		{append(make([]byte, 8), 0, 0, 3), 10},
		{append(make([]byte, 61), 0x80, 1, 1), 61},
	} {
		require.Equal(t, tc.want, firstNonZero(tc.b), "%x", tc.b)
	}
}

// readAtCounter counts the ReadAt calls a RandomReader makes on a file.
type readAtCounter struct {
	*bytes.Reader
	rr    *RandomReader
	calls int
}

func (c *readAtCounter) ReadAt(p []byte, off int64) (int, error) {
	c.calls++
	return c.Reader.ReadAt(p, off)
}

// A random read at zero padding scans it in large chunks, not a header's
// worth at a time.
func TestRandomReaderScansPaddingInChunks(t *testing.T) {
	data, _ := encodeFile(t, nil, [][]byte{[]byte("record")})
	end := int64(len(data))
	data = append(data, make([]byte, 1<<20)...)
	ra := &readAtCounter{Reader: bytes.NewReader(data)}
	rr, err := NewRandomReader(ra, int64(len(data)), nil)
	require.NoError(t, err)
	ra.calls = 0
	_, err = rr.RecordAt(end, nil)
	require.Equal(t, io.EOF, err)
	require.LessOrEqual(t, ra.calls, 1+(1<<20)/zeroScanChunk+1)
}

// Zero bytes where a record should start are padding if only zeros follow
// and damage otherwise. Every reader, whatever its buffer size, reports
// the damage at the start of the run; the sequential reader stays there
// until Resync, which finds a record after the run.
func TestZeroRun(t *testing.T) {
	data, _ := encodeFile(t, nil, [][]byte{[]byte("before")})
	runStart := int64(len(data))
	data = append(data, make([]byte, 300)...)
	after := int64(len(data))
	valid, _ := encodeFile(t, nil, [][]byte{[]byte("after")})
	for _, tc := range []struct {
		name     string
		tail     []byte
		wantErr  error // nil: a clean end
		resyncTo int64 // -1: io.EOF
	}{
		{"padding", nil, nil, -1},
		{"then garbage", []byte{0x01}, ErrBadMagic, -1},
		{"then a record", valid[FileHeaderSize:], ErrBadMagic, after},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := append(bytes.Clone(data), tc.tail...)
			sequential := map[string]func() (*Reader, error){
				"buffer 64": func() (*Reader, error) {
					return NewReader(bytes.NewReader(file), &ReaderOptions{BufferSize: 64})
				},
				"default buffer": func() (*Reader, error) { return NewReader(bytes.NewReader(file), nil) },
				"mapped":         func() (*Reader, error) { return newMappedReader(file, "", (&ReaderOptions{}).withDefaults()) },
			}
			var errs []string
			for name, open := range sequential {
				r, err := open()
				require.NoError(t, err, name)
				_, err = r.Next()
				require.NoError(t, err, name)
				_, err = r.Next()
				if tc.wantErr == nil {
					require.Equal(t, io.EOF, err, name)
					continue
				}
				requireCorruption(t, err, tc.wantErr, runStart)
				_, again := r.Next()
				require.Equal(t, err.Error(), again.Error(), "%s: Next stays at the damage", name)
				errs = append(errs, err.Error())

				off, err := r.Resync()
				if tc.resyncTo < 0 {
					require.Equal(t, io.EOF, err, name)
					continue
				}
				require.NoError(t, err, name)
				require.Equal(t, tc.resyncTo, off, name)
				rec, err := r.Next()
				require.NoError(t, err, name)
				require.Equal(t, "after", string(rec), name)
			}

			for _, mapped := range []bool{false, true} {
				rr, err := NewRandomReader(bytes.NewReader(file), int64(len(file)), nil)
				require.NoError(t, err)
				if mapped {
					rr.mapped = file
				}
				_, err = rr.RecordAt(runStart, nil)
				if tc.wantErr == nil {
					require.Equal(t, io.EOF, err)
					continue
				}
				requireCorruption(t, err, tc.wantErr, runStart)
				errs = append(errs, err.Error())
			}
			for _, e := range errs {
				require.Equal(t, errs[0], e, "readers agree on the damage")
			}
		})
	}
}

func TestNewRandomReaderSizes(t *testing.T) {
	file, _ := encodeFile(t, nil, [][]byte{[]byte("abc")})
	for _, tc := range []struct {
		name string
		size int64
		want error // nil: any error that is not corruption
	}{
		{"negative", -1, nil},
		{"empty", 0, ErrTruncatedHeader},
		{"inside the file header", 5, ErrTruncatedHeader},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rr, err := NewRandomReader(bytes.NewReader(file), tc.size, nil)
			require.Error(t, err)
			require.Nil(t, rr)
			if tc.want == nil {
				require.NotErrorIs(t, err, ErrCorruption)
			} else {
				require.ErrorIs(t, err, tc.want)
			}
		})
	}
}
