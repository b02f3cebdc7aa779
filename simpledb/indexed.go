package simpledb

import (
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/memstore"
	"github.com/stratadb/strata/sstables"
)

// indexSeqBase numbers an indexed batch's writes inside its index: above
// every sequence number a database assigns (one would need 2^55 writes to
// reach it), so that the batch's writes are newer than the database's in a
// merge, and in the order they were added.
const indexSeqBase = 1 << 55

// NewIndexedBatch returns an empty batch that can be read as well as
// written: Get, Has and iterators see the batch's writes over the database,
// as Pebble's indexed batches do. Reads of the database's part see it as
// it is at each read. It commits with Write like any batch; keeping the
// index costs a sorted insert per write (a memstore's, past a few dozen).
func (d *DB) NewIndexedBatch() *Batch {
	return &Batch{db: d}
}

// indexed returns the batch's index, creating it on the first write.
func (b *Batch) indexed() *batchIndex {
	if b.index == nil {
		b.index = newBatchIndex(b.db.opts.Comparator)
	}
	return b.index
}

// indexOp adds an op the batch has just encoded to its index.
func (b *Batch) indexOp(kind base.Kind, key, value []byte) error {
	if b.db == nil {
		return nil
	}
	return b.indexed().apply(indexSeqBase+uint64(b.count), kind, key, value)
}

// checkReadable returns ErrNotIndexed for a batch that is not indexed.
func (b *Batch) checkReadable() error {
	if b.db == nil {
		return ErrNotIndexed
	}
	return b.db.checkOpen()
}

// Get returns the value of key as the batch's writes leave it over the
// database: a write of the batch wins, a deletion or range deletion of the
// batch hides the database's value; otherwise the database's. ErrNotFound
// if there is none; ErrNotIndexed for a batch NewBatch made.
func (b *Batch) Get(key []byte) ([]byte, error) {
	return b.read(key, nil, readCopy)
}

// AppendValue appends what Get would return for key to dst, as
// DB.AppendValue does.
func (b *Batch) AppendValue(dst, key []byte) ([]byte, error) {
	return b.read(key, dst, readAppend)
}

// Has reports whether Get would find a value for key.
func (b *Batch) Has(key []byte) (bool, error) {
	return found(b.read(key, nil, readNone))
}

func (b *Batch) read(key, dst []byte, mode readMode) ([]byte, error) {
	if err := b.checkReadable(); err != nil {
		return dst, err
	}
	if err := base.CheckKey(key); err != nil {
		return dst, err
	}
	var index *batchIndex
	switch v, res, err := b.readIndex(key, dst, mode); res {
	case memstore.Found, memstore.Deleted:
		return v, err
	case memstore.Merge: // folded onto the database's versions
		index = b.index
	}
	return b.db.read(index, key, dst, mode)
}

// readIndex reads key from the batch's writes. Absent where the batch holds
// nothing for it, and Merge where its newest write is a merge operand: the
// read goes on below (the database, or a transaction's snapshot), under
// the index for a Merge, to fold.
func (b *Batch) readIndex(key, dst []byte, mode readMode) ([]byte, memstore.Result, error) {
	if b.index == nil {
		return dst, memstore.Absent, nil
	}
	v, res := b.index.get(key)
	switch res {
	case memstore.Found:
		return mode.value(dst, v), res, nil
	case memstore.Deleted:
		return dst, res, ErrNotFound
	}
	return dst, res, nil
}

// NewIterator returns an iterator over the live keys in [lower, upper) as
// the batch's writes so far leave them over the database, taken now: later
// writes to the batch or to the database are not seen. Bounds are as
// DB.NewIterator takes them. ErrNotIndexed for a batch NewBatch made.
func (b *Batch) NewIterator(lower, upper []byte) (*Iterator, error) {
	if err := b.checkReadable(); err != nil {
		return nil, err
	}
	d := b.db
	rs, err := d.reads.acquire()
	if err != nil {
		return nil, err
	}
	return d.newIterator(rs, lower, upper, d.commits.visible(), b.index), nil // in this order: see readState.get
}

// NewPrefixIterator returns an iterator over the keys that start with
// prefix, as NewIterator(prefix, PrefixUpperBound(prefix)) does; a
// database in another key order than bytewise refuses it with
// ErrPrefixOrder.
func (b *Batch) NewPrefixIterator(prefix []byte) (*Iterator, error) {
	if err := b.checkReadable(); err != nil {
		return nil, err
	}
	if err := b.db.opts.checkPrefixOrder(); err != nil {
		return nil, err
	}
	return b.NewIterator(prefix, PrefixUpperBound(prefix))
}

// seqFilter hides a child's entries above seq: a table's, under a merge that
// shows an indexed batch's writes, whose numbers are above every one the
// database assigns, so that the merge itself cannot filter by seq.
type seqFilter struct {
	sstables.EntryIterator
	seq uint64
}

func (f *seqFilter) First() bool            { return f.forward(f.EntryIterator.First()) }
func (f *seqFilter) Last() bool             { return f.backward(f.EntryIterator.Last()) }
func (f *seqFilter) SeekGE(key []byte) bool { return f.forward(f.EntryIterator.SeekGE(key)) }
func (f *seqFilter) SeekLT(key []byte) bool { return f.backward(f.EntryIterator.SeekLT(key)) }
func (f *seqFilter) Next() bool             { return f.forward(f.EntryIterator.Next()) }
func (f *seqFilter) Prev() bool             { return f.backward(f.EntryIterator.Prev()) }

// BlobHandle and BlobTable are the filtered iterator's, if it has them.
func (f *seqFilter) BlobHandle() (sstables.BlobHandle, bool) { return blobHandle(f.EntryIterator) }
func (f *seqFilter) BlobTable() string                       { return blobTable(f.EntryIterator) }

func (f *seqFilter) forward(ok bool) bool {
	for ok && f.EntryIterator.Seq() > f.seq {
		ok = f.EntryIterator.Next()
	}
	return ok
}

func (f *seqFilter) backward(ok bool) bool {
	for ok && f.EntryIterator.Seq() > f.seq {
		ok = f.EntryIterator.Prev()
	}
	return ok
}
