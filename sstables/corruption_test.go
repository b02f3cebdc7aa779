package sstables

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stratadb/strata/recordio"
	"github.com/stretchr/testify/require"
)

// readEverything opens a table and reads it every way: a scan, point reads
// of the given entries. It returns the first error, and fails the test if
// any read returns a wrong value.
func readEverything(t *testing.T, path string, es []entry, opts *ReaderOptions) error {
	r, err := Open(path, opts)
	if err != nil {
		return err
	}
	defer r.Close()
	it := r.NewIterator(nil)
	i := 0
	for k, v := range it.All() {
		if i >= len(es) || !bytes.Equal(k, es[i].key) || !bytes.Equal(v, es[i].value) || it.Seq() != es[i].seq || it.Kind() != es[i].kind {
			t.Fatalf("scan returned a wrong entry %d: %q@%d", i, k, it.Seq())
		}
		i++
	}
	if err := it.Err(); err != nil {
		return err
	}
	if i != len(es) {
		t.Fatalf("scan ended after %d of %d entries without an error", i, len(es))
	}
	for _, e := range es {
		var got []byte
		kind, found, err := r.Find(e.key, e.seq, func(v []byte) { got = bytes.Clone(v) })
		if err != nil {
			return err
		}
		if !found || kind != e.kind || !bytes.Equal(got, e.value) {
			t.Fatalf("point read of %v returned %q (found %v) without an error", e, got, found)
		}
	}
	return nil
}

// Any flipped byte of a table is reported as corruption naming the file,
// by Open or by a read, and never yields a wrong value or a panic.
func TestEveryByteFlipIsDetected(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	es := randomEntries(rng, 60)
	for _, c := range []Compression{NoCompression, SnappyCompression} {
		for _, noMmap := range []bool{false, true} {
			dir := t.TempDir()
			path := filepath.Join(dir, "t.sst")
			writeTable(t, path, &WriterOptions{Compression: c, BlockSize: 256, BloomBitsPerKey: 10}, es)
			good, err := os.ReadFile(path)
			require.NoError(t, err)
			damaged := filepath.Join(dir, "damaged.sst")
			for pos := range good {
				data := bytes.Clone(good)
				data[pos] ^= 1 << (pos % 8)
				require.NoError(t, os.WriteFile(damaged, data, 0o644))
				err := readEverything(t, damaged, es, &ReaderOptions{NoMmap: noMmap})
				msg := fmt.Sprintf("compression %d noMmap %v: flip at %d", c, noMmap, pos)
				require.ErrorIs(t, err, ErrCorruption, msg)
				require.Contains(t, err.Error(), damaged, msg)
			}
		}
	}
}

func TestTruncatedAndForeignFiles(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(4, 4))
	es := randomEntries(rng, 200)
	path := filepath.Join(dir, "t.sst")
	writeTable(t, path, &WriterOptions{BloomBitsPerKey: 10}, es)
	good, err := os.ReadFile(path)
	require.NoError(t, err)

	cut := filepath.Join(dir, "cut.sst")
	for _, n := range []int{0, 1, 7, 8, 100, len(good) / 2, len(good) - footerRecordSize, len(good) - 1} {
		require.NoError(t, os.WriteFile(cut, good[:n], 0o644))
		_, err := Open(cut, nil)
		require.ErrorIs(t, err, ErrCorruption, "cut at %d", n)
	}

	// A valid recordio file that is not a table.
	foreign := filepath.Join(dir, "foreign.rio")
	w, err := recordio.Create(foreign, nil)
	require.NoError(t, err)
	for range 10 {
		_, err := w.Write(bytes.Repeat([]byte("not a table "), 20))
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	_, err = Open(foreign, nil)
	require.ErrorIs(t, err, ErrBadFooter)

	// Random bytes.
	noise := filepath.Join(dir, "noise")
	require.NoError(t, os.WriteFile(noise, bytes.Repeat([]byte{0xAB, 0x12}, 500), 0o644))
	_, err = Open(noise, nil)
	require.ErrorIs(t, err, ErrCorruption)

	_, err = Open(filepath.Join(dir, "missing.sst"), nil)
	require.Error(t, err)
	require.False(t, errors.Is(err, ErrCorruption))
}
