package sstables

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/itertest"
	"github.com/stratadb/strata/internal/testseed"
	"github.com/stratadb/strata/recordio"
	"github.com/stretchr/testify/require"
)

// entry is one table entry, for building tables and checking them.
type entry struct {
	key   []byte
	seq   uint64
	kind  Kind
	value []byte
}

func (e entry) String() string { return fmt.Sprintf("%q@%d:%v", e.key, e.seq, e.kind) }

// sortEntries orders entries as a table stores them.
func sortEntries(es []entry) {
	slices.SortFunc(es, func(a, b entry) int { return compareInternal(bytes.Compare, a.key, a.seq, b.key, b.seq) })
}

// randomEntries returns n distinct entries over keys with shared prefixes,
// several versions of some keys, tombstones and empty values, sorted.
func randomEntries(rng *rand.Rand, n int) []entry {
	seen := map[string]bool{}
	var es []entry
	for len(es) < n {
		k := fmt.Appendf(nil, "key-%06d", rng.IntN(n*2))
		if rng.IntN(4) == 0 {
			k = append(k, bytes.Repeat([]byte{'x'}, rng.IntN(40))...)
		}
		seq := rng.Uint64N(1 << 40)
		id := fmt.Sprintf("%s@%d", k, seq)
		if seen[id] {
			continue
		}
		seen[id] = true
		e := entry{key: k, seq: seq, kind: KindSet, value: fmt.Appendf(nil, "value of %s", id)}
		switch rng.IntN(10) {
		case 0:
			e.kind, e.value = KindDelete, nil
		case 1:
			e.value = []byte{}
		case 2:
			e.value = bytes.Repeat(e.value, 50)
		}
		es = append(es, e)
	}
	sortEntries(es)
	return es
}

func writeTable(t testing.TB, path string, opts *WriterOptions, es []entry) Metadata {
	t.Helper()
	w, err := NewWriter(path, opts)
	require.NoError(t, err)
	for _, e := range es {
		require.NoError(t, w.AddEntry(e.key, e.seq, e.kind, e.value))
	}
	require.NoError(t, w.Close())
	return w.Metadata()
}

type tableCase struct {
	name  string
	wopts WriterOptions
	ropts ReaderOptions
	blobs bool // values of 64 bytes or more go to a blob file
}

func tableCases() []tableCase {
	var cases []tableCase
	for _, c := range []Compression{NoCompression, SnappyCompression, ZstdCompression, GzipCompression} {
		for _, noMmap := range []bool{false, true} {
			cases = append(cases, tableCase{
				name:  fmt.Sprintf("compression=%d/noMmap=%v", c, noMmap),
				wopts: WriterOptions{Compression: c, BlockSize: 512, RestartInterval: 4, BloomBitsPerKey: 10},
				ropts: ReaderOptions{NoMmap: noMmap},
			})
		}
	}
	cases = append(cases,
		tableCase{name: "defaults"},
		tableCase{name: "identity", wopts: WriterOptions{ID: 0xfeed_f00d_0000_0001}},
		tableCase{name: "restart=1/nofilter", wopts: WriterOptions{RestartInterval: 1, BlockSize: 256}},
		tableCase{name: "tiny blocks", wopts: WriterOptions{BlockSize: 1, BloomBitsPerKey: 10}},
		tableCase{name: "cache/mmap", wopts: WriterOptions{BlockSize: 700}, ropts: ReaderOptions{Cache: NewCache(64 << 10)}},
		tableCase{
			name:  "loadOnRead/cache",
			wopts: WriterOptions{BlockSize: 700, BloomBitsPerKey: 10},
			ropts: ReaderOptions{Cache: NewCache(64 << 10), LoadOnRead: true},
		},
		tableCase{
			name:  "cache/snappy/noMmap",
			wopts: WriterOptions{BlockSize: 700, Compression: SnappyCompression},
			ropts: ReaderOptions{Cache: NewCache(64 << 10), NoMmap: true},
		},
		tableCase{name: "blobs", wopts: WriterOptions{BlockSize: 700, BlobThreshold: 64}, blobs: true},
		tableCase{
			name:  "blobs/cache/noMmap",
			wopts: WriterOptions{BlockSize: 512, BlobThreshold: 64, Compression: NoCompression},
			ropts: ReaderOptions{Cache: NewCache(64 << 10), NoMmap: true},
			blobs: true,
		},
	)
	return cases
}

