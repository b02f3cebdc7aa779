package main

// result is one child's run: one engine (or the disk probe), one workload,
// one configuration, one repeat. A child prints it as one JSON line; the
// raw results file holds them all.
type result struct {
	Engine   string `json:"engine"`
	Workload string `json:"workload"`
	Config   string `json:"config,omitempty"` // empty for disk probes
	Repeat   int    `json:"repeat"`
	Keys     int    `json:"keys"`
	// ValueSize is the run's -value-size: the value length of the fill,
	// read, scan and mixed workloads (the synced, transaction and counter
	// workloads keep their own); 0 for disk probes.
	ValueSize int `json:"value_size,omitempty"`
	// Ops counts operations, or entries for a scan; Rate is Ops per
	// second of Seconds, the timed part's wall time.
	Ops     int64   `json:"ops"`
	Seconds float64 `json:"seconds"`
	Rate    float64 `json:"rate"`
	Unit    string  `json:"unit"`
	// FillSeconds is the untimed fill of a read, mixed or uncontended
	// transaction workload: p.keys unsynced Puts in random order, then a
	// close and a reopen.
	FillSeconds float64 `json:"fill_seconds,omitempty"`
	// ReopenSeconds is the open after that fill's close: what the engine
	// does with what its logs hold (replays it; writes it out or not).
	ReopenSeconds float64 `json:"reopen_seconds,omitempty"`
	// CloseSeconds is the closing of the engine after the timed part,
	// which is not timed: it flushes what the engine held in memory.
	CloseSeconds float64 `json:"close_seconds,omitempty"`
	// Aborts counts the transactions that aborted on a conflict and ran
	// again, in a transaction or counter workload; Ops counts commits.
	Aborts int64 `json:"aborts,omitempty"`
	// ReadP50 and ReadP99 are the mixed workload's read latencies, in µs.
	ReadP50 float64 `json:"read_p50_us,omitempty"`
	ReadP99 float64 `json:"read_p99_us,omitempty"`
	// PeakRSS is the child's peak resident memory, fill included, in MiB,
	// as the parent reads it from the child's resource usage; 0 where the
	// system does not say.
	PeakRSS float64 `json:"peak_rss_mib,omitempty"`
	// DiskWrittenMiB is what the child caused the disk to write, fill
	// included: its resource usage's block output (Linux counts the bytes
	// a process dirties, written back by whoever), in MiB. A fill's over
	// its keys' and values' bytes is the engine's write amplification,
	// logs included.
	DiskWrittenMiB float64 `json:"disk_written_mib,omitempty"`
	// DBSizeMiB is the size of the database's files after the run's
	// Close, in MiB.
	DBSizeMiB float64 `json:"db_size_mib,omitempty"`
	// StallSeconds is how long the engine held writes back during the
	// timed part (see staller); nil for an engine that does not say.
	StallSeconds *float64 `json:"stall_seconds,omitempty"`
	// Unsupported says why the engine cannot run the workload; the other
	// figures are then zero.
	Unsupported string `json:"unsupported,omitempty"`
}
