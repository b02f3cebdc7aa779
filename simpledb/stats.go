package simpledb

import (
	"sync/atomic"
	"time"
)

// statCounters are the running totals behind Stats of the background work;
// guarded by DB.mu.
type statCounters struct {
	flushes, flushBytes             int64
	compactions                     int64
	compactionRead, compactionBytes int64
	trivialMoves                    int64
	logsRecycled                    int64
	stalls                          int64
	stallTime                       time.Duration
	backgroundErrors, resumes       int64
	compactionsPaused               int64
	// Per level: the bytes that came in from above (a flush's table, for
	// L0; a compaction's inputs from the level above), the table bytes
	// written into it, and the bytes compactions read from it.
	levelIn, levelWritten, levelRead [NumLevels]int64
}

// writeCounters are the running totals behind Stats of the write path. The
// commit pipeline adds to them; Stats reads them without its locks.
type writeCounters struct {
	writes, userBytes atomic.Int64
	// logBytes is also the logs' logical length, which the sync stage
	// measures durability in.
	logBytes         atomic.Int64
	syncs, syncNanos atomic.Int64
	mergesFolded     atomic.Int64
}

// writeStats are writeCounters' values at one moment.
type writeStats struct {
	writes, userBytes, logBytes, syncs, syncNanos, mergesFolded int64
}

// LevelStats describes one level.
type LevelStats struct {
	// Tables counts the level's tables; Bytes sums their sizes.
	Tables int
	Bytes  int64
}

// Stats describes the database's state and the work it has done since
// Open.
type Stats struct {
	// Levels describes L0 to L6, NumLevels of them.
	Levels [NumLevels]LevelStats
	// MemstoreBytes is the memory held by the active and immutable
	// memstores; ImmutableMemstores counts those awaiting their flush.
	// MemstoreEntries counts the entries they hold: every version of
	// every key, deletions included, and each range deletion.
	MemstoreBytes      int64
	ImmutableMemstores int
	MemstoreEntries    int
	// MergesFolded counts merge operands folded, as they were applied,
	// into the newest version of their key in the memstore, rather than
	// added as entries (see Options.Merger).
	MergesFolded int64
	// Writes counts committed batches; UserBytes sums their keys and values.
	Writes, UserBytes int64
	// LogBytes counts bytes appended to write-ahead logs; LogSyncs counts
	// their fsyncs, which group commit shares between concurrent writers,
	// and LogSyncTime sums how long those took.
	LogBytes, LogSyncs int64
	LogSyncTime        time.Duration
	// LogsRecycled counts logs started in the file of an obsolete one
	// rather than a new file: see Options.RecycledLogs.
	LogsRecycled int64
	// Flushes and FlushBytes count memstore flushes and the bytes of the
	// tables they wrote.
	Flushes, FlushBytes int64
	// Compactions, CompactionBytesRead and CompactionBytesWritten count
	// compactions that rewrote tables and the table bytes they read and
	// wrote.
	Compactions, CompactionBytesRead, CompactionBytesWritten int64
	// TrivialMoves counts tables a background compaction moved to the next
	// level by a manifest edit alone, reading and writing none of their
	// bytes: a table that nothing in the next level overlaps.
	TrivialMoves int64
	// WriteAmplification is the bytes written to disk (logs, flushes,
	// compactions) per byte of user data.
	WriteAmplification float64
	// Stalls counts writes that waited for a flush or a compaction;
	// StallTime is the total time they waited.
	Stalls    int64
	StallTime time.Duration
	// BlockCacheHits and BlockCacheMisses count point reads of table
	// blocks served by, or missing from, the block cache.
	BlockCacheHits, BlockCacheMisses int64
	// BlockCacheBytes is the memory the block cache holds, and
	// MemoryCharged what is charged to the memory budget besides: the
	// memstores and the open tables' indexes and filters (see
	// Options.MemoryBudget). Their sum stays within the budget unless
	// MemoryCharged alone exceeds it; the cache is then empty.
	BlockCacheBytes, MemoryCharged int64
	// OpenTables counts the table files open now: at most
	// Options.MaxOpenFiles, except while reads pin more tables than that.
	OpenTables int
	// TableReopens counts tables that reads opened again after the table
	// cache had closed them: many mean MaxOpenFiles is smaller than the
	// tables reads keep returning to.
	TableReopens int64
	// BackgroundErrors counts the failures that stopped writes (see
	// ErrBackground), Resumes the recoveries from them without a reopen
	// (see Resume), and CompactionsPaused the compactions put off for want
	// of space, which stop nothing.
	BackgroundErrors, Resumes, CompactionsPaused int64
}

// Stats returns the database's statistics.
func (d *DB) Stats() Stats {
	var s Stats
	w := d.commits.writeStats()
	s.Writes, s.UserBytes = w.writes, w.userBytes
	s.LogBytes, s.LogSyncs, s.LogSyncTime = w.logBytes, w.syncs, time.Duration(w.syncNanos)
	s.MergesFolded = w.mergesFolded
	d.mu.Lock()
	defer d.mu.Unlock()
	for level, tables := range d.mu.versions.current().levels {
		s.Levels[level].Tables = len(tables)
		s.Levels[level].Bytes = d.mu.versions.current().levelSize(level)
	}
	for _, mt := range d.mu.memstores.all() {
		s.MemstoreBytes += mt.m.SizeBytes()
		s.MemstoreEntries += mt.m.Len() + len(mt.m.RangeDeletions())
	}
	s.ImmutableMemstores = d.mu.memstores.immutable()
	c := d.mu.stats
	s.Flushes, s.FlushBytes = c.flushes, c.flushBytes
	s.Compactions, s.CompactionBytesRead, s.CompactionBytesWritten = c.compactions, c.compactionRead, c.compactionBytes
	s.TrivialMoves = c.trivialMoves
	s.LogsRecycled = c.logsRecycled
	if s.UserBytes > 0 {
		s.WriteAmplification = float64(s.LogBytes+c.flushBytes+c.compactionBytes) / float64(s.UserBytes)
	}
	s.Stalls, s.StallTime = c.stalls, c.stallTime
	s.BackgroundErrors, s.Resumes, s.CompactionsPaused = c.backgroundErrors, c.resumes, c.compactionsPaused
	s.OpenTables, s.TableReopens = d.tables.stats()
	cs := d.cache.Stats()
	s.BlockCacheHits, s.BlockCacheMisses = cs.Hits, cs.Misses
	s.BlockCacheBytes, s.MemoryCharged = cs.Used, cs.Reserved
	return s
}
