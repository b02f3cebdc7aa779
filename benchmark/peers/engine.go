package main

import (
	"errors"
	"fmt"
)

// Engine is one key-value store, open on one directory. The workloads call
// it from one goroutine or, for the synced and mixed workloads, from
// several at once; every adapter is safe for that.
type Engine interface {
	// Put writes key = value with the durability the engine was opened
	// with (settings.sync). The engine does not keep key or value: the
	// caller reuses them.
	Put(key, value []byte) error
	// Get calls visit with key's value, valid only during the call, and
	// returns visit's error; errNotFound if the key is absent.
	Get(key []byte, visit func(value []byte) error) error
	// Scan calls visit with every entry in key order, each valid only
	// during its call, and stops at visit's first error. errUnsupported if
	// the engine cannot iterate.
	Scan(visit func(key, value []byte) error) error
	// Close flushes what the engine flushes on close and releases it.
	Close() error
}

// The operations not every engine has are optional interfaces: an adapter
// implements one when its engine has the operation, and a workload that
// needs it reports errUnsupported (n/a in the tables) for an engine without.

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

// settings are what a workload asks of an engine when opening it.
type settings struct {
	// sync makes every Put durable before it returns, with the engine's
	// own synced-write option; otherwise writes are unsynced.
	sync bool
	// cacheBytes is the block cache size; 0 leaves the engine's default.
	cacheBytes int64
}

// engine names an adapter and opens it.
type engine struct {
	name  string // as written in flags and JSON
	title string // as written in the tables
	open  func(dir string, s settings) (Engine, error)
}

// engines lists every engine, Strata first; the tables' columns follow this
// order.
var engines = []engine{
	{"strata", "Strata", openStrata},
	{"pebble", "Pebble", openPebble},
	{"goleveldb", "goleveldb", openGoleveldb},
	{"badger", "Badger", openBadger},
	{"gosstables", "go-sstables", openGoSSTables},
}

// Errors shared by the adapters, which translate their engine's own.
var (
	errNotFound    = errors.New("peers: key not found")
	errUnsupported = errors.New("peers: not supported by this engine")
)

// findEngine returns the engine with the given name.
func findEngine(name string) (engine, error) {
	for _, e := range engines {
		if e.name == name {
			return e, nil
		}
	}
	return engine{}, fmt.Errorf("peers: no engine %q", name)
}
