package sstables

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stratadb/strata/internal/testseed"
	"github.com/stratadb/strata/recordio"
	"github.com/stratadb/strata/vfs"
	"github.com/stretchr/testify/require"
)

// blobValues returns values of the sizes a blob file meets: empty, small,
// a page, past a page, large, compressible and not.
func blobValues(rng *rand.Rand) [][]byte {
	var values [][]byte
	for _, n := range []int{0, 1, 100, 1 << 10, 4 << 10, 4<<10 + 1, 16 << 10, 1 << 20} {
		random := make([]byte, n)
		for i := range random {
			random[i] = byte(rng.Uint32())
		}
		values = append(values, random, bytes.Repeat([]byte("abcd"), n/4))
	}
	return values
}

// writeBlob writes values to a blob file numbered num and returns their
// handles and the file's metadata.
func writeBlob(t *testing.T, path string, num uint64, opts *WriterOptions, values [][]byte) ([]BlobHandle, BlobMetadata) {
	t.Helper()
	w, err := NewBlobWriter(path, num, opts)
	require.NoError(t, err)
	handles := make([]BlobHandle, len(values))
	for i, v := range values {
		handles[i], err = w.Add(v)
		require.NoError(t, err)
		require.Equal(t, num, handles[i].FileNum)
		require.Equal(t, uint64(len(v)), handles[i].ValueLen)
	}
	require.NoError(t, w.Close())
	return handles, w.Metadata()
}

func TestBlobRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(testseed.Seed(t), 0))
	values := blobValues(rng)
	for _, tc := range []struct {
		name   string
		wopts  *WriterOptions
		ropts  *ReaderOptions
		reread int // how many times each value is read
	}{
		{"defaults", nil, nil, 1},
		{"uncompressed, not mapped", &WriterOptions{Compression: NoCompression}, &ReaderOptions{NoMmap: true}, 1},
		{"zstd, cached", &WriterOptions{Compression: ZstdCompression}, &ReaderOptions{Cache: NewCache(8 << 20), CacheID: 7}, 2},
		{"mapped, cached", nil, &ReaderOptions{Cache: NewCache(8 << 20)}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "000007.blob")
			if tc.wopts != nil {
				tc.wopts.ID = 0xfeed
			}
			handles, meta := writeBlob(t, path, 7, tc.wopts, values)
			var total uint64
			for _, v := range values {
				total += uint64(len(v))
			}
			require.Equal(t, uint64(len(values)), meta.Values)
			require.Equal(t, total, meta.ValueBytes)

			r, err := OpenBlob(path, tc.ropts)
			require.NoError(t, err)
			defer r.Close()
			require.Equal(t, meta, r.Metadata())
			require.NoError(t, r.Verify())
			var scratch []byte
			for range tc.reread {
				for i, h := range handles {
					var got []byte
					require.NoError(t, r.Value(h, &scratch, true, func(v []byte) { got = append([]byte{}, v...) }))
					require.Equal(t, values[i], got, "value %d", i)
				}
			}
		})
	}
}

// TestBlobCompressionBackoff writes runs of values that compress and
// values that do not: after a run that does not, the writer stores values
// untried for a while, at most maxCompressionBackoff, then compresses
// every value that compresses again; all of them read back.
func TestBlobCompressionBackoff(t *testing.T) {
	rng := rand.New(rand.NewPCG(testseed.Seed(t), 0))
	random := func() []byte {
		v := make([]byte, 1<<10)
		for i := range v {
			v[i] = byte(rng.Uint32())
		}
		return v
	}
	compressible := func() []byte { return bytes.Repeat([]byte("abcd"), 1<<8) }
	for _, tc := range []struct {
		name           string
		randoms, after int
		// untried is how many compressible values after the randoms are
		// stored as they are: the rest of the backoff.
		untried int
	}{
		{"compressible alone", 0, 100, 0},
		{"one that does not compress", 1, 100, 1},
		{"a few that do not", 6, 100, 4},
		{"many that do not", 300, 100, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var values [][]byte
			for range tc.randoms {
				values = append(values, random())
			}
			for range tc.after {
				values = append(values, compressible())
			}
			path := filepath.Join(t.TempDir(), "000007.blob")
			handles, _ := writeBlob(t, path, 7, nil, values)
			stored := make([]bool, len(handles)) // compressed
			for i, h := range handles {
				stored[i] = h.Length < h.ValueLen
			}
			require.NotContains(t, stored[:tc.randoms], true)
			tail := stored[tc.randoms:]
			first := slices.Index(tail, true)
			require.GreaterOrEqual(t, first, 0, "compression never resumed")
			require.LessOrEqual(t, first, maxCompressionBackoff)
			if tc.name != "many that do not" {
				require.Equal(t, tc.untried, first)
			} else {
				require.Positive(t, first, "the writer tried a value while it backed off")
			}
			require.NotContains(t, tail[first:], false, "a compressible value stored as it is once compression resumed")

			r, err := OpenBlob(path, nil)
			require.NoError(t, err)
			defer r.Close()
			var scratch []byte
			for i, h := range handles {
				require.NoError(t, r.Value(h, &scratch, false, func(v []byte) { require.Equal(t, values[i], v, "value %d", i) }))
			}
		})
	}
}

