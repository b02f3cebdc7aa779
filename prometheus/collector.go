package strataprom

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stratadb/strata/simpledb"
)

// Options configures a collector. The zero value is valid.
type Options struct {
	// Namespace prefixes every metric's name. Default: "strata".
	Namespace string
	// ConstLabels are added to every metric, to tell databases apart
	// (db="orders"). Default: none.
	ConstLabels prometheus.Labels
}

// Collector exports a database's Metrics. Register it with a registry; it
// is safe for concurrent scrapes.
type Collector struct {
	db    *simpledb.DB
	descs map[string]*prometheus.Desc
}

// metric is one exported metric: its name, help and kind, and how to read
// it from Metrics.
type metric struct {
	name, help string
	kind       prometheus.ValueType
	value      func(m *simpledb.Metrics) float64
}

// The metrics read from Metrics, one value each.
var plain = []metric{
	{"memstore_bytes", "Memory held by the active and immutable memstores.", prometheus.GaugeValue, func(m *simpledb.Metrics) float64 { return float64(m.MemstoreBytes) }},
	{"memstores_immutable", "Memstores awaiting their flush.", prometheus.GaugeValue, func(m *simpledb.Metrics) float64 { return float64(m.ImmutableMemstores) }},
	{"memstore_entries", "Entries the memstores hold, every version.", prometheus.GaugeValue, func(m *simpledb.Metrics) float64 { return float64(m.MemstoreEntries) }},
	{"writes_total", "Batches committed.", prometheus.CounterValue, func(m *simpledb.Metrics) float64 { return float64(m.Writes) }},
	{"user_bytes_total", "Bytes of keys and values committed.", prometheus.CounterValue, func(m *simpledb.Metrics) float64 { return float64(m.UserBytes) }},
	{"log_bytes_total", "Bytes appended to write-ahead logs.", prometheus.CounterValue, func(m *simpledb.Metrics) float64 { return float64(m.LogBytes) }},
	{"log_syncs_total", "Fsyncs of write-ahead logs.", prometheus.CounterValue, func(m *simpledb.Metrics) float64 { return float64(m.LogSyncs) }},
	{"logs_recycled_total", "Logs started in an obsolete log's file.", prometheus.CounterValue, func(m *simpledb.Metrics) float64 { return float64(m.LogsRecycled) }},
	{"flushes_total", "Memstores flushed.", prometheus.CounterValue, func(m *simpledb.Metrics) float64 { return float64(m.Flushes) }},
	{"flush_bytes_total", "Bytes of the tables flushes wrote.", prometheus.CounterValue, func(m *simpledb.Metrics) float64 { return float64(m.FlushBytes) }},
	{"compactions_total", "Compactions that rewrote tables.", prometheus.CounterValue, func(m *simpledb.Metrics) float64 { return float64(m.Compactions) }},
	{"compaction_read_bytes_total", "Table bytes compactions read.", prometheus.CounterValue, func(m *simpledb.Metrics) float64 { return float64(m.CompactionBytesRead) }},
	{"compaction_written_bytes_total", "Table bytes compactions wrote.", prometheus.CounterValue, func(m *simpledb.Metrics) float64 { return float64(m.CompactionBytesWritten) }},
	{"trivial_moves_total", "Tables moved to the next level without a rewrite.", prometheus.CounterValue, func(m *simpledb.Metrics) float64 { return float64(m.TrivialMoves) }},
	{"write_amplification", "Bytes written to disk per user byte.", prometheus.GaugeValue, func(m *simpledb.Metrics) float64 { return m.WriteAmplification }},
	{"read_amplification", "Tables a point read may search at most.", prometheus.GaugeValue, func(m *simpledb.Metrics) float64 { return float64(m.ReadAmplification) }},
	{"stalls_total", "Writes that waited for a flush or a compaction.", prometheus.CounterValue, func(m *simpledb.Metrics) float64 { return float64(m.Stalls) }},
	{"stall_seconds_total", "Time writes waited in stalls.", prometheus.CounterValue, func(m *simpledb.Metrics) float64 { return m.StallTime.Seconds() }},
	{"block_cache_hits_total", "Point reads of blocks the cache served.", prometheus.CounterValue, func(m *simpledb.Metrics) float64 { return float64(m.BlockCacheHits) }},
	{"block_cache_misses_total", "Point reads of blocks the cache missed.", prometheus.CounterValue, func(m *simpledb.Metrics) float64 { return float64(m.BlockCacheMisses) }},
	{"block_cache_bytes", "Memory the block cache holds.", prometheus.GaugeValue, func(m *simpledb.Metrics) float64 { return float64(m.BlockCacheBytes) }},
	{"memory_charged_bytes", "Memory charged to the budget besides the cache.", prometheus.GaugeValue, func(m *simpledb.Metrics) float64 { return float64(m.MemoryCharged) }},
	{"open_tables", "Table files open.", prometheus.GaugeValue, func(m *simpledb.Metrics) float64 { return float64(m.OpenTables) }},
	{"table_reopens_total", "Tables opened again after the table cache closed them.", prometheus.CounterValue, func(m *simpledb.Metrics) float64 { return float64(m.TableReopens) }},
	{"background_errors_total", "Failures that stopped writes.", prometheus.CounterValue, func(m *simpledb.Metrics) float64 { return float64(m.BackgroundErrors) }},
	{"resumes_total", "Recoveries from background errors without a reopen.", prometheus.CounterValue, func(m *simpledb.Metrics) float64 { return float64(m.Resumes) }},
	{"transactions_committed_total", "Transactions committed with writes.", prometheus.CounterValue, func(m *simpledb.Metrics) float64 { return float64(m.TxnCommits) }},
	{"transactions_conflicted_total", "Transactions refused with ErrConflict.", prometheus.CounterValue, func(m *simpledb.Metrics) float64 { return float64(m.TxnConflicts) }},
	{"blob_files", "Blob files holding large values.", prometheus.GaugeValue, func(m *simpledb.Metrics) float64 { return float64(m.Blobs.Files) }},
	{"blob_file_bytes", "Bytes of the blob files on disk.", prometheus.GaugeValue, func(m *simpledb.Metrics) float64 { return float64(m.Blobs.Bytes) }},
	{"blob_value_bytes", "Bytes of the values the blob files hold.", prometheus.GaugeValue, func(m *simpledb.Metrics) float64 { return float64(m.Blobs.ValueBytes) }},
	{"blob_garbage_bytes", "Bytes of blob files' values no table names: overwritten or deleted, for compactions to reclaim.", prometheus.GaugeValue, func(m *simpledb.Metrics) float64 { return float64(m.Blobs.GarbageBytes) }},
}

