package simpledb

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/stratadb/strata/internal/units"
)

// latencies are the histograms behind Metrics.
type latencies struct {
	commit, get, logSync, flush, compaction latencyHistogram
}

// sampleStart returns the time now for one commit or Get in
// latencySample, to time it (see addSince), and the zero Time for the
// others: the two clock reads then cost each 1/latencySample of what they
// would (some 40 ns against a Get of a few microseconds).
func sampleStart() time.Time {
	if rand.Uint32()%latencySample != 0 {
		return time.Time{}
	}
	return time.Now()
}

// addSince adds the time since start, unless start is zero (see
// sampleStart).
func (h *latencyHistogram) addSince(start time.Time) {
	if !start.IsZero() {
		h.add(time.Since(start))
	}
}

const latencySample = 8

// LevelMetrics describes a level for Metrics.
type LevelMetrics struct {
	// Tables and Bytes are as in LevelStats.
	Tables int
	Bytes  int64
	// Score is how urgently the level needs a compaction: 1 and over, it
	// does (L0's tables over L0CompactionTrigger, a lower level's size
	// over its target).
	Score float64
	// BytesIn came in from above: the flushes' tables for L0, the bytes
	// compactions took from the level above for the others. BytesWritten
	// are the table bytes written into the level, and BytesRead those
	// compactions read from it, since Open.
	BytesIn, BytesWritten, BytesRead int64
	// WriteAmplification is BytesWritten over BytesIn: how often the
	// level rewrote what came in (a table moved in counts in, not
	// written). 0 before anything came in.
	WriteAmplification float64
}

// Metrics is what an operator watches: Stats, per-level detail, latencies
// and transactions. DB.Metrics returns it; String prints it as a table.
type Metrics struct {
	Stats
	Levels [NumLevels]LevelMetrics
	// ReadAmplification is how many tables a point read may search at
	// most: every L0 table, and one table of each lower level that has
	// any.
	ReadAmplification int
	// Commit is the time a write (Put, Write, a transaction's Commit)
	// took in the commit pipeline, and Get a point read's, each sampled
	// one in 8; LogSync an fsync of the log's; Flush and Compaction the
	// background jobs' (moves of a table not counted).
	Commit, Get, LogSync, Flush, Compaction LatencyStats
	// TxnCommits and TxnConflicts count transactions' commits that wrote,
	// and those refused with ErrConflict.
	TxnCommits, TxnConflicts int64
	// Blobs describe the blob files that hold the large values.
	Blobs BlobMetrics
}

// BlobMetrics describe a database's blob files (see
// Options.BlobThreshold).
type BlobMetrics struct {
	// Files counts the blob files, and Bytes their size on disk.
	Files int
	Bytes int64
	// ValueBytes are the bytes of the values they hold, and GarbageBytes
	// those of the values no table names any more: overwritten or deleted,
	// which compactions reclaim (Options.BlobRewriteRatio).
	ValueBytes, GarbageBytes int64
}

// Metrics returns the database's metrics. It takes the database's lock
// about as long as Stats does, and reads the histograms without one: cheap
// enough to call every second (BenchmarkSimpleDBMetrics).
func (d *DB) Metrics() Metrics {
	m := Metrics{Stats: d.Stats()}
	d.mu.Lock()
	v, c := d.mu.versions.current(), d.mu.stats
	for level := range m.Levels {
		l := &m.Levels[level]
		l.Tables, l.Bytes = m.Stats.Levels[level].Tables, m.Stats.Levels[level].Bytes
		l.Score = d.opts.levelScore(v, level)
		l.BytesIn, l.BytesWritten, l.BytesRead = c.levelIn[level], c.levelWritten[level], c.levelRead[level]
		if l.BytesIn > 0 {
			l.WriteAmplification = float64(l.BytesWritten) / float64(l.BytesIn)
		}
	}
	m.Blobs = v.blobTotals
	d.mu.Unlock()
	m.ReadAmplification = m.Levels[0].Tables
	for _, l := range m.Levels[1:] {
		if l.Tables > 0 {
			m.ReadAmplification++
		}
	}
	m.Commit, m.Get, m.LogSync = d.latencies.commit.stats(), d.latencies.get.stats(), d.latencies.logSync.stats()
	m.Flush, m.Compaction = d.latencies.flush.stats(), d.latencies.compaction.stats()
	m.TxnCommits, m.TxnConflicts = d.txnCommits.Load(), d.txnConflicts.Load()
	return m
}

