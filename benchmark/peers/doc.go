// Command peers measures Strata side by side with other embedded Go
// key-value engines: Pebble, goleveldb, Badger, bbolt and go-sstables'
// simpledb. It is its own module, so that the library never depends on its
// peers.
//
//	go run . -keys 1000000 -repeats 3 -json results.json -svg ratios.svg
//
// # How it runs
//
// The parent process plans every run (engine × workload × configuration ×
// repeat), interleaved: for each repeat, configuration and workload, every
// engine in turn, in an order rotated between repeats. It runs each in a
// child, a copy of this binary started with STRATA_PEERS_CHILD set, on a
// fresh directory that it removes afterwards; the child prints one JSON
// result line. A fresh process per run keeps one engine's caches, goroutines
// and garbage out of the next one's figures.
//
// The read, scan, checkpoint, deleterange, mixed and uncontended
// transaction workloads first fill the database in the child: every key,
// unsynced, in a seeded random order, then a close and a reopen (synced,
// for a synced workload). That fill is timed apart (fill_seconds in the
// JSON) and never counts in the workload's figure. Every value read is
// compared, byte for byte, with the one written; a wrong or missing value
// fails the whole run. An engine without an operation a workload needs (an
// optional interface of its adapter) is reported as unsupported before any
// fill.
//
// The transaction workloads move amounts between accounts, 4 per
// transaction, on the filled database or on 100 hot keys, retrying each
// transaction that aborts on a conflict and counting the aborts; afterwards
// every account is read back, and the balances must sum to zero and the
// write counts to 4 per commit. The counter workloads add 1 to 100
// counters, by a merge operator or by a read-modify-write transaction;
// afterwards each counter must hold the increments committed to it.
//
// Before the engines of each repeat, disk probes measure what the
// directory's disk allows a synced log: appends and in-place overwrites of
// 1 KB and 32 KB records, each followed by fdatasync.
//
// Values are -value-size bytes (default 100) in the fill, read, scan and
// mixed workloads; the synced, transaction and counter workloads keep
// their own. For large values, three more engine names run only when
// -engines names them: strata-inline (Strata without blob files),
// strata-separated (Strata with values from 64 bytes in blob files) and
// pebble-blobs (Pebble with its value separation from Strata's default
// threshold, 512 bytes).
//
// See README.md for the workloads and each engine's settings.
package main
