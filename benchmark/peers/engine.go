package main

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// Engine is one key-value store, open on one directory. The workloads call
// it from one goroutine or, for the synced, mixed, transaction and counter
// workloads, from several at once; every adapter is safe for that.
type Engine interface {
	// Put writes key = value with the durability the engine was opened
	// with (settings.sync). The engine does not keep key or value: the
	// caller reuses them.
	Put(key, value []byte) error
	// Get calls visit with key's value, valid only during the call, and
	// returns visit's error; errNotFound if the key is absent.
	Get(key []byte, visit func(value []byte) error) error
	// Close flushes what the engine flushes on close and releases it.
	Close() error
}

// The operations not every engine has are optional interfaces: an adapter
// implements one when its engine has the operation. A workload lists the
// capabilities it needs, and the child reports an engine without one as
// unsupported (n/a in the tables) before it fills anything.

// scanner is an Engine that iterates forward.
type scanner interface {
	// Scan calls visit with every entry in key order, each valid only
	// during its call, and stops at visit's first error.
	Scan(visit func(key, value []byte) error) error
}

// reverseScanner is an Engine that iterates backward.
type reverseScanner interface {
	// ScanReverse calls visit with every entry in descending key order,
	// each valid only during its call, and stops at visit's first error.
	ScanReverse(visit func(key, value []byte) error) error
}

// checkpointer is an Engine that writes a consistent copy of itself.
type checkpointer interface {
	// Checkpoint writes the database, as of one moment during the call,
	// into dir, which does not exist yet and is on the database's
	// filesystem, so that tables can be hard-linked. The copy opens as a
	// database of its own.
	Checkpoint(dir string) error
}

// rangeDeleter is an Engine that deletes a range of keys in one operation.
type rangeDeleter interface {
	// DeleteRange deletes every key in [start, end), with the durability
	// the engine was opened with (settings.sync).
	DeleteRange(start, end []byte) error
}

// transactor is an Engine with read-write transactions.
type transactor interface {
	// Update runs fn in a read-write transaction and commits it, with the
	// durability the engine was opened with (settings.sync). When the
	// commit aborts on a conflict with another transaction's writes, it
	// runs fn again in a new transaction, up to maxRetries times; aborts
	// is how many attempts aborted so. An error from fn ends the
	// transaction without writing and is returned.
	Update(fn func(tx txn) error) (aborts int, err error)
}

// txn is one read-write transaction of a transactor, valid during fn.
type txn interface {
	// Get calls visit with key's value as the transaction sees it (its own
	// writes over what it read from), valid only during the call, and
	// returns visit's error; errNotFound if the key is absent.
	Get(key []byte, visit func(value []byte) error) error
	// Put writes key = value when the transaction commits. The engine may
	// keep key and value until the transaction ends (Badger and bbolt
	// do): the caller leaves them unchanged until then.
	Put(key, value []byte) error
}

// maxRetries bounds the retries of a transaction that keeps aborting, so
// that an engine that livelocks fails the run rather than hangs it.
const maxRetries = 1000

// merger is an Engine with a merge operator for counters.
type merger interface {
	// Merge adds operand, an 8-byte little-endian uint64, to key's value,
	// another such uint64 (0 if the key is absent), without reading it,
	// with the durability the engine was opened with (settings.sync).
	Merge(key, operand []byte) error
}

// staller is an Engine that says how long it held writes back, waiting
// for its flushes or compactions, since it was opened.
type staller interface {
	// StallTime is that time. Strata sums each stalled write's wait;
	// Pebble, the length of each stall it announces (its event listener's
	// WriteStallBegin to WriteStallEnd), which writes share: with several
	// writers Strata's sum counts each of them.
	StallTime() time.Duration
}

// capability is one optional interface, as a workload needs it.
type capability struct {
	name string            // what an engine without it lacks, for the results
	of   func(Engine) bool // whether an engine implements it
}

// The capabilities of the workloads that need one.
var (
	canScan        = capability{"iteration", implements[scanner]}
	canScanReverse = capability{"backward iteration", implements[reverseScanner]}
	canCheckpoint  = capability{"checkpoint", implements[checkpointer]}
	canDeleteRange = capability{"range deletion", implements[rangeDeleter]}
	canTransact    = capability{"transactions", implements[transactor]}
	canMerge       = capability{"merge operator", implements[merger]}
)

// implements reports whether e implements T.
func implements[T any](e Engine) bool {
	_, ok := e.(T)
	return ok
}

// settings are what a workload asks of an engine when opening it.
type settings struct {
	// sync makes every Put durable before it returns, with the engine's
	// own synced-write option; otherwise writes are unsynced.
	sync bool
	// cacheBytes is the block cache size; 0 leaves the engine's default.
	// Strata's block cache is what its MemoryBudget leaves of the
	// memstores it may hold: see openStrataWith.
	cacheBytes int64
	// memtableBytes is the memtable size; 0 leaves the engine's default.
	memtableBytes int64
	// wholeBudget makes cacheBytes Strata's whole MemoryBudget, its
	// memstores included (the budget configuration).
	wholeBudget bool
}

// engine names an adapter and opens it.
type engine struct {
	name  string // as written in flags and JSON
	title string // as written in the tables
	open  func(dir string, s settings) (Engine, error)
	// strata marks Strata's configurations, which the ratio columns never
	// count as Strata's peers.
	strata bool
}

// engines lists every engine at its defaults, Strata first: the default of
// -engines, whose order the tables' columns follow.
var engines = []engine{
	{name: "strata", title: "Strata", open: openStrata, strata: true},
	{name: "pebble", title: "Pebble", open: openPebble},
	{name: "goleveldb", title: "goleveldb", open: openGoleveldb},
	{name: "badger", title: "Badger", open: openBadger},
	{name: "bbolt", title: "bbolt", open: openBbolt},
	{name: "gosstables", title: "go-sstables", open: openGoSSTables},
}

// variants are engines in another configuration, run only when -engines
// names them: Strata without its blob files, and with every value of 64
// bytes and more in them (to find the value size from which separation
// pays: BlobThreshold's default), and Pebble with its blob files, for
// values of blobThreshold bytes and more (-value-size 1024 and up).
var variants = []engine{
	{name: "strata-inline", title: "Strata, no blob files", open: openStrataInline, strata: true},
	{name: "strata-separated", title: "Strata, blob files from 64 B", open: openStrataSeparated, strata: true},
	{name: "pebble-blobs", title: "Pebble, blob files", open: openPebbleBlobs},
}

// errNotFound is Get's error for an absent key; the adapters translate
// their engine's own.
var errNotFound = errors.New("peers: key not found")

// findEngine returns the engine or variant with the given name.
func findEngine(name string) (engine, error) {
	for _, e := range slices.Concat(engines, variants) {
		if e.name == name {
			return e, nil
		}
	}
	return engine{}, fmt.Errorf("peers: no engine %q", name)
}
