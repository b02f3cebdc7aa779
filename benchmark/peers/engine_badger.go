package main

import (
	"errors"

	"github.com/dgraph-io/badger/v4"
)

// badgerEngine is Badger v4. Durability is a database-wide option:
// SyncWrites for synced runs, Badger's default (off) otherwise. Each Put is
// one read-write transaction, committed before Put returns.
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
	return e.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(key)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return errNotFound
		}
		if err != nil {
			return err
		}
		return item.Value(visit)
	})
}

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
