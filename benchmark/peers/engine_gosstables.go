package main

import (
	"errors"
	"io"
	"log"

	"github.com/thomasjungblut/go-sstables/simpledb"
)

// goSSTablesEngine is go-sstables' simpledb, the library Strata succeeds.
// Durability is a database-wide option: its default syncs the WAL on every
// write, EnableAsyncWAL turns that off for unsynced runs. It has no block
// cache and no iterator, so neither scan workload is supported, and its
// memstore keeps the caller's slices, so Put copies them.
type goSSTablesEngine struct {
	db *simpledb.DB
}

func openGoSSTables(dir string, s settings) (Engine, error) {
	// It reports every flush, compaction and recovery step through the
	// standard logger; its failures are returned, or panic. The child
	// process runs nothing else, so its standard logger can go quiet.
	log.SetOutput(io.Discard)
	var opts []simpledb.ExtraOption
	if !s.sync {
		opts = append(opts, simpledb.EnableAsyncWAL())
	}
	db, err := simpledb.NewSimpleDB(dir, opts...)
	if err != nil {
		return nil, err
	}
	if err := db.Open(); err != nil {
		return nil, err
	}
	return &goSSTablesEngine{db: db}, nil
}

func (e *goSSTablesEngine) Put(key, value []byte) error {
	// One allocation holds both copies.
	b := make([]byte, len(key)+len(value))
	copy(b, key)
	copy(b[len(key):], value)
	return e.db.PutBytes(b[:len(key):len(key)], b[len(key):])
}

func (e *goSSTablesEngine) Get(key []byte, visit func([]byte) error) error {
	v, err := e.db.GetBytes(key)
	if errors.Is(err, simpledb.ErrNotFound) {
		return errNotFound
	}
	if err != nil {
		return err
	}
	return visit(v)
}

func (e *goSSTablesEngine) Close() error { return e.db.Close() }
