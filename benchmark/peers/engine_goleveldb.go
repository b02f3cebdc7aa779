package main

import (
	"errors"

	"github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/opt"
)

// goleveldbEngine is goleveldb. Every Put passes WriteOptions{Sync}.
type goleveldbEngine struct {
	db    *leveldb.DB
	write *opt.WriteOptions
}

func openGoleveldb(dir string, s settings) (Engine, error) {
	opts := &opt.Options{}
	if s.cacheBytes > 0 {
		opts.BlockCacheCapacity = int(s.cacheBytes)
	}
	if s.memtableBytes > 0 {
		opts.WriteBuffer = int(s.memtableBytes)
	}
	db, err := leveldb.OpenFile(dir, opts)
	if err != nil {
		return nil, err
	}
	return &goleveldbEngine{db: db, write: &opt.WriteOptions{Sync: s.sync}}, nil
}

func (e *goleveldbEngine) Put(key, value []byte) error { return e.db.Put(key, value, e.write) }

func (e *goleveldbEngine) Get(key []byte, visit func([]byte) error) error {
	v, err := e.db.Get(key, nil)
	if errors.Is(err, leveldb.ErrNotFound) {
		return errNotFound
	}
	if err != nil {
		return err
	}
	return visit(v)
}

func (e *goleveldbEngine) Scan(visit func(key, value []byte) error) error {
	it := e.db.NewIterator(nil, nil)
	defer it.Release()
	for it.Next() {
		if err := visit(it.Key(), it.Value()); err != nil {
			return err
		}
	}
	return it.Error()
}

func (e *goleveldbEngine) ScanReverse(visit func(key, value []byte) error) error {
	it := e.db.NewIterator(nil, nil)
	defer it.Release()
	for ok := it.Last(); ok; ok = it.Prev() {
		if err := visit(it.Key(), it.Value()); err != nil {
			return err
		}
	}
	return it.Error()
}

func (e *goleveldbEngine) Close() error { return e.db.Close() }
