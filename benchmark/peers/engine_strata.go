package main

import (
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/stratadb/strata/simpledb"
)

// strataEngine is Strata's simpledb. Unsynced runs open it with NoSync, so
// Put is acknowledged once in the operating system; synced runs keep the
// default, durable on return, with concurrent writers sharing an fsync.
// Values of 512 bytes and more go to blob files (BlobThreshold's default),
// except in strata-inline.
type strataEngine struct {
	db *simpledb.DB
}

// strataOptions are the options of every Strata run, before the
// workload's settings.
var strataOptions = simpledb.Options{
	// Background events go to the log at Debug and failures at Error;
	// failures also reach the writers as ErrBackground.
	Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	// The counters' merge operator: it adds 8-byte little-endian uint64s,
	// as the Pebble adapter's does.
	Merger: simpledb.Uint64AddMerger,
}

func openStrata(dir string, s settings) (Engine, error) {
	return openStrataWith(strataOptions, dir, s)
}

// openStrataInline opens Strata without blob files (BlobThreshold -1):
// every value in its tables, however large, as before them, so that a run
// sets Strata's key-value separation against the same tree without it.
func openStrataInline(dir string, s settings) (Engine, error) {
	opts := strataOptions
	opts.BlobThreshold = -1
	return openStrataWith(opts, dir, s)
}

// separatedThreshold is strata-separated's BlobThreshold: every value the
// workloads write but the counters' goes to blob files.
const separatedThreshold = 64

// openStrataSeparated opens Strata with values of separatedThreshold
// bytes and more in blob files: against strata-inline, at each value
// size, what separating values of that size costs or saves.
func openStrataSeparated(dir string, s settings) (Engine, error) {
	opts := strataOptions
	opts.BlobThreshold = separatedThreshold
	return openStrataWith(opts, dir, s)
}

// defaultMemstore is simpledb's MemstoreSize at its default budget.
const defaultMemstore = 16 << 20

// openStrataWith opens Strata with opts and the workload's settings. A
// block cache of s.cacheBytes without a memtable size (equal-cache) is a
// MemoryBudget of the cache and two memstores of the default size (the
// active one and one waiting for its flush), so that the cache holds
// s.cacheBytes of blocks, indexes and filters as the others' do: given
// the budget alone, a third of it would go to each memstore, and a 256
// MiB budget had left 84 MiB of cache. The budget configuration gives it
// that whole budget, memstores included; equal-memory, with a memtable
// size, the budget and the memstore size.
func openStrataWith(opts simpledb.Options, dir string, s settings) (Engine, error) {
	opts.NoSync = !s.sync
	opts.MemoryBudget, opts.MemstoreSize = s.cacheBytes, s.memtableBytes
	if s.cacheBytes > 0 && s.memtableBytes == 0 && !s.wholeBudget {
		opts.MemstoreSize = defaultMemstore
		opts.MemoryBudget = s.cacheBytes + 2*defaultMemstore
	}
	db, err := simpledb.Open(dir, &opts)
	if err != nil {
		return nil, err
	}
	return &strataEngine{db: db}, nil
}

func (e *strataEngine) Put(key, value []byte) error {
	return e.db.Put(key, value, simpledb.DefaultSync)
}

// StallTime is the database's Stats().StallTime.
func (e *strataEngine) StallTime() time.Duration { return e.db.Stats().StallTime }

// Merge writes operand as a merge operand, with the durability Put has.
func (e *strataEngine) Merge(key, operand []byte) error {
	return e.db.Merge(key, operand, simpledb.DefaultSync)
}

// getBuffers hold the values Get reads. Get reads with AppendValue into a
// pooled buffer, not with DB.Get, which allocates a copy per read: Pebble's
// and Badger's adapters read in place, so a fresh copy would charge Strata
// an allocation the others do not pay. A pool, because the mixed workload
// calls Get from several goroutines at once.
var getBuffers = sync.Pool{New: func() any { return new([]byte) }}

func (e *strataEngine) Get(key []byte, visit func([]byte) error) error {
	buf := getBuffers.Get().(*[]byte)
	defer getBuffers.Put(buf)
	v, err := e.db.AppendValue((*buf)[:0], key)
	*buf = v
	if errors.Is(err, simpledb.ErrNotFound) {
		return errNotFound
	}
	if err != nil {
		return err
	}
	return visit(v)
}

func (e *strataEngine) Scan(visit func(key, value []byte) error) error {
	it, err := e.db.NewIterator(nil, nil)
	if err != nil {
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		if err := visit(it.Key(), it.Value()); err != nil {
			it.Close()
			return err
		}
	}
	return errors.Join(it.Err(), it.Close())
}

func (e *strataEngine) ScanReverse(visit func(key, value []byte) error) error {
	it, err := e.db.NewIterator(nil, nil)
	if err != nil {
		return err
	}
	for ok := it.Last(); ok; ok = it.Prev() {
		if err := visit(it.Key(), it.Value()); err != nil {
			it.Close()
			return err
		}
	}
	return errors.Join(it.Err(), it.Close())
}

// Update runs fn in DB.Update, which retries on ErrConflict, each time in
// a new transaction, once the writes appended so far are published (so
// that the retry's snapshot holds the write it conflicted with). Every run
// of fn after the first follows an abort. The commit's durability is the
// database's (Options.NoSync).
func (e *strataEngine) Update(fn func(txn) error) (int, error) {
	buf := getBuffers.Get().(*[]byte)
	defer getBuffers.Put(buf)
	runs := 0
	err := e.db.Update(maxRetries, func(t *simpledb.Txn) error {
		runs++
		return fn(strataTxn{t: t, buf: buf})
	})
	return max(runs-1, 0), err
}

// strataTxn is a transaction that reads, as Get does, with AppendValue
// into a pooled buffer. Txn.Put copies key and value into the
// transaction's batch.
type strataTxn struct {
	t   *simpledb.Txn
	buf *[]byte
}

func (t strataTxn) Get(key []byte, visit func([]byte) error) error {
	v, err := t.t.AppendValue((*t.buf)[:0], key)
	*t.buf = v
	if errors.Is(err, simpledb.ErrNotFound) {
		return errNotFound
	}
	if err != nil {
		return err
	}
	return visit(v)
}

func (t strataTxn) Put(key, value []byte) error { return t.t.Put(key, value) }

// DeleteRange writes one range deletion; its durability is the database's
// (Options.NoSync), as Put's.
func (e *strataEngine) DeleteRange(start, end []byte) error {
	return e.db.DeleteRange(start, end, simpledb.DefaultSync)
}

// Checkpoint links the tables and writes the memstores' contents out as one
// more table; the copy has no log.
func (e *strataEngine) Checkpoint(dir string) error { return e.db.Checkpoint(dir) }

func (e *strataEngine) Close() error { return e.db.Close() }
