package sstables

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stratadb/strata/internal/testseed"
	"github.com/stretchr/testify/require"
)

// blobFiles is a BlobSource over the blob files of a directory, counting
// the values read.
type blobFiles struct {
	dir   string
	cache *Cache
	files map[uint64]*BlobReader
	reads int
}

func newBlobFiles(t *testing.T, dir string, cache *Cache) *blobFiles {
	b := &blobFiles{dir: dir, cache: cache, files: map[uint64]*BlobReader{}}
	t.Cleanup(func() {
		for _, r := range b.files {
			r.Close()
		}
	})
	return b
}

func (b *blobFiles) path(num uint64) string {
	return filepath.Join(b.dir, fmt.Sprintf("%06d.blob", num))
}

func (b *blobFiles) create(t *testing.T, num uint64) *BlobWriter {
	w, err := NewBlobWriter(b.path(num), num, nil)
	require.NoError(t, err)
	return w
}

func (b *blobFiles) open(t *testing.T, num uint64) {
	r, err := OpenBlob(b.path(num), &ReaderOptions{Cache: b.cache, CacheID: num})
	require.NoError(t, err)
	b.files[num] = r
}

func (b *blobFiles) Blob(num uint64) (*BlobReader, error) {
	r, ok := b.files[num]
	if !ok {
		return nil, fmt.Errorf("no blob file %d", num)
	}
	b.reads++
	return r, nil
}

func (b *blobFiles) ReleaseBlob(*BlobReader) {}

// blobTable writes es to a table whose values of 64 bytes or more lie in
// blob file 5, and opens both.
func blobTable(t *testing.T, es []entry) (*Reader, *blobFiles, Metadata) {
	dir := t.TempDir()
	blobs := newBlobFiles(t, dir, nil)
	w := blobs.create(t, 5)
	meta := writeTable(t, filepath.Join(dir, "t.sst"), &WriterOptions{Blobs: func() (*BlobWriter, error) { return w, nil }, BlobThreshold: 64, BlockSize: 512}, es)
	require.NoError(t, w.Close())
	blobs.open(t, 5)
	r, err := Open(filepath.Join(dir, "t.sst"), &ReaderOptions{Blobs: blobs})
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	return r, blobs, meta
}

// Values at or over the threshold lie in the blob file, counted by the
// table's BlobRefs; point reads read them, Has and a scan of keys do not,
// and a scan reads each value it is asked for once.
func TestBlobRefs(t *testing.T) {
	rng := rand.New(rand.NewPCG(testseed.Seed(t), 0))
	es := randomEntries(rng, 2000)
	r, blobs, meta := blobTable(t, es)

	var separated, bytes64 uint64
	for _, e := range es {
		if e.kind == KindSet && len(e.value) >= 64 {
			separated, bytes64 = separated+1, bytes64+uint64(len(e.value))
		}
	}
	require.NotZero(t, separated)
	require.Equal(t, []BlobRef{{FileNum: 5, Values: separated, ValueBytes: bytes64}}, meta.BlobRefs)
	require.Equal(t, meta.BlobRefs, r.Metadata().BlobRefs)
	require.EqualValues(t, formatVersionBlobs, r.Metadata().FormatVersion)
	st, err := r.Verify(func(err error) { t.Errorf("damage: %v", err) })
	require.NoError(t, err)
	require.Equal(t, uint64(len(es)), st.Entries)
	r.meta.BlobRefs[0].Values++ // as properties that miscount would
	st, err = r.Verify(nil)
	require.NoError(t, err)
	require.Equal(t, 1, st.Damaged)
	r.meta.BlobRefs[0].Values--

	it := r.NewIterator(nil)
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
		_, inBlob := it.BlobHandle()
		require.Equal(t, es[n-1].kind == KindSet && len(es[n-1].value) >= 64, inBlob, "entry %d", n-1)
	}
	require.NoError(t, it.Err())
	require.Equal(t, len(es), n)
	require.Zero(t, blobs.reads, "a scan of keys read values")

	m := NewMergingIterator(&MergeOptions{Blobs: blobs}, r.NewIterator(nil))
	for _, backward := range []bool{false, true} {
		n := 0
		for ok := m.First(); ok; ok = m.Next() {
			n++
		}
		if backward {
			n = 0
			for ok := m.Last(); ok; ok = m.Prev() {
				n++
			}
		}
		require.NotZero(t, n)
		require.NoError(t, m.Err())
		require.Zero(t, blobs.reads, "a merge of keys read values, backward: %v", backward)
	}
	require.NoError(t, m.Close())

	m = NewMergingIterator(&MergeOptions{Blobs: blobs}, r.NewIterator(nil))
	reads := 0
	for ok := m.Last(); ok; ok = m.Prev() {
		if _, ok := m.BlobHandle(); ok {
			reads++
		}
		e, _ := newestAt(es, m.Key(), MaxSeq)
		require.Equal(t, string(e.value), string(m.Value()), "key %q", m.Key())
	}
	require.NoError(t, m.Err())
	require.NoError(t, m.Close())
	require.Equal(t, reads, blobs.reads)

	before := blobs.reads
	for _, e := range es {
		if ok, err := r.Has(e.key); err != nil || !ok && e.kind == KindSet {
			require.NoError(t, err)
		}
	}
	require.Equal(t, before, blobs.reads, "Has read values")
}

