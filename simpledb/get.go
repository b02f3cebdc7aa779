package simpledb

import (
	"errors"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/memstore"
	"github.com/stratadb/strata/sstables"
)

// Get returns a copy of the value of key, or ErrNotFound when it is absent
// or deleted. The copy is the caller's; AppendValue reads into a buffer the
// caller reuses instead, and Has reads no value.
func (d *DB) Get(key []byte) ([]byte, error) {
	return d.read(nil, key, nil, readCopy)
}

// AppendValue appends the value of key to dst and returns the extended
// slice, or dst and ErrNotFound when key is absent or deleted. A read into a
// buffer with room allocates nothing: reuse the result, truncated, for the
// next read.
//
// Reads hand values back this way rather than as views of the database's
// memory released by a closer (Pebble's Get) or passed to a callback
// (bbolt's View): the value is the caller's, with no lifetime rule to
// break, and copying it costs little beside finding it (see
// BenchmarkSimpleDBGetAppendValue).
func (d *DB) AppendValue(dst, key []byte) ([]byte, error) {
	return d.read(nil, key, dst, readAppend)
}

// Has reports whether key has a value: false, with a nil error, when it is
// absent or deleted. It reads no value.
func (d *DB) Has(key []byte) (bool, error) {
	return found(d.read(nil, key, nil, readNone))
}

// found turns a read's ErrNotFound into false.
func found(_ []byte, err error) (bool, error) {
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// read reads key as of now, under the writes an indexed batch's index
// holds if it is not nil.
func (d *DB) read(index *batchIndex, key, dst []byte, mode readMode) ([]byte, error) {
	if err := d.checkOpen(); err != nil {
		return dst, err
	}
	if err := base.CheckKey(key); err != nil {
		return dst, err
	}
	rs, err := d.reads.acquire()
	if err != nil {
		return dst, err
	}
	defer rs.unref()
	start := sampleStart()
	v, err := d.get(rs, index, key, d.commits.visible(), dst, mode) // in this order: see readState.get
	d.latencies.get.addSince(start)
	return v, err
}

// get reads key from rs as of seq, under index's writes if not nil. A key
// whose newest version is a merge operand, or any key under an index, is
// read through a merge of rs's memstores and tables (and index's writes),
// which folds merge operands: it costs an iterator's creation over every
// level, against a Get's lookups level by level.
func (d *DB) get(rs *readState, index *batchIndex, key []byte, seq uint64, dst []byte, mode readMode) ([]byte, error) {
	if index == nil {
		if v, err := rs.get(key, seq, dst, mode); err != errFold {
			return v, err
		}
	}
	var upper []byte // just past key, in bytewise order: the levels below stop there
	if d.opts.Comparator.Name == sstables.Bytewise.Name {
		upper = append(key[:len(key):len(key)], 0)
	}
	rs.ref() // the iterator's, which Close drops
	it := d.newIterator(rs, key, upper, seq, index)
	defer it.Close()
	if !it.SeekGE(key) || d.opts.Comparator.Compare(it.Key(), key) != 0 {
		if err := it.Err(); err != nil {
			return dst, err
		}
		return dst, ErrNotFound
	}
	return mode.value(dst, it.Value()), nil
}

// errFold is readState.get's answer for a key whose newest version is a
// merge operand: the read must fold it with the versions below.
var errFold = errors.New("simpledb: fold needed")

// readMode says what a read does with the value it finds.
type readMode uint8

const (
	readCopy   readMode = iota // return a new copy, never nil
	readAppend                 // append it to dst
	readNone                   // leave it: only whether it is there matters
)

// value returns v as mode asks for it.
func (m readMode) value(dst, v []byte) []byte {
	switch m {
	case readCopy:
		return append(make([]byte, 0, len(v)), v...)
	case readAppend:
		return append(dst, v...)
	}
	return dst
}

// get reads key as of seq, which is a snapshot's or the visible sequence
// number loaded after rs was acquired, and returns its value as mode asks;
// errFold where its newest version is a merge operand.
//
// The order matters. A flush or compaction that built rs's tables kept, of
// each key's versions that no snapshot tells apart, only the newest, which
// was applied, so at or below the visible sequence number, before rs was
// installed: a seq loaded later still sees it, and a dropped version could
// only have hidden behind it. A seq loaded before acquiring could predate
// a flush installed in between, and find its version dropped in favour of
// one above seq. Writes at or below seq that rs lacks went to memstores
// created after rs, so they come after all that rs holds: the read sees
// the state after a prefix of the commits, between acquire and load.
func (rs *readState) get(key []byte, seq uint64, dst []byte, mode readMode) ([]byte, error) {
	hash := sstables.HashKey(key) // once for every memstore and table
	for i := len(rs.imm); i >= 0; i-- {
		mt := rs.mem
		if i < len(rs.imm) {
			mt = rs.imm[i]
		}
		switch v, res := mt.m.GetAtHash(key, uint64(hash), seq); res {
		case memstore.Found:
			return mode.value(dst, v), nil
		case memstore.Deleted:
			return dst, ErrNotFound
		case memstore.Merge:
			return dst, errFold
		}
	}
	find := func(t *table) ([]byte, bool, error) {
		out := dst
		kind, found, err := t.find(key, hash, seq, func(v []byte) { out = mode.value(dst, v) })
		if err != nil || !found {
			return dst, found, err
		}
		switch kind {
		case base.KindDelete:
			return dst, true, ErrNotFound
		case base.KindMerge:
			return dst, true, errFold
		}
		return out, true, nil
	}
	for _, t := range rs.v.levels[0] {
		if !t.overlaps(rs.v.cmp, key, key) {
			continue
		}
		if v, found, err := find(t); found || err != nil {
			return v, err
		}
	}
	for level := 1; level < NumLevels; level++ {
		if t := rs.v.tableFor(level, key); t != nil {
			if v, found, err := find(t); found || err != nil {
				return v, err
			}
		}
	}
	return dst, ErrNotFound
}
