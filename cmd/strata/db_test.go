package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stratadb/strata/inspect"
	"github.com/stratadb/strata/simpledb"
	"github.com/stretchr/testify/require"
)

// db ls counts the batches Open replays, which Verify counts by Open's own
// log walk: in a recycled log's file, not the leftovers of its earlier use
// after the log's own batches.
func TestCountReplayedMatchesOpen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	db, err := simpledb.Open(dir, &simpledb.Options{MemstoreSize: simpledb.MinMemstoreSize, DisableAutoCompaction: true})
	require.NoError(t, err)
	seed := rand.Uint64()
	r := rand.New(rand.NewPCG(seed, seed))
	value := make([]byte, 1000)
	for i := range 3000 { // several rotations: obsolete logs kept for reuse, then reused
		for j := range value {
			value[j] = byte(r.Uint32())
		}
		require.NoError(t, db.Put(fmt.Appendf(nil, "key%06d", i), value))
	}
	require.NoError(t, db.Flush())
	for i := range 5 { // the reused log's own batches, before its earlier use's
		require.NoError(t, db.Put(fmt.Appendf(nil, "last%d", i), []byte("v")))
	}
	// A copy now is what a crash leaves: Close would cut the reused log
	// to its own batches.
	crashed := filepath.Join(t.TempDir(), "crashed")
	require.NoError(t, os.Mkdir(crashed, 0o755))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(crashed, e.Name()), data, 0o644))
	}
	require.NoError(t, db.Close())
	dir = crashed

	layout, err := inspect.ReadLayout(dir, nil)
	require.NoError(t, err)
	require.NotEmpty(t, layout.Logs)
	last := layout.Logs[len(layout.Logs)-1]
	err = inspect.ReadLog(filepath.Join(dir, fmt.Sprintf("%06d.log", last.Number)), layout.LogFormat, nil, nil)
	require.ErrorIs(t, err, inspect.ErrCorruption, "seed %d: the reused log's file holds its earlier use after its own batches", seed)
	got, err := countReplayed(dir, layout)
	require.NoError(t, err)
	report, err := simpledb.Verify(dir, nil, nil)
	require.NoError(t, err)
	require.Empty(t, report.Damage)
	require.Equal(t, int(report.Batches), got.batches, "seed %d", seed)
	require.Equal(t, replayed{batches: 5, writes: 5, bytes: int64(5 * len("last0v"))}, got, "seed %d", seed)
}