func TestTableRoundTrip(t *testing.T) {
	seed := testseed.Seed(t)
	for _, tc := range tableCases() {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 1))
			es := randomEntries(rng, 1000)
			path := filepath.Join(t.TempDir(), "t.sst")
			var blobs *blobFiles
			var bw *BlobWriter
			if tc.blobs {
				blobs = newBlobFiles(t, filepath.Dir(path), tc.ropts.Cache)
				bw = blobs.create(t, 5)
				tc.wopts.Blobs = func() (*BlobWriter, error) { return bw, nil }
				tc.ropts.Blobs = blobs
			}
			meta := writeTable(t, path, &tc.wopts, es)
			if tc.blobs {
				require.NoError(t, bw.Close())
				require.NotEmpty(t, meta.BlobRefs)
				blobs.open(t, 5)
			}

			r, err := Open(path, &tc.ropts)
			require.NoError(t, err)
			defer r.Close()
			got := r.Metadata()
			require.Equal(t, meta.Records, got.Records)
			require.Equal(t, es[0].key, meta.MinKey)
			require.Equal(t, es[len(es)-1].key, meta.MaxKey)
			require.Equal(t, uint64(len(es)), got.Records)
			require.Equal(t, es[0].key, got.MinKey)
			require.Equal(t, es[len(es)-1].key, got.MaxKey)
			require.Equal(t, meta.FileSize, got.FileSize)
			require.Equal(t, tc.wopts.ID, got.ID, "the identity the writer was given")
			props, err := ReadMetadata(path, &tc.ropts)
			require.NoError(t, err)
			require.Equal(t, got, props, "ReadMetadata reads the properties Open reads")
			info, err := os.Stat(path)
			require.NoError(t, err)
			require.Equal(t, uint64(info.Size()), got.FileSize)

			// A full scan returns every entry in order.
			it := r.NewIterator(nil)
			i := 0
			for k, v := range it.All() {
				require.Less(t, i, len(es))
				require.Equal(t, es[i].key, k, "seed %d entry %d", seed, i)
				require.Equal(t, es[i].seq, it.Seq())
				require.Equal(t, es[i].kind, it.Kind())
				require.Equal(t, string(es[i].value), string(v))
				i++
			}
			require.NoError(t, it.Err())
			require.Equal(t, len(es), i)

			// A backward scan returns them in reverse.
			for k, v := range it.Backward() {
				i--
				require.GreaterOrEqual(t, i, 0)
				require.Equal(t, es[i].key, k, "seed %d entry %d", seed, i)
				require.Equal(t, es[i].seq, it.Seq())
				require.Equal(t, es[i].kind, it.Kind())
				require.Equal(t, string(es[i].value), string(v))
			}
			require.NoError(t, it.Err())
			require.Zero(t, i)
			require.NoError(t, it.Close())

			checkPointReads(t, r, es, rng)
			checkSeeks(t, r, es, rng)
			checkWalks(t, r, es, rng)
		})
	}
}

// newestAt returns the newest entry of key with seq <= at, from sorted es.
func newestAt(es []entry, key []byte, at uint64) (entry, bool) {
	for _, e := range es {
		if bytes.Equal(e.key, key) && e.seq <= at {
			return e, true
		}
	}
	return entry{}, false
}