// String prints the metrics for people: a table of the levels, then the
// memstores, the cache, the latencies and the rest.
func (m Metrics) String() string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "level\ttables\tsize\tscore\tin\twritten\tread\tw-amp\t")
	var total LevelMetrics
	for level, l := range m.Levels {
		if l.Tables == 0 && l.BytesIn == 0 && l.BytesRead == 0 {
			continue
		}
		fmt.Fprintf(tw, "L%d\t%d\t%s\t%.2f\t%s\t%s\t%s\t%.2f\t\n", level, l.Tables, units.Bytes(l.Bytes), l.Score,
			units.Bytes(l.BytesIn), units.Bytes(l.BytesWritten), units.Bytes(l.BytesRead), l.WriteAmplification)
		total.Tables += l.Tables
		total.Bytes += l.Bytes
		total.BytesWritten += l.BytesWritten
		total.BytesRead += l.BytesRead
	}
	fmt.Fprintf(tw, "total\t%d\t%s\t\t\t%s\t%s\t\t\n", total.Tables, units.Bytes(total.Bytes), units.Bytes(total.BytesWritten), units.Bytes(total.BytesRead))
	tw.Flush()
	fmt.Fprintf(&b, "read amplification %d, write amplification %.2f (logs, flushes and compactions over user bytes)\n",
		m.ReadAmplification, m.WriteAmplification)
	if m.Blobs.Files > 0 {
		fmt.Fprintf(&b, "blob files: %d, %s, values %s, of which garbage %s\n", m.Blobs.Files, units.Bytes(m.Blobs.Bytes),
			units.Bytes(m.Blobs.ValueBytes), units.Bytes(m.Blobs.GarbageBytes))
	}
	fmt.Fprintf(&b, "memstores: %s in %d (%d immutable), %d entries\n", units.Bytes(m.MemstoreBytes), m.ImmutableMemstores+1, m.ImmutableMemstores, m.MemstoreEntries)
	hitRate := 0.0
	if n := m.BlockCacheHits + m.BlockCacheMisses; n > 0 {
		hitRate = float64(m.BlockCacheHits) / float64(n)
	}
	fmt.Fprintf(&b, "block cache: %s, %.1f%% hits (%d of %d); charged to the budget besides: %s; open tables %d, reopened %d\n",
		units.Bytes(m.BlockCacheBytes), 100*hitRate, m.BlockCacheHits, m.BlockCacheHits+m.BlockCacheMisses, units.Bytes(m.MemoryCharged), m.OpenTables, m.TableReopens)
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "latency\tcount\tp50\tp99\tmax\t")
	for _, l := range []struct {
		name string
		s    LatencyStats
	}{{"commit", m.Commit}, {"get", m.Get}, {"log fsync", m.LogSync}, {"flush", m.Flush}, {"compaction", m.Compaction}} {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t\n", l.name, l.s.Count, units.Duration(l.s.P50), units.Duration(l.s.P99), units.Duration(l.s.Max))
	}
	tw.Flush()
	fmt.Fprintf(&b, "writes %d (%s), flushes %d, compactions %d (%d moves), stalls %d (%s)\n",
		m.Writes, units.Bytes(m.UserBytes), m.Flushes, m.Compactions, m.TrivialMoves, m.Stalls, units.Duration(m.StallTime))
	fmt.Fprintf(&b, "transactions: %d committed, %d conflicted; background errors %d, resumes %d\n",
		m.TxnCommits, m.TxnConflicts, m.BackgroundErrors, m.Resumes)
	return b.String()
}
