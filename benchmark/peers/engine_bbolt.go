package main

import (
	"errors"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
)

// bboltEngine is bbolt, a B+tree in one memory-mapped file, with one
// writer at a time. Every write is a read-write transaction (DB.Update),
// which syncs the file at commit unless DB.NoSync is set: unsynced runs
// set it. It has no block cache (reads go through the operating system's
// page cache) and no conflicts: transactions that write run one after
// another.
type bboltEngine struct {
	db *bolt.DB
}

// bboltFile is the database's file in its directory, and bboltBucket the
// one bucket that holds every key.
const bboltFile = "bolt.db"

var bboltBucket = []byte("peers")

func openBbolt(dir string, s settings) (Engine, error) {
	db, err := bolt.Open(filepath.Join(dir, bboltFile), 0o644, &bolt.Options{NoSync: !s.sync})
	if err != nil {
		return nil, err
	}
	err = db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(bboltBucket)
		return err
	})
	if err != nil {
		db.Close()
		return nil, err
	}
	return &bboltEngine{db: db}, nil
}

// Put is one read-write transaction, as Badger's is: DB.Batch would merge
// concurrent writers' transactions into one commit, but waits up to 10 ms
// to gather them, and may run a writer's function twice.
func (e *bboltEngine) Put(key, value []byte) error {
	return e.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bboltBucket).Put(key, value) })
}

func (e *bboltEngine) Get(key []byte, visit func([]byte) error) error {
	return e.db.View(func(tx *bolt.Tx) error { return boltGet(tx.Bucket(bboltBucket), key, visit) })
}

// boltGet calls visit with key's value in b, read in place.
func boltGet(b *bolt.Bucket, key []byte, visit func([]byte) error) error {
	v := b.Get(key)
	if v == nil {
		return errNotFound
	}
	return visit(v)
}

func (e *bboltEngine) Scan(visit func(key, value []byte) error) error {
	return e.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bboltBucket).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if err := visit(k, v); err != nil {
				return err
			}
		}
		return nil
	})
}

func (e *bboltEngine) ScanReverse(visit func(key, value []byte) error) error {
	return e.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bboltBucket).Cursor()
		for k, v := c.Last(); k != nil; k, v = c.Prev() {
			if err := visit(k, v); err != nil {
				return err
			}
		}
		return nil
	})
}

// Checkpoint copies the whole file, as of a read transaction, with
// Tx.WriteTo, bbolt's online backup: a B+tree in one file has no immutable
// tables to link. The copy is synced before Checkpoint returns, as Strata's
// and Pebble's checkpoints are.
func (e *bboltEngine) Checkpoint(dir string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	if err := e.copyTo(filepath.Join(dir, bboltFile)); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// copyTo writes the database, as of one read transaction, into a new file
// at path, and syncs it.
func (e *bboltEngine) copyTo(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	err = e.db.View(func(tx *bolt.Tx) error {
		_, err := tx.WriteTo(f)
		return err
	})
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// Update runs fn in DB.Update. A read-write transaction holds the writer
// lock from its start, so none aborts.
func (e *bboltEngine) Update(fn func(txn) error) (int, error) {
	return 0, e.db.Update(func(tx *bolt.Tx) error { return fn(bboltTxn{tx.Bucket(bboltBucket)}) })
}

// bboltTxn is a read-write transaction's bucket. Bucket.Put keeps key and
// value until the transaction ends.
type bboltTxn struct {
	b *bolt.Bucket
}

func (t bboltTxn) Get(key []byte, visit func([]byte) error) error { return boltGet(t.b, key, visit) }

func (t bboltTxn) Put(key, value []byte) error { return t.b.Put(key, value) }

func (e *bboltEngine) Close() error { return e.db.Close() }