// versionsOf groups sorted entries by key, newest first.
func versionsOf(es []entry) map[string][]entry {
	m := map[string][]entry{}
	for _, e := range es {
		m[string(e.key)] = append(m[string(e.key)], e)
	}
	return m
}

func checkPointReads(t *testing.T, r *Reader, es []entry, rng *rand.Rand) {
	byKey := versionsOf(es)
	for range 500 {
		e := es[rng.IntN(len(es))]
		versions := byKey[string(e.key)]
		// Get sees the newest version.
		newest := versions[0]
		v, err := r.Get(e.key)
		if newest.kind == KindDelete {
			require.ErrorIs(t, err, ErrNotFound)
		} else {
			require.NoError(t, err)
			require.Equal(t, string(newest.value), string(v))
		}
		has, err := r.Has(e.key)
		require.NoError(t, err)
		require.Equal(t, newest.kind == KindSet, has)

		// Find at a snapshot between versions sees the version then.
		at := e.seq + rng.Uint64N(3)
		want, ok := newestAt(versions, e.key, at)
		var got []byte
		kind, found, err := r.Find(e.key, at, func(v []byte) { got = bytes.Clone(v) })
		require.NoError(t, err)
		require.Equal(t, ok, found, "%v at %d", e, at)
		if ok {
			require.Equal(t, want.kind, kind)
			require.Equal(t, string(want.value), string(got))
		}
		// FindHash, given the key's hash, answers as Find does.
		var gotHash []byte
		kindHash, foundHash, err := r.FindHash(e.key, HashKey(e.key), at, func(v []byte) { gotHash = bytes.Clone(v) })
		require.NoError(t, err)
		require.Equal(t, found, foundHash)
		require.Equal(t, kind, kindHash)
		require.Equal(t, got, gotHash)
		// Before the oldest version, nothing.
		if oldest := versions[len(versions)-1]; oldest.seq > 0 {
			_, found, err = r.Find(e.key, oldest.seq-1, nil)
			require.NoError(t, err)
			require.False(t, found)
		}
	}
	for _, absent := range [][]byte{[]byte("a"), []byte("key-"), []byte("key-999999"), []byte("zzz")} {
		_, err := r.Get(absent)
		require.ErrorIs(t, err, ErrNotFound)
		_, found, err := r.FindHash(absent, HashKey(absent), MaxSeq, nil)
		require.NoError(t, err)
		require.False(t, found)
	}
}

func checkSeeks(t *testing.T, r *Reader, es []entry, rng *rand.Rand) {
	for range 50 {
		lo := es[rng.IntN(len(es))].key
		hi := es[rng.IntN(len(es))].key
		if bytes.Compare(lo, hi) > 0 {
			lo, hi = hi, lo
		}
		var want []entry
		for _, e := range es {
			if bytes.Compare(e.key, lo) >= 0 && bytes.Compare(e.key, hi) < 0 {
				want = append(want, e)
			}
		}
		it := r.NewIterator(&IterOptions{LowerBound: lo, UpperBound: hi})
		var got []entry
		for ok := it.First(); ok; ok = it.Next() {
			got = append(got, entry{bytes.Clone(it.Key()), it.Seq(), it.Kind(), bytes.Clone(it.Value())})
		}
		require.NoError(t, it.Err())
		require.Equal(t, len(want), len(got), "[%q, %q)", lo, hi)
		for i := range want {
			require.Equal(t, want[i].key, got[i].key)
			require.Equal(t, want[i].seq, got[i].seq)
		}

		// SeekGE to a key between existing ones lands on the next key.
		target := append(bytes.Clone(lo), 0)
		idx := slices.IndexFunc(es, func(e entry) bool { return bytes.Compare(e.key, target) >= 0 })
		it = r.NewIterator(nil)
		if idx < 0 {
			require.False(t, it.SeekGE(target))
		} else {
			require.True(t, it.SeekGE(target))
			require.Equal(t, es[idx].key, it.Key())
			require.Equal(t, es[idx].seq, it.Seq())
		}
		require.NoError(t, it.Err())
	}
}

