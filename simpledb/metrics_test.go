package simpledb

import (
	"encoding/json"
	"expvar"
	"fmt"
	"testing"

	"github.com/stratadb/strata/vfs"
	"github.com/stretchr/testify/require"
)

// Metrics describes the levels, the latencies and the transactions of a
// database that flushed, compacted, read and committed, and prints them.
func TestMetrics(t *testing.T) {
	opts := testOptions(vfs.NewMem())
	opts.DisableAutoCompaction = true
	db, err := Open("/db", opts)
	require.NoError(t, err)
	defer db.Close()
	require.Equal(t, LatencyStats{}, db.Metrics().Commit, "nothing timed yet")

	value := make([]byte, 500)
	for i := range 400 {
		require.NoError(t, db.Put(fmt.Appendf(nil, "key%04d", i), value, Sync))
	}
	require.NoError(t, db.Flush())
	require.NoError(t, db.Compact())
	for i := range 400 {
		require.NoError(t, db.Put(fmt.Appendf(nil, "key%04d", i), value, NoSync))
	}
	require.NoError(t, db.Flush())
	for i := range 400 {
		_, err := db.Get(fmt.Appendf(nil, "key%04d", i))
		require.NoError(t, err)
	}
	tx, err := db.NewTxn(true)
	require.NoError(t, err)
	_, err = tx.Get([]byte("key0001"))
	require.NoError(t, err)
	require.NoError(t, db.Put([]byte("key0001"), value, NoSync)) // meets tx's read
	require.NoError(t, tx.Put([]byte("key0002"), value))
	require.ErrorIs(t, tx.Commit(NoSync), ErrConflict)
	require.NoError(t, db.Update(0, func(tx *Txn) error { return tx.Put([]byte("key0003"), value) }))

	m := db.Metrics()
	require.Positive(t, m.Levels[0].Tables)
	require.Positive(t, m.Levels[1].Tables)
	require.Equal(t, m.Levels[0].Tables+1, m.ReadAmplification, "L0's tables and L1")
	require.InDelta(t, 1.0, m.Levels[0].WriteAmplification, 1e-9, "L0 writes what comes in")
	require.Positive(t, m.Levels[1].BytesIn)
	require.Positive(t, m.Levels[1].BytesWritten)
	require.Positive(t, m.Levels[0].BytesRead)
	require.InDelta(t, float64(m.Levels[0].Tables)/2, m.Levels[0].Score, 1e-9, "tables over L0CompactionTrigger, 2")
	for name, l := range map[string]LatencyStats{"commit": m.Commit, "get": m.Get, "log sync": m.LogSync, "flush": m.Flush, "compaction": m.Compaction} {
		require.Positive(t, l.Count, name)
		require.Positive(t, l.Max, name)
		require.LessOrEqual(t, l.P50, l.P99, name)
		require.LessOrEqual(t, l.P99, l.Max, name)
	}
	require.Equal(t, m.Flushes, m.Flush.Count)
	require.Equal(t, int64(1), m.TxnCommits)
	require.Equal(t, int64(1), m.TxnConflicts)

	s := m.String()
	for _, want := range []string{"level", "L0", "L1", "total", fmt.Sprintf("read amplification %d", m.ReadAmplification), "block cache", "log fsync", "compaction", "1 committed, 1 conflicted"} {
		require.Contains(t, s, want)
	}
	t.Log("\n" + s)
}

// PublishExpvar serves Metrics as JSON under its name, and refuses a name
// taken.
func TestPublishExpvar(t *testing.T) {
	db, err := Open("/db", testOptions(vfs.NewMem()))
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.Put([]byte("k"), []byte("v"), Sync))
	name := fmt.Sprintf("strata-test-%p", db)
	require.NoError(t, db.PublishExpvar(name))
	require.ErrorIs(t, db.PublishExpvar(name), ErrInvalidOption)
	require.ErrorIs(t, db.PublishExpvar(""), ErrInvalidOption)

	var got Metrics
	require.NoError(t, json.Unmarshal([]byte(expvar.Get(name).String()), &got))
	require.Equal(t, int64(1), got.Writes)
	require.Equal(t, int64(1), got.LogSync.Count)
}