func TestBlobHandleRoundTrip(t *testing.T) {
	for _, h := range []BlobHandle{
		{FileNum: 1, Offset: 8, Length: 14, ValueLen: 0},
		{FileNum: 1 << 40, Offset: 1 << 33, Length: 1 << 20, ValueLen: 1<<20 - 14},
	} {
		got, err := DecodeBlobHandle(AppendBlobHandle(nil, h))
		require.NoError(t, err)
		require.Equal(t, h, got)
	}
	for _, bad := range [][]byte{nil, {1, 8, 14}, {1, 8, 0, 0}, append(AppendBlobHandle(nil, BlobHandle{FileNum: 1, Offset: 8, Length: 14}), 0), {0xff}} {
		_, err := DecodeBlobHandle(bad)
		require.Error(t, err, "% x", bad)
	}
}

// Damage to a blob file, or a handle that does not fit it, is an error
// matching ErrCorruption that names the file and the offset: never a
// wrong value.
func TestBlobDamage(t *testing.T) {
	rng := rand.New(rand.NewPCG(testseed.Seed(t), 0))
	values := blobValues(rng)
	dir := t.TempDir()
	path := filepath.Join(dir, "000009.blob")
	handles, meta := writeBlob(t, path, 9, &WriterOptions{Compression: NoCompression}, values)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	open := func(t *testing.T, damaged []byte) (*BlobReader, error) {
		p := filepath.Join(t.TempDir(), "000009.blob")
		require.NoError(t, os.WriteFile(p, damaged, 0o644))
		return OpenBlob(p, &ReaderOptions{NoMmap: true})
	}
	big := handles[len(handles)-2] // the 1 MiB random value

	t.Run("a flipped bit in a value", func(t *testing.T) {
		damaged := bytes.Clone(data)
		damaged[big.Offset+big.Length-100] ^= 1
		r, err := open(t, damaged)
		require.NoError(t, err)
		defer r.Close()
		var scratch []byte
		err = r.Value(big, &scratch, false, func([]byte) { t.Fatal("a damaged value was used") })
		require.ErrorIs(t, err, ErrCorruption)
		require.ErrorIs(t, err, recordio.ErrPayloadChecksum)
		require.ErrorContains(t, err, "000009.blob")
		require.ErrorIs(t, r.Verify(), ErrCorruption)
	})
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"cut", data[:len(data)-1]},
		{"cut to the header", data[:recordio.FileHeaderSize]},
		{"a flipped bit in the trailer", func() []byte { d := bytes.Clone(data); d[len(d)-10] ^= 1; return d }()},
		{"zeros for a trailer", func() []byte { d := bytes.Clone(data); clear(d[len(d)-blobTrailerRecordSize:]); return d }()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := open(t, tc.data)
			require.ErrorIs(t, err, ErrCorruption)
			require.ErrorContains(t, err, "000009.blob")
		})
	}
	t.Run("a trailer that counts other values", func(t *testing.T) {
		d := bytes.Clone(data)
		trailerOff := len(d) - blobTrailerRecordSize
		m := meta
		m.Values++
		copy(d[trailerOff:], appendTrailerRecord(t, m))
		r, err := open(t, d)
		require.NoError(t, err)
		defer r.Close()
		require.ErrorIs(t, r.Verify(), ErrBadBlob)
	})
	t.Run("handles that do not fit", func(t *testing.T) {
		r, err := open(t, data)
		require.NoError(t, err)
		defer r.Close()
		h := handles[3]
		for _, bad := range []BlobHandle{
			{FileNum: 8, Offset: h.Offset, Length: h.Length, ValueLen: h.ValueLen},
			{FileNum: 9, Offset: 0, Length: h.Length, ValueLen: h.ValueLen},
			{FileNum: 9, Offset: meta.FileSize - 10, Length: 5, ValueLen: 1},
			{FileNum: 9, Offset: h.Offset, Length: h.Length, ValueLen: h.ValueLen + 1},
			{FileNum: 9, Offset: h.Offset + 1, Length: h.Length, ValueLen: h.ValueLen},
			{FileNum: 9, Offset: h.Offset, Length: h.Length + 1, ValueLen: h.ValueLen},
		} {
			var scratch []byte
			err := r.Value(bad, &scratch, false, func([]byte) { t.Fatalf("handle %+v read a value", bad) })
			require.ErrorIs(t, err, ErrCorruption, "%+v", bad)
			require.ErrorContains(t, err, "000009.blob")
		}
	})
}

// appendTrailerRecord encodes m's trailer as the writer frames it.
func appendTrailerRecord(t *testing.T, m BlobMetadata) []byte {
	path := filepath.Join(t.TempDir(), "trailer")
	w, err := recordio.Create(path, nil)
	require.NoError(t, err)
	_, err = w.WriteUncompressed(m.trailer())
	require.NoError(t, err)
	require.NoError(t, w.Close())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	rec := data[recordio.FileHeaderSize:]
	require.Len(t, rec, blobTrailerRecordSize)
	return rec
}

func TestBlobWriterIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "000003.blob")
	w, err := NewBlobWriter(path, 3, nil)
	require.NoError(t, err)
	_, err = w.Add([]byte("value"))
	require.NoError(t, err)
	_, err = vfs.Default.Stat(path)
	require.Error(t, err, "the file has its name before Close")
	require.NoError(t, w.Abort())
	names, err := vfs.Default.List(dir)
	require.NoError(t, err)
	require.Empty(t, names)
	_, err = w.Add([]byte("v"))
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, w.Close(), ErrClosed)
}