// checkWalks walks bounded iterators at random, seeking either way and
// switching direction anywhere, against a cursor over the entries within
// the bounds.
func checkWalks(t *testing.T, r *Reader, es []entry, rng *rand.Rand) {
	randomKey := func() []byte {
		k := es[rng.IntN(len(es))].key
		if rng.IntN(2) == 0 {
			k = append(bytes.Clone(k), 0) // between keys
		}
		return k
	}
	for round := range 20 {
		var opts IterOptions
		if rng.IntN(2) == 0 {
			opts.LowerBound = randomKey()
		}
		if rng.IntN(2) == 0 {
			opts.UpperBound = randomKey()
		}
		var want []entry
		var keys [][]byte
		for _, e := range es {
			if (opts.LowerBound == nil || bytes.Compare(e.key, opts.LowerBound) >= 0) &&
				(opts.UpperBound == nil || bytes.Compare(e.key, opts.UpperBound) < 0) {
				want = append(want, e)
				keys = append(keys, e.key)
			}
		}
		it := r.NewIterator(&opts)
		msg := fmt.Sprintf("round %d: [%q, %q)", round, opts.LowerBound, opts.UpperBound)
		itertest.Walk(t, rng, it, itertest.NewCursor(keys), 200, randomKey, func(i int) {
			require.Equal(t, want[i].seq, it.Seq(), msg)
			require.Equal(t, want[i].kind, it.Kind(), msg)
			require.Equal(t, string(want[i].value), string(it.Value()), msg)
		}, msg)
		require.NoError(t, it.Err())
		require.NoError(t, it.Close())
	}
}

// boundedScanTable opens a table of 1000 random entries in 256-byte blocks
// with a cache of its own. Iterators do not fill the cache, so each block
// they read is a miss.
func boundedScanTable(t *testing.T) ([]entry, *Reader, *Cache) {
	es := randomEntries(rand.New(rand.NewPCG(13, 13)), 1000)
	path := filepath.Join(t.TempDir(), "t.sst")
	writeTable(t, path, &WriterOptions{BlockSize: 256}, es)
	cache := NewCache(1 << 20)
	r, err := Open(path, &ReaderOptions{Cache: cache})
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	return es, r, cache
}

// A bounded scan reads the blocks up to the first whose index separator
// is at or after the upper bound, not the one after it.
func TestBoundedScanStopsAtTheBound(t *testing.T) {
	es, r, cache := boundedScanTable(t)
	var bounds [][]byte
	for i := 0; i < len(es); i += 7 {
		// A key's successor, past a block's last key, is the case that matters.
		bounds = append(bounds, es[i].key, append(bytes.Clone(es[i].key), 0))
	}
	for _, upper := range bounds {
		want := 0
		index := r.index
		for ok := index.first(); ok; ok = index.nextEntry() {
			want++
			if bytes.Compare(index.key, upper) >= 0 {
				break
			}
		}
		before := cache.Stats().Misses
		it := r.NewIterator(&IterOptions{UpperBound: upper})
		for range it.All() {
		}
		require.NoError(t, it.Err())
		require.Equal(t, int64(want), cache.Stats().Misses-before, "upper bound %q", upper)
	}
}

// A bounded backward scan reads the blocks down to the last whose index
// separator is at or after the lower bound, not the one before it, whose
// keys are all below the bound.
func TestBoundedBackwardScanStopsAtTheBound(t *testing.T) {
	es, r, cache := boundedScanTable(t)
	for i := 0; i < len(es); i += 7 {
		for _, lower := range [][]byte{es[i].key, append(bytes.Clone(es[i].key), 0)} {
			// The last block is read in any case.
			want := 0
			index := r.index
			for ok := index.first(); ok; ok = index.nextEntry() {
				if bytes.Compare(index.key, lower) >= 0 {
					want++
				}
			}
			want = max(want, 1)
			before := cache.Stats().Misses
			it := r.NewIterator(&IterOptions{LowerBound: lower})
			for range it.Backward() {
			}
			require.NoError(t, it.Err())
			require.Equal(t, int64(want), cache.Stats().Misses-before, "lower bound %q", lower)
		}
	}
}

func TestEmptyTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.sst")
	meta := writeTable(t, path, &WriterOptions{BloomBitsPerKey: 10}, nil)
	require.Zero(t, meta.Records)
	r, err := Open(path, nil)
	require.NoError(t, err)
	defer r.Close()
	_, err = r.Get([]byte("x"))
	require.ErrorIs(t, err, ErrNotFound)
	it := r.NewIterator(nil)
	require.False(t, it.First())
	require.False(t, it.SeekGE([]byte("a")))
	require.False(t, it.Last())
	require.False(t, it.SeekLT([]byte("a")))
	require.False(t, it.Prev())
	require.False(t, it.Next())
	require.NoError(t, it.Err())
}

func TestWriterRejectsBadInput(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(filepath.Join(dir, "t.sst"), nil)
	require.NoError(t, err)
	require.ErrorIs(t, w.Add(nil, []byte("v")), ErrEmptyKey)
	require.ErrorIs(t, w.Add([]byte{}, []byte("v")), ErrEmptyKey)
	require.ErrorIs(t, w.Add(make([]byte, MaxKeySize+1), nil), ErrKeyTooLarge)
	require.ErrorIs(t, w.AddEntry([]byte("k"), MaxSeq+1, KindSet, nil), ErrBadSeq)
	require.ErrorIs(t, w.AddEntry([]byte("k"), 0, Kind(7), nil), ErrBadKind)
	require.NoError(t, w.Add([]byte("b"), []byte("1")))
	require.ErrorIs(t, w.Add([]byte("b"), []byte("2")), ErrOutOfOrder, "duplicate key")
	require.ErrorIs(t, w.Add([]byte("a"), []byte("2")), ErrOutOfOrder)
	require.NoError(t, w.AddEntry([]byte("c"), 9, KindSet, nil))
	require.ErrorIs(t, w.AddEntry([]byte("c"), 10, KindSet, nil), ErrOutOfOrder, "older version first")
	require.NoError(t, w.AddEntry([]byte("c"), 8, KindDelete, nil))
	require.NoError(t, w.Close())
	require.ErrorIs(t, w.Add([]byte("d"), nil), ErrClosed)
	require.ErrorIs(t, w.Close(), ErrClosed)
}

// A zero option means what it means in simpledb.Options: snappy, 4 KiB
// blocks, a 10-bit bloom filter; a negative BloomBitsPerKey turns it off.
func TestWriterDefaults(t *testing.T) {
	es := []entry{{key: []byte("a"), kind: KindSet, value: []byte("1")}}
	for _, tc := range []struct {
		name       string
		opts       *WriterOptions
		codec      recordio.Codec
		blockSize  uint64
		bloomBits  uint64
		withFilter bool
	}{
		{"nil", nil, recordio.CodecSnappy, DefaultBlockSize, DefaultBloomBitsPerKey, true},
		{"zero", &WriterOptions{}, recordio.CodecSnappy, DefaultBlockSize, DefaultBloomBitsPerKey, true},
		{"no filter", &WriterOptions{BloomBitsPerKey: -1}, recordio.CodecSnappy, DefaultBlockSize, 0, false},
		{"set", &WriterOptions{Compression: NoCompression, BlockSize: 8192, BloomBitsPerKey: 4}, recordio.CodecNone, 8192, 4, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.sst")
			meta := writeTable(t, path, tc.opts, es)
			require.Equal(t, tc.codec, meta.Codec)
			require.Equal(t, tc.blockSize, meta.BlockSize)
			require.Equal(t, tc.bloomBits, meta.BloomBitsPerKey)
			r, err := Open(path, nil)
			require.NoError(t, err)
			defer r.Close()
			require.Equal(t, tc.withFilter, r.filter != nil)
		})
	}
}