// The per-level metrics, labelled by level.
var levels = []struct {
	name, help string
	kind       prometheus.ValueType
	value      func(l *simpledb.LevelMetrics) float64
}{
	{"level_tables", "Tables of the level.", prometheus.GaugeValue, func(l *simpledb.LevelMetrics) float64 { return float64(l.Tables) }},
	{"level_bytes", "Bytes of the level's tables.", prometheus.GaugeValue, func(l *simpledb.LevelMetrics) float64 { return float64(l.Bytes) }},
	{"level_score", "How urgently the level needs a compaction (1 and over: it does).", prometheus.GaugeValue, func(l *simpledb.LevelMetrics) float64 { return l.Score }},
	{"level_in_bytes_total", "Bytes that came into the level from above.", prometheus.CounterValue, func(l *simpledb.LevelMetrics) float64 { return float64(l.BytesIn) }},
	{"level_written_bytes_total", "Table bytes written into the level.", prometheus.CounterValue, func(l *simpledb.LevelMetrics) float64 { return float64(l.BytesWritten) }},
	{"level_read_bytes_total", "Bytes compactions read from the level.", prometheus.CounterValue, func(l *simpledb.LevelMetrics) float64 { return float64(l.BytesRead) }},
}

// The latency histograms.
var latencies = []struct {
	name, help string
	stats      func(m *simpledb.Metrics) simpledb.LatencyStats
}{
	{"commit_duration_seconds", "Time a write took in the commit pipeline (sampled one in 8).", func(m *simpledb.Metrics) simpledb.LatencyStats { return m.Commit }},
	{"get_duration_seconds", "Time a point read took (sampled one in 8).", func(m *simpledb.Metrics) simpledb.LatencyStats { return m.Get }},
	{"log_sync_duration_seconds", "Time an fsync of the log took.", func(m *simpledb.Metrics) simpledb.LatencyStats { return m.LogSync }},
	{"flush_duration_seconds", "Time a flush took.", func(m *simpledb.Metrics) simpledb.LatencyStats { return m.Flush }},
	{"compaction_duration_seconds", "Time a compaction took.", func(m *simpledb.Metrics) simpledb.LatencyStats { return m.Compaction }},
}

// NewCollector returns a collector of db's metrics. A nil opts selects the
// defaults.
func NewCollector(db *simpledb.DB, opts *Options) *Collector {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Namespace == "" {
		o.Namespace = "strata"
	}
	c := &Collector{db: db, descs: map[string]*prometheus.Desc{}}
	desc := func(name, help string, labels ...string) {
		c.descs[name] = prometheus.NewDesc(prometheus.BuildFQName(o.Namespace, "", name), help, labels, o.ConstLabels)
	}
	for _, m := range plain {
		desc(m.name, m.help)
	}
	for _, m := range levels {
		desc(m.name, m.help, "level")
	}
	for _, m := range latencies {
		desc(m.name, m.help)
	}
	return c
}

// Describe sends every metric's description.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

// Collect reads the database's Metrics once and sends every metric.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	m := c.db.Metrics()
	for _, p := range plain {
		ch <- prometheus.MustNewConstMetric(c.descs[p.name], p.kind, p.value(&m))
	}
	for level := range m.Levels {
		for _, p := range levels {
			ch <- prometheus.MustNewConstMetric(c.descs[p.name], p.kind, p.value(&m.Levels[level]), fmt.Sprint(level))
		}
	}
	for _, l := range latencies {
		s := l.stats(&m)
		buckets := make(map[float64]uint64, len(s.Buckets))
		for _, b := range s.Buckets {
			buckets[b.UpperBound.Seconds()] = uint64(b.Count)
		}
		ch <- prometheus.MustNewConstHistogram(c.descs[l.name], uint64(s.Count), s.Sum.Seconds(), buckets)
	}
}
