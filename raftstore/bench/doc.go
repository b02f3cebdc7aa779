// Package bench measures raftstore.Store beside the log stores raft users
// pick today, raft-boltdb/v2 (bbolt) and raft-wal, in one run: synced
// StoreLogs in batches, random GetLog, DeleteRange of 100,000 entries,
// and the apply throughput of a 3-node in-process cluster with 64
// concurrent clients, each store under every node. Its benchmarks are
// its only code; `make bench-raft` runs them and summarises the repeats
// with ./report. Only this package imports the peer stores.
package bench