func TestWriterRejectsUnknownCompression(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []Compression{-1, GzipCompression + 1, 99} {
		_, err := NewWriter(filepath.Join(dir, "t.sst"), &WriterOptions{Compression: c})
		require.ErrorIs(t, err, ErrUnknownCompression, "compression %d", c)
	}
	names, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, names, "no file for a rejected writer")
}

// A table appears under its name only once Close has made it durable;
// Abort leaves nothing behind.
func TestWriterIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.sst")
	w, err := NewWriter(path, nil)
	require.NoError(t, err)
	require.NoError(t, w.Add([]byte("k"), []byte("v")))
	_, err = os.Stat(path)
	require.True(t, os.IsNotExist(err), "visible before Close")
	require.NoError(t, w.Close())
	_, err = os.Stat(path)
	require.NoError(t, err)
	_, err = os.Stat(path + ".tmp")
	require.True(t, os.IsNotExist(err))

	w, err = NewWriter(filepath.Join(dir, "aborted.sst"), nil)
	require.NoError(t, err)
	require.NoError(t, w.Add([]byte("k"), []byte("v")))
	require.NoError(t, w.Abort())
	names, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, names, 1)
}

// reverse orders keys backwards, to prove the comparator is used throughout.
var reverse = &Comparator{Name: "test.reverse", Compare: func(a, b []byte) int { return bytes.Compare(b, a) }}

func TestCustomComparator(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.sst")
	w, err := NewWriter(path, &WriterOptions{Comparator: reverse, BlockSize: 64, BloomBitsPerKey: 10})
	require.NoError(t, err)
	for i := 999; i >= 0; i-- {
		require.NoError(t, w.Add(fmt.Appendf(nil, "%04d", i), fmt.Appendf(nil, "v%d", i)))
	}
	require.ErrorIs(t, w.Add([]byte("9999"), nil), ErrOutOfOrder)
	require.NoError(t, w.Close())

	_, err = Open(path, nil)
	require.ErrorIs(t, err, ErrComparatorMismatch)

	r, err := Open(path, &ReaderOptions{Comparator: reverse})
	require.NoError(t, err)
	defer r.Close()
	v, err := r.Get([]byte("0500"))
	require.NoError(t, err)
	require.Equal(t, "v500", string(v))
	it := r.NewIterator(&IterOptions{LowerBound: []byte("0100"), UpperBound: []byte("0095")})
	var keys []string
	for k := range it.All() {
		keys = append(keys, string(k))
	}
	require.NoError(t, it.Err())
	require.Equal(t, []string{"0100", "0099", "0098", "0097", "0096"}, keys)
}

// A custom Separator that breaks its contract (a <= s < b) cannot make
// keys unreachable: the writer falls back to the block's last key.
func TestFaultySeparatorIsNotUsed(t *testing.T) {
	for _, tc := range []struct {
		name string
		sep  func(dst, a, b []byte) []byte
	}{
		{"returns b", func(dst, _, b []byte) []byte { return append(dst, b...) }},
		{"after b", func(dst, _, b []byte) []byte { return append(append(dst, b...), 0xff) }},
		{"before a", func(dst, _, _ []byte) []byte { return append(dst, 0) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmp := &Comparator{Name: "test.faulty", Compare: bytes.Compare, Separator: tc.sep}
			es := randomEntries(rand.New(rand.NewPCG(12, 12)), 300)
			path := filepath.Join(t.TempDir(), "t.sst")
			writeTable(t, path, &WriterOptions{Comparator: cmp, BlockSize: 64}, es)
			r, err := Open(path, &ReaderOptions{Comparator: cmp})
			require.NoError(t, err)
			defer r.Close()
			for _, e := range es {
				for _, seq := range []uint64{e.seq, MaxSeq} {
					_, found, err := r.Find(e.key, seq, nil)
					require.NoError(t, err)
					require.True(t, found, "%v at %d", e, seq)
				}
			}
		})
	}
}

