package simpledb

import "time"

// statCounters are the running totals behind Stats; guarded by DB.mu.
type statCounters struct {
	flushes, flushBytes             int64
	compactions                     int64
	compactionRead, compactionBytes int64
	stalls                          int64
	stallTime                       time.Duration
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
	// Levels describes L0 to L6.
	Levels [numLevels]LevelStats
	// MemstoreBytes is the memory held by the active and immutable
	// memstores; ImmutableMemstores counts those awaiting their flush.
	MemstoreBytes      int64
	ImmutableMemstores int
	// Writes counts committed batches; UserBytes sums their keys and values.
	Writes, UserBytes int64
	// LogBytes counts bytes appended to write-ahead logs; LogSyncs counts
	// their fsyncs, which group commit shares between concurrent writers,
	// and LogSyncTime sums how long those took.
	LogBytes, LogSyncs int64
	LogSyncTime        time.Duration
	// Flushes and FlushBytes count memstore flushes and the bytes of the
	// tables they wrote.
	Flushes, FlushBytes int64
	// Compactions, CompactionBytesRead and CompactionBytesWritten count
	// compactions and the table bytes they read and wrote.
	Compactions, CompactionBytesRead, CompactionBytesWritten int64
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
}

// Stats returns the database's statistics.
func (d *DB) Stats() Stats {
	// walMu before d.mu: the order the write path takes them in.
	d.walMu.Lock()
	w := d.writeStats
	d.walMu.Unlock()
	d.mu.Lock()
	defer d.mu.Unlock()
	var s Stats
	for level, tables := range d.current.levels {
		s.Levels[level].Tables = len(tables)
		s.Levels[level].Bytes = d.current.levelSize(level)
	}
	s.MemstoreBytes = d.mem.m.SizeBytes()
	for _, mt := range d.imm {
		s.MemstoreBytes += mt.m.SizeBytes()
	}
	s.ImmutableMemstores = len(d.imm)
	c := d.stats
	s.Writes, s.UserBytes, s.LogBytes, s.LogSyncs = w.writes, w.userBytes, w.logBytes, d.logSyncs.Load()
	s.LogSyncTime = time.Duration(d.logSyncNanos.Load())
	s.Flushes, s.FlushBytes = c.flushes, c.flushBytes
	s.Compactions, s.CompactionBytesRead, s.CompactionBytesWritten = c.compactions, c.compactionRead, c.compactionBytes
	if w.userBytes > 0 {
		s.WriteAmplification = float64(w.logBytes+c.flushBytes+c.compactionBytes) / float64(w.userBytes)
	}
	s.Stalls, s.StallTime = c.stalls, c.stallTime
	if d.cache != nil {
		cs := d.cache.Stats()
		s.BlockCacheHits, s.BlockCacheMisses = cs.Hits, cs.Misses
	}
	return s
}
