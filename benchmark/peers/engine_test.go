package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// Strata and pebble-blobs keep 4 KiB values in blob files (both name them
// NNNNNN.blob), strata-inline and Pebble at its defaults in their tables;
// strata-separated keeps even 100-byte values there, which Strata does
// not. Every value reads back after a reopen either way.
func TestBlobFilesOnlyWhereConfigured(t *testing.T) {
	const keys = 2000
	for _, tc := range []struct {
		engine    string
		valueSize int
		blobs     bool
	}{
		{"strata", 4 << 10, true},
		{"strata", 100, false},
		{"strata-inline", 4 << 10, false},
		{"strata-separated", 100, true},
		{"pebble", 4 << 10, false},
		{"pebble-blobs", 4 << 10, true},
	} {
		valueSize := tc.valueSize
		t.Run(fmt.Sprintf("%s/%d", tc.engine, valueSize), func(t *testing.T) {
			e, err := findEngine(tc.engine)
			require.NoError(t, err)
			dir := t.TempDir()
			db, err := e.open(dir, settings{})
			require.NoError(t, err)
			require.NoError(t, fillAndClose(db, keys, fillOrder(keys), valueSize))
			db, err = e.open(dir, settings{})
			require.NoError(t, err)
			_, err = runScan(db, params{keys: keys, valueSize: valueSize})
			require.NoError(t, err)
			require.NoError(t, db.Close())

			blobs, err := filepath.Glob(filepath.Join(dir, "*.blob"))
			require.NoError(t, err)
			if tc.blobs {
				require.NotEmpty(t, blobs, "no blob file in %s", dirList(t, dir))
			} else {
				require.Empty(t, blobs)
			}
		})
	}
}

// dirList names the files in dir, for a failure's message.
func dirList(t *testing.T, dir string) []string {
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// The variants run only when -engines names them, and every name finds
// its engine.
func TestVariantsAreOptIn(t *testing.T) {
	for _, v := range variants {
		require.False(t, slices.ContainsFunc(engines, func(e engine) bool { return e.name == v.name }), v.name)
		e, err := findEngine(v.name)
		require.NoError(t, err)
		require.Equal(t, v.title, e.title)
	}
	_, err := findEngine("nosuch")
	require.Error(t, err)
}

// Strata's block cache under equal-cache is the cache's size, its budget
// holding two memstores of the default size besides; under budget the
// cache's size is its whole budget, a third of it to each memstore.
func TestStrataCacheSettings(t *testing.T) {
	const cache = 256 << 20
	for _, tc := range []struct {
		name     string
		s        settings
		memstore int64
	}{
		{"equal-cache", settings{cacheBytes: cache}, defaultMemstore},
		{"budget", settings{cacheBytes: cache, wholeBudget: true}, cache / 3},
		{"equal-memory", settings{cacheBytes: cache, memtableBytes: 64 << 20}, 64 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := openStrata(t.TempDir(), tc.s)
			require.NoError(t, err)
			defer e.Close()
			// An empty writable database charges its memstores alone:
			// the active one and one waiting for its flush.
			require.Equal(t, 2*tc.memstore, e.(*strataEngine).db.Stats().MemoryCharged)
		})
	}
}
