package simpledb

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/testseed"
	"github.com/stretchr/testify/require"
)

// waitSettled waits until no compaction runs or is due: the background
// work a test of its outcome must let finish.
func waitSettled(t *testing.T, db *DB) {
	t.Helper()
	require.NoError(t, db.Flush())
	deadline := time.Now().Add(time.Minute)
	for {
		db.mu.Lock()
		idle := !db.mu.compaction.busy() && db.mu.compaction.pick(db.mu.versions.current(), &db.opts) == nil
		db.mu.Unlock()
		if idle {
			return
		}
		require.True(t, time.Now().Before(deadline), "the background work did not settle")
		time.Sleep(10 * time.Millisecond)
	}
}

// dirSize returns the bytes of the files in dir, and of those the logs'.
func dirSize(t *testing.T, dir string) (all, logs int64) {
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		info, err := e.Info()
		require.NoError(t, err)
		all += info.Size()
		if filepath.Ext(e.Name()) == ".log" {
			logs += info.Size()
		}
	}
	return all, logs
}

// Large values live in blob files, and the space of those overwritten
// goes back without a call: after every key is overwritten three times in
// random order, once the background work settles, the directory holds at
// most 1.5 times the live data, and the metrics say how much garbage is
// left. Every value reads back. (The log, mapped in 1 MiB steps, is not
// counted: at this test's 6 MB it would be a third of the data, at the
// issue's 1 GB a fraction of a percent; benchmark/scale measures that.)
func TestBlobGarbageCollection(t *testing.T) {
	const keys, valueSize, rounds = 1500, 4 << 10, 4 // the fill and three overwrites
	rng := rand.New(rand.NewPCG(testseed.Seed(t), 0))
	dir := t.TempDir()
	opts := smallOptions()
	opts.Logger = quietLogger
	opts.RecycledLogs = -1 // the logs' files are not data
	db, err := Open(dir, opts)
	require.NoError(t, err)
	defer db.Close()

	want := map[string][]byte{}
	for range rounds {
		for _, i := range rng.Perm(keys) {
			key := fmt.Appendf(nil, "doc/%05d", i)
			value := make([]byte, valueSize) // incompressible: the space is the values'
			for j := 0; j < valueSize; j += 8 {
				binary.LittleEndian.PutUint64(value[j:], rng.Uint64())
			}
			require.NoError(t, db.Put(key, value, NoSync))
			want[string(key)] = value
		}
	}
	waitSettled(t, db)

	m := db.Metrics()
	live := int64(keys * (len("doc/00000") + valueSize))
	all, logs := dirSize(t, dir)
	size := all - logs
	t.Logf("directory %d bytes (%d in logs) for %d live: %.2fx without the logs; blob files %d, %d bytes, garbage %d; compactions %d",
		all, logs, live, float64(size)/float64(live), m.Blobs.Files, m.Blobs.Bytes, m.Blobs.GarbageBytes, m.Compactions)
	require.NotZero(t, m.Blobs.Files)
	require.LessOrEqual(t, size, live*3/2, "the directory holds more than 1.5x the live data")
	require.LessOrEqual(t, float64(m.Blobs.GarbageBytes), db.opts.BlobRewriteRatio*float64(m.Blobs.ValueBytes))

	for k, v := range want {
		got, err := db.Get([]byte(k))
		require.NoError(t, err)
		require.True(t, bytes.Equal(v, got), "key %s", k)
	}
	names, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range names {
		require.NotEqual(t, ".tmp", filepath.Ext(e.Name()))
	}
}

