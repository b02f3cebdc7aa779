package main

import (
	"errors"

	"github.com/dgraph-io/badger/v4"
)

// badgerEngine is Badger v4. Durability is a database-wide option:
// SyncWrites for synced runs, Badger's default (off) otherwise. Each Put is
// one read-write transaction, committed before Put returns.
//
// Badger separates values by design, keeping one of ValueThreshold bytes
// or more in its value log, but v4.9.6's default ValueThreshold is 1 MiB
// (maxValueThreshold; VLogPercentile 0, so it never adapts). At its
// defaults, which the runner keeps, every value shorter, 16 KiB ones
// included, stays in its LSM tree, and its value log holds none.
type badgerEngine struct {
	db *badger.DB
}

func openBadger(dir string, s settings) (Engine, error) {
	opts := badger.DefaultOptions(dir).
		WithSyncWrites(s.sync).
		// Badger logs every compaction at INFO to stderr; keep warnings.
		WithLoggingLevel(badger.WARNING)
	if s.cacheBytes > 0 {
		opts = opts.WithBlockCacheSize(s.cacheBytes)
	}
	if s.memtableBytes > 0 {
		opts = opts.WithMemTableSize(s.memtableBytes)
	}
	db, err := badger.Open(opts)
	if err != nil {
		return nil, err
	}
	return &badgerEngine{db: db}, nil
}

func (e *badgerEngine) Put(key, value []byte) error {
	// Update returns after the commit is written, so the transaction no
	// longer refers to key and value.
	return e.db.Update(func(txn *badger.Txn) error { return txn.Set(key, value) })
}

func (e *badgerEngine) Get(key []byte, visit func([]byte) error) error {
	return e.db.View(func(t *badger.Txn) error { return badgerTxn{t}.Get(key, visit) })
}

// Update runs fn in a transaction of its own (DB.NewTransaction) and
// commits it, again in a new one while Commit returns ErrConflict: Badger's
// DB.Update does not retry. Its commits are synced as the database is
// (Options.SyncWrites).
func (e *badgerEngine) Update(fn func(txn) error) (int, error) {
	for aborts := 0; ; aborts++ {
		err := e.attempt(fn)
		if !errors.Is(err, badger.ErrConflict) || aborts == maxRetries {
			return aborts, err
		}
	}
}

// attempt runs fn in one transaction and commits it.
func (e *badgerEngine) attempt(fn func(txn) error) error {
	t := e.db.NewTransaction(true)
	defer t.Discard()
	if err := fn(badgerTxn{t}); err != nil {
		return err
	}
	return t.Commit()
}

// badgerTxn is a read-write transaction. Txn.Set keeps key and value until
// the transaction ends.
type badgerTxn struct {
	t *badger.Txn
}

func (t badgerTxn) Get(key []byte, visit func([]byte) error) error {
	item, err := t.t.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return errNotFound
	}
	if err != nil {
		return err
	}
	return item.Value(visit)
}

func (t badgerTxn) Put(key, value []byte) error { return t.t.Set(key, value) }

func (e *badgerEngine) Scan(visit func(key, value []byte) error) error {
	return e.scan(badger.DefaultIteratorOptions, visit)
}

// ScanReverse iterates with IteratorOptions.Reverse, under which Rewind goes
// to the largest key and Next moves to smaller ones.
func (e *badgerEngine) ScanReverse(visit func(key, value []byte) error) error {
	opts := badger.DefaultIteratorOptions
	opts.Reverse = true
	return e.scan(opts, visit)
}

// scan calls visit with every entry, in the order opts ask for.
func (e *badgerEngine) scan(opts badger.IteratorOptions, visit func(key, value []byte) error) error {
	return e.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			item := it.Item()
			key := item.Key()
			if err := item.Value(func(v []byte) error { return visit(key, v) }); err != nil {
				return err
			}
		}
		return nil
	})
}

func (e *badgerEngine) Close() error { return e.db.Close() }