func TestClosedReader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.sst")
	writeTable(t, path, nil, []entry{{key: []byte("k"), kind: KindSet, value: []byte("v")}})
	r, err := Open(path, nil)
	require.NoError(t, err)
	it := r.NewIterator(nil)
	require.NoError(t, r.Close())
	_, err = r.Get([]byte("k"))
	require.ErrorIs(t, err, ErrClosed)
	require.False(t, it.First())
	require.ErrorIs(t, it.Err(), ErrClosed)
	require.ErrorIs(t, r.Close(), ErrClosed)
}

// An iterator left open when its reader is closed fails its next move
// instead of reading unmapped memory.
func TestIteratorAfterReaderClose(t *testing.T) {
	es := randomEntries(rand.New(rand.NewPCG(8, 8)), 2000)
	for _, tc := range tableCases() {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.sst")
			writeTable(t, path, &tc.wopts, es)
			r, err := Open(path, &tc.ropts)
			require.NoError(t, err)
			it := r.NewIterator(nil)
			require.True(t, it.First())
			require.NoError(t, r.Close())
			require.False(t, it.Next())
			require.ErrorIs(t, it.Err(), ErrClosed)
			require.False(t, it.SeekGE(es[0].key))
		})
	}
}

// Many goroutines read one table at once (run with -race).
func TestReaderConcurrent(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	es := randomEntries(rng, 3000)
	for i, c := range []Compression{NoCompression, SnappyCompression} {
		path := filepath.Join(t.TempDir(), "t.sst")
		writeTable(t, path, &WriterOptions{Compression: c, BlockSize: 1024, BloomBitsPerKey: 10}, es)
		// With LoadOnRead the goroutines' first reads race to load the
		// index and the filter.
		r, err := Open(path, &ReaderOptions{LoadOnRead: i == 1})
		require.NoError(t, err)
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(g), 0))
				for range 300 {
					e := es[rng.IntN(len(es))]
					want, _ := newestAt(es, e.key, MaxSeq)
					v, err := r.Get(e.key)
					if want.kind == KindDelete {
						if err != ErrNotFound {
							t.Errorf("%v: %v", e, err)
						}
					} else if err != nil || !bytes.Equal(v, want.value) {
						t.Errorf("%v: %q %v", e, v, err)
					}
				}
				it := r.NewIterator(nil)
				n := 0
				for range it.All() {
					n++
				}
				if it.Err() != nil || n != len(es) {
					t.Errorf("scan: %d entries, %v", n, it.Err())
				}
			})
		}
		wg.Wait()
		require.NoError(t, r.Close())
	}
}

// A table of keys with random bytes gets a small index: the separators
// between blocks are a few bytes, not whole keys.
func TestIndexUsesShortSeparators(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.sst")
	w, err := NewWriter(path, &WriterOptions{BlockSize: 4096, Compression: NoCompression})
	require.NoError(t, err)
	var keys [][]byte
	rng := rand.New(rand.NewPCG(1, 1))
	for range 20000 {
		keys = append(keys, binary.BigEndian.AppendUint64(nil, rng.Uint64()))
	}
	slices.SortFunc(keys, bytes.Compare)
	keys = slices.CompactFunc(keys, bytes.Equal)
	for _, k := range keys {
		require.NoError(t, w.Add(append(k, bytes.Repeat([]byte{'k'}, 24)...), make([]byte, 100)))
	}
	require.NoError(t, w.Close())
	r, err := Open(path, nil)
	require.NoError(t, err)
	defer r.Close()
	perBlock := float64(r.IndexSize()) / float64(r.Metadata().DataBlocks)
	t.Logf("%d blocks, index %d bytes, %.1f bytes per block", r.Metadata().DataBlocks, r.IndexSize(), perBlock)
	require.Less(t, perBlock, 16.0, "32-byte keys should index in far fewer bytes")
}