// A blob file whose garbage passes BlobRewriteRatio goes, even when no
// level needs a compaction: the background compaction rewrites the tables
// that name it, copying its live values to a new blob file.
func TestBlobRewrite(t *testing.T) {
	dir := t.TempDir()
	opts := testOptions(nil)
	opts.FS = nil
	db, err := Open(dir, opts)
	require.NoError(t, err)
	defer db.Close()
	value := func(i, version int) []byte {
		return bytes.Repeat(fmt.Appendf(nil, "%04d.%d|", i, version), 200)
	}
	for i := range 100 {
		require.NoError(t, db.Put(fmt.Appendf(nil, "k%04d", i), value(i, 0), NoSync))
	}
	require.NoError(t, db.Compact())
	first := slices.Collect(maps.Keys(db.mu.versions.current().blobs))
	require.Len(t, first, 1, "one blob file holds the fill")

	// A third overwritten and a tenth deleted: once a compaction has
	// merged them into the level below, where it drops the versions they
	// hide, the file is 43% garbage, and nothing else is due.
	for i := range 33 {
		require.NoError(t, db.Put(fmt.Appendf(nil, "k%04d", i), value(i, 1), NoSync))
	}
	for i := 90; i < 100; i++ {
		require.NoError(t, db.Delete(fmt.Appendf(nil, "k%04d", i), NoSync))
	}
	require.NoError(t, db.Compact())
	waitSettled(t, db)
	db.mu.Lock()
	_, kept := db.mu.versions.current().blobs[first[0]]
	db.mu.Unlock()
	require.False(t, kept, "the file of mostly garbage is still live")
	_, err = os.Stat(filepath.Join(dir, fmt.Sprintf("%06d.blob", first[0])))
	require.ErrorIs(t, err, fs.ErrNotExist)
	for i := range 100 {
		got, err := db.Get(fmt.Appendf(nil, "k%04d", i))
		switch {
		case i >= 90:
			require.ErrorIs(t, err, ErrNotFound)
		case i < 33:
			require.NoError(t, err)
			require.Equal(t, value(i, 1), got)
		default:
			require.NoError(t, err)
			require.Equal(t, value(i, 0), got)
		}
	}
	require.Zero(t, db.Metrics().Blobs.GarbageBytes)
}

// A damaged value in a blob file is an error of the read that meets it,
// ErrCorruption naming the table and the blob file, never a wrong value;
// the other values read, and Verify reports it.
func TestBlobDamageOnRead(t *testing.T) {
	dir := t.TempDir()
	opts := smallOptions()
	opts.Logger = quietLogger
	db, err := Open(dir, opts)
	require.NoError(t, err)
	value := func(i int) []byte { return bytes.Repeat([]byte{byte('a' + i)}, 2000) }
	for i := range 10 {
		require.NoError(t, db.Put(fmt.Appendf(nil, "k%d", i), value(i), NoSync))
	}
	require.NoError(t, db.Flush())
	require.NoError(t, db.Close())
	paths, err := filepath.Glob(filepath.Join(dir, "*.blob"))
	require.NoError(t, err)
	require.Len(t, paths, 1)
	data, err := os.ReadFile(paths[0])
	require.NoError(t, err)
	data[len(data)/2] ^= 0x10 // in the value of k4 or k5
	require.NoError(t, os.WriteFile(paths[0], data, 0o644))

	db, err = Open(dir, opts)
	require.NoError(t, err)
	defer db.Close()
	damaged := 0
	for i := range 10 {
		got, err := db.Get(fmt.Appendf(nil, "k%d", i))
		if err != nil {
			require.ErrorIs(t, err, ErrCorruption)
			require.ErrorContains(t, err, filepath.Base(paths[0]))
			require.ErrorContains(t, err, ".sst")
			damaged++
			continue
		}
		require.Equal(t, value(i), got)
	}
	require.Equal(t, 1, damaged)
	for _, backward := range []bool{false, true} {
		it, err := db.NewIterator(nil, nil)
		require.NoError(t, err)
		walk := it.All()
		if backward {
			walk = it.Backward()
		}
		for range walk {
		}
		require.ErrorIs(t, it.Err(), ErrCorruption, "backward %v", backward)
		require.ErrorContains(t, it.Err(), filepath.Base(paths[0]), "backward %v", backward)
		require.ErrorContains(t, it.Err(), ".sst", "backward %v", backward)
		require.NoError(t, it.Close())
	}
	report, err := Verify(dir, opts, nil)
	require.NoError(t, err)
	require.Len(t, report.Damage, 1)
	require.ErrorContains(t, report.Damage[0], filepath.Base(paths[0]))
}
