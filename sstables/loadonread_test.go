package sstables

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A Reader opened with LoadOnRead holds and charges nothing for its index
// and filter until the first read that needs them, whichever read that is:
// an iterator or Index loads the index alone, the point reads and Verify
// the filter too. From then on it holds them, as a Reader that loaded them
// at Open does, and gives the charge back at Close.
func TestLoadOnReadHoldsNothingUntilRead(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 21))
	es := randomEntries(rng, 2000)
	path := filepath.Join(t.TempDir(), "t.sst")
	writeTable(t, path, &WriterOptions{BlockSize: 512, BloomBitsPerKey: 10}, es)
	eager, err := Open(path, &ReaderOptions{NoMmap: true})
	require.NoError(t, err)
	defer eager.Close()
	want, err := eager.Index()
	require.NoError(t, err)

	indexCharge := int64(eager.IndexSize()) + cacheEntryOverhead
	require.Less(t, indexCharge, eager.heldBytes(), "the table has a filter")

	firstReads := []struct {
		name   string
		read   func(r *Reader) error
		filter bool // the read loads the filter too
	}{
		{"Get", func(r *Reader) error {
			_, err := r.Get(es[len(es)/2].key)
			if err == ErrNotFound {
				err = nil
			}
			return err
		}, true},
		{"Has", func(r *Reader) error { _, err := r.Has([]byte("absent")); return err }, true},
		{"Find", func(r *Reader) error { _, _, err := r.Find(es[0].key, MaxSeq, nil); return err }, true},
		{"NewIterator", func(r *Reader) error { return r.NewIterator(nil).Close() }, false},
		{"Index", func(r *Reader) error { _, err := r.Index(); return err }, false},
		{"Verify", func(r *Reader) error { _, err := r.Verify(nil); return err }, true},
	}
	for _, tc := range firstReads {
		t.Run(tc.name, func(t *testing.T) {
			cache := NewCache(1 << 20)
			r, err := Open(path, &ReaderOptions{Cache: cache, NoMmap: true, LoadOnRead: true})
			require.NoError(t, err)
			require.Zero(t, cache.Stats().Reserved)
			require.Zero(t, r.IndexSize())
			require.Equal(t, es[0].key, r.Metadata().MinKey, "the properties are read at Open")

			require.NoError(t, tc.read(r))
			require.Equal(t, eager.IndexSize(), r.IndexSize())
			if tc.filter {
				require.Equal(t, eager.heldBytes(), cache.Stats().Reserved)
			} else {
				require.Equal(t, indexCharge, cache.Stats().Reserved)
				require.Nil(t, r.filter)
			}
			got, err := r.Index()
			require.NoError(t, err)
			require.Equal(t, want, got)
			readAll(t, r, es)
			require.Equal(t, eager.heldBytes(), cache.Stats().Reserved, "the point reads loaded the filter")

			require.NoError(t, r.Close())
			require.Zero(t, cache.Stats().Reserved)
		})
	}
}

// Damage in the index or the filter of a Reader opened with LoadOnRead is
// the error of every read that needs them, ErrCorruption naming the file
// and the block, and the Reader holds nothing of the block whose load
// failed. An iterator needs only the index: a damaged filter fails point
// reads, not scans.
func TestLoadOnReadReportsDamageAtTheRead(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 22))
	es := randomEntries(rng, 500)
	dir := t.TempDir()
	path := filepath.Join(dir, "t.sst")
	writeTable(t, path, &WriterOptions{BlockSize: 512, BloomBitsPerKey: 10}, es)
	r, err := Open(path, nil)
	require.NoError(t, err)
	blocks := map[string]BlockHandle{"index": r.indexBlock, "filter": r.filterBlock}
	indexCharge := int64(r.IndexSize()) + cacheEntryOverhead
	require.NoError(t, r.Close())
	good, err := os.ReadFile(path)
	require.NoError(t, err)

	for name, h := range blocks {
		t.Run(name, func(t *testing.T) {
			data := bytes.Clone(good)
			data[h.Offset+h.Length/2] ^= 0x40
			damaged := filepath.Join(dir, name+".sst")
			require.NoError(t, os.WriteFile(damaged, data, 0o644))

			cache := NewCache(1 << 20)
			_, err := Open(damaged, &ReaderOptions{Cache: cache})
			require.ErrorIs(t, err, ErrCorruption, "Open finds it when it loads them")
			require.Zero(t, cache.Stats().Reserved, "and a failed Open keeps no charge")

			r, err := Open(damaged, &ReaderOptions{Cache: cache, LoadOnRead: true})
			require.NoError(t, err, "Open with LoadOnRead does not read them")
			defer r.Close()
			// What stays held after the failed load: the index, when the
			// filter is the damaged block.
			held, mappings := int64(0), 0
			if name == "filter" {
				held, mappings = indexCharge, 1
			}
			for range 2 {
				_, err = r.Get(es[0].key)
				require.ErrorIs(t, err, ErrCorruption)
				require.Contains(t, err.Error(), damaged)
				require.Equal(t, held, cache.Stats().Reserved)
				require.Len(t, r.mappings, mappings)
			}
			it := r.NewIterator(nil)
			if name == "filter" {
				n := 0
				for ok := it.First(); ok; ok = it.Next() {
					n++
				}
				require.NoError(t, it.Err())
				require.Equal(t, len(es), n, "a scan needs no filter")
			} else {
				require.False(t, it.First())
				require.ErrorIs(t, it.Err(), ErrCorruption)
			}
			require.NoError(t, it.Close())
			_, err = r.Verify(nil)
			require.ErrorIs(t, err, ErrCorruption)
		})
	}
}