func TestFooterRoundTrip(t *testing.T) {
	f := footer{index: BlockHandle{100, 20}, filter: BlockHandle{50, 50}, props: BlockHandle{120, 9}, version: formatVersion}
	got, err := decodeFooter(f.encode(), 200)
	require.NoError(t, err)
	require.Equal(t, f, got)
	f.filter = BlockHandle{}
	got, err = decodeFooter(f.encode(), 200)
	require.NoError(t, err, "no filter")
	require.Equal(t, f, got)
}

func TestFooterRejectsHandlesOutsideTheFile(t *testing.T) {
	good := footer{index: BlockHandle{100, 20}, filter: BlockHandle{50, 50}, props: BlockHandle{120, 9}, version: formatVersion}
	for _, tc := range []struct {
		name string
		edit func(f *footer)
	}{
		{"index past the footer", func(f *footer) { f.index = BlockHandle{190, 20} }},
		{"index in the file header", func(f *footer) { f.index.Offset = 0 }},
		{"empty index", func(f *footer) { f.index.Length = 0 }},
		{"props in the file header", func(f *footer) { f.props.Offset = 4 }},
		{"props length overflows", func(f *footer) { f.props.Length = 1<<64 - 1 }},
		{"filter with length 0 at an offset", func(f *footer) { f.filter = BlockHandle{50, 0} }},
		{"filter in the file header", func(f *footer) { f.filter.Offset = 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := good
			tc.edit(&f)
			_, err := decodeFooter(f.encode(), 200)
			require.ErrorContains(t, err, "outside")
		})
	}
}

func TestDecodeHandle(t *testing.T) {
	const limit = 1 << 41
	for _, tc := range []struct {
		name string
		b    []byte
		want BlockHandle
		err  string
	}{
		{"large", BlockHandle{1 << 40, 1 << 20}.append(nil), BlockHandle{1 << 40, 1 << 20}, ""},
		{"ends at the limit", BlockHandle{limit - 10, 10}.append(nil), BlockHandle{limit - 10, 10}, ""},
		{"trailing bytes", append(BlockHandle{8, 2}.append(nil), 0), BlockHandle{}, "malformed"},
		{"truncated", BlockHandle{1 << 40, 1}.append(nil)[:3], BlockHandle{}, "malformed"},
		{"in the file header", BlockHandle{0, 20}.append(nil), BlockHandle{}, "outside"},
		{"empty", BlockHandle{8, 0}.append(nil), BlockHandle{}, "outside"},
		{"past the limit", BlockHandle{limit, 1}.append(nil), BlockHandle{}, "outside"},
		{"crosses the limit", BlockHandle{limit - 10, 11}.append(nil), BlockHandle{}, "outside"},
		{"length overflows", BlockHandle{8, 1<<64 - 1}.append(nil), BlockHandle{}, "outside"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := decodeHandle(tc.b, limit)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, h)
		})
	}
}

func TestMetadataRoundTrip(t *testing.T) {
	m := Metadata{FormatVersion: formatVersion, Records: 10, Tombstones: 2, MinKey: []byte("a"), MaxKey: []byte("z"),
		MinSeq: 3, MaxSeq: base.MaxSeq, Comparator: "x", Codec: 2, BlockSize: 4096, CreatedUnixNano: 12345}
	got, err := decodeMetadata(m.encode())
	require.NoError(t, err)
	require.Equal(t, m, got)

	// Fields from a newer writer are skipped.
	extra := append(m.encode(), 99, 3, 'n', 'e', 'w')
	got, err = decodeMetadata(extra)
	require.NoError(t, err)
	require.Equal(t, m, got)
}