// A compaction moves handles: a table written with AddBlobRef from
// another's handles reads the same values from the same blob file.
func TestBlobRefsMove(t *testing.T) {
	rng := rand.New(rand.NewPCG(testseed.Seed(t), 0))
	es := randomEntries(rng, 500)
	r, blobs, meta := blobTable(t, es)
	path := filepath.Join(t.TempDir(), "moved.sst")
	w, err := NewWriter(path, nil)
	require.NoError(t, err)
	it := r.NewIterator(nil)
	for ok := it.First(); ok; ok = it.Next() {
		if h, ok := it.BlobHandle(); ok {
			require.NoError(t, w.AddBlobRef(it.Key(), it.Seq(), h))
			continue
		}
		require.NoError(t, w.AddEntry(it.Key(), it.Seq(), it.Kind(), it.Value()))
	}
	require.NoError(t, it.Close())
	require.NoError(t, w.Close())
	require.Zero(t, blobs.reads, "moving handles read values")
	require.Equal(t, meta.BlobRefs, w.Metadata().BlobRefs)

	moved, err := Open(path, &ReaderOptions{Blobs: blobs})
	require.NoError(t, err)
	defer moved.Close()
	checkPointReads(t, moved, es, rng)
	checkWalks(t, moved, es, rng)

	// Without a BlobSource the entries still read, and their values say why
	// they do not.
	bare, err := Open(path, nil)
	require.NoError(t, err)
	defer bare.Close()
	for _, e := range es {
		if e.kind == KindSet && len(e.value) >= 64 {
			_, err := bare.Get(e.key)
			if err != nil {
				require.ErrorIs(t, err, ErrNoBlobSource)
				return
			}
		}
	}
	t.Fatal("no separated value was the newest of its key")
}

// A handle that names no value of its blob file is damage that names both
// files; an entry of the blob kind in a table of an earlier format is
// damage too.
func TestBlobRefDamage(t *testing.T) {
	dir := t.TempDir()
	blobs := newBlobFiles(t, dir, nil)
	bw := blobs.create(t, 5)
	h, err := bw.Add(bytes.Repeat([]byte("v"), 100))
	require.NoError(t, err)
	require.NoError(t, bw.Close())
	blobs.open(t, 5)

	path := filepath.Join(dir, "000006.sst")
	w, err := NewWriter(path, nil)
	require.NoError(t, err)
	h.Offset++ // no record starts there
	require.NoError(t, w.AddBlobRef([]byte("k"), 1, h))
	require.NoError(t, w.Close())
	r, err := Open(path, &ReaderOptions{Blobs: blobs})
	require.NoError(t, err)
	defer r.Close()
	_, err = r.Get([]byte("k"))
	require.ErrorIs(t, err, ErrCorruption)
	require.ErrorContains(t, err, "000006.sst")
	require.ErrorContains(t, err, "000005.blob")

	it := r.NewIterator(nil)
	require.True(t, it.First())
	require.Nil(t, it.Value())
	require.ErrorIs(t, it.Err(), ErrCorruption)
	require.False(t, it.Valid())
	require.NoError(t, it.Close())

	// The same table read as of format 2: an entry of kind 4 is then no
	// known kind.
	r2, err := Open(path, &ReaderOptions{Blobs: blobs})
	require.NoError(t, err)
	r2.meta.FormatVersion = 2
	_, err = r2.Get([]byte("k"))
	require.ErrorIs(t, err, ErrCorruption)
	require.ErrorIs(t, err, ErrBadBlock)
	require.NoError(t, r2.Close())
}

// A scan reads a blob file ahead, a span at a time (blobReadahead): its
// values come out right forward, backward (read alone) and after seeks,
// and a damaged value inside a span read ahead stops the scan at its entry
// with ErrCorruption, never a wrong value.
func TestBlobReadahead(t *testing.T) {
	var es []entry
	for i := range 1000 {
		es = append(es, entry{key: fmt.Appendf(nil, "key%05d", i), seq: 1, kind: KindSet, value: bytes.Repeat(fmt.Appendf(nil, "%05d", i), 40+i%50)})
	}
	r, blobs, _ := blobTable(t, es)
	it := r.NewIterator(nil)
	n := 0
	for k, v := range it.All() {
		require.Equal(t, es[n].key, k)
		require.Equal(t, es[n].value, v)
		n++
	}
	require.NoError(t, it.Err())
	require.Equal(t, len(es), n)
	for k, v := range it.Backward() {
		n--
		require.Equal(t, es[n].key, k)
		require.Equal(t, es[n].value, v)
	}
	require.NoError(t, it.Err())
	for _, i := range []int{500, 10, 990, 11, 12} {
		require.True(t, it.SeekGE(es[i].key))
		require.Equal(t, es[i].value, it.Value())
	}
	require.NoError(t, it.Close())

	// Damage the value of entry 600, then scan from the start.
	path := filepath.Join(blobs.dir, "000005.blob")
	var h BlobHandle
	it = r.NewIterator(nil)
	require.True(t, it.SeekGE(es[600].key))
	h, ok := it.BlobHandle()
	require.True(t, ok)
	require.NoError(t, it.Close())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	data[h.Offset+h.Length-3] ^= 0x40
	require.NoError(t, os.WriteFile(path, data, 0o644))
	blobs.files[5].Close()
	delete(blobs.files, 5)
	blobs.open(t, 5)

	it = r.NewIterator(nil)
	defer it.Close()
	n = 0
	for k, v := range it.All() {
		require.Equal(t, es[n].key, k)
		require.Equal(t, es[n].value, v)
		n++
	}
	require.Equal(t, 600, n, "the scan stops at the damaged value")
	require.ErrorIs(t, it.Err(), ErrCorruption)
}
