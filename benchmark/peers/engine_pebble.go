package main

import (
	"errors"
	"log"

	"github.com/cockroachdb/pebble/v2"
)

// pebbleEngine is Pebble v2. Every Set passes pebble.Sync or pebble.NoSync.
type pebbleEngine struct {
	db    *pebble.DB
	write *pebble.WriteOptions
}

func openPebble(dir string, s settings) (Engine, error) {
	opts := &pebble.Options{Logger: pebbleLogger{}}
	if s.cacheBytes > 0 {
		opts.CacheSize = s.cacheBytes
	}
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, err
	}
	write := pebble.NoSync
	if s.sync {
		write = pebble.Sync
	}
	return &pebbleEngine{db: db, write: write}, nil
}

func (e *pebbleEngine) Put(key, value []byte) error { return e.db.Set(key, value, e.write) }

func (e *pebbleEngine) Get(key []byte, visit func([]byte) error) error {
	v, closer, err := e.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return errNotFound
	}
	if err != nil {
		return err
	}
	err = visit(v)
	return errors.Join(err, closer.Close())
}

func (e *pebbleEngine) Scan(visit func(key, value []byte) error) error {
	it, err := e.db.NewIter(nil)
	if err != nil {
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err == nil {
			err = visit(it.Key(), v)
		}
		if err != nil {
			it.Close()
			return err
		}
	}
	return errors.Join(it.Error(), it.Close())
}

func (e *pebbleEngine) ScanReverse(visit func(key, value []byte) error) error {
	it, err := e.db.NewIter(nil)
	if err != nil {
		return err
	}
	for ok := it.Last(); ok; ok = it.Prev() {
		v, err := it.ValueAndErr()
		if err == nil {
			err = visit(it.Key(), v)
		}
		if err != nil {
			it.Close()
			return err
		}
	}
	return errors.Join(it.Error(), it.Close())
}

// DeleteRange writes one range tombstone.
func (e *pebbleEngine) DeleteRange(start, end []byte) error {
	return e.db.DeleteRange(start, end, e.write)
}

// Checkpoint links the tables and copies the WAL, MANIFEST and OPTIONS
// files, with Pebble's default options: no WithFlushedWAL (every write
// here comes before the reopen, so nothing is waiting in the WAL's buffer)
// and no WithRestrictToSpans.
func (e *pebbleEngine) Checkpoint(dir string) error { return e.db.Checkpoint(dir) }

func (e *pebbleEngine) Close() error { return e.db.Close() }

// pebbleLogger drops Pebble's informational messages (WAL replay, one line
// per log at every open) and keeps its errors.
type pebbleLogger struct{}

func (pebbleLogger) Infof(string, ...any)              {}
func (pebbleLogger) Errorf(format string, args ...any) { log.Printf(format, args...) }
func (pebbleLogger) Fatalf(format string, args ...any) { log.Fatalf(format, args...) }
