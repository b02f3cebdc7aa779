package simpledb

import (
	"bytes"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/logformat"
)

// Batch collects writes that Write applies atomically: all of them or none,
// also across a crash, since a batch is one write-ahead log record. A Batch
// is not safe for concurrent use; it can be reused after Reset.
type Batch struct {
	// db and index make an indexed batch (NewIndexedBatch): its writes
	// are also kept in an index, to be read.
	db        *DB
	index     *batchIndex
	data      []byte
	count     uint32
	rangeDels int   // range deletions among the ops: see ErrRangeDelOrder
	merges    int   // merge operands among the ops: see ErrNoMerger
	bytes     int64 // key and value bytes, for write amplification
	err       error // the first rejected op; Write returns it
}

// NewBatch returns an empty batch.
func (d *DB) NewBatch() *Batch { return new(Batch) }

// Put adds a write of value under key. The batch copies both.
func (b *Batch) Put(key, value []byte) error {
	if err := checkSet(key, len(value)); err != nil {
		return b.reject(err)
	}
	b.init()
	b.data = logformat.AppendOp(b.data, base.KindSet, key, value)
	return b.addedSet(key, value)
}

// checkSet checks a write of valueLen bytes under key.
func checkSet(key []byte, valueLen int) error {
	if err := base.CheckKey(key); err != nil {
		return err
	}
	if valueLen > MaxValueSize {
		return errs.Errorf("%w: %d bytes", ErrValueTooLarge, valueLen)
	}
	return nil
}

// addedSet indexes a write of value under key, just appended, and counts
// it.
func (b *Batch) addedSet(key, value []byte) error {
	if err := b.indexOp(base.KindSet, key, value); err != nil {
		return b.reject(err)
	}
	return b.added(len(key) + len(value))
}

// PutFunc adds a write under key of the valueLen bytes appendValue
// appends to the slice it is given, which lies in the batch: a value
// encoded from a structure (a raft entry, a record) goes in without a
// copy of its own. appendValue must append exactly valueLen bytes to its
// argument, and return the result, as append does; any other length
// rejects the write with ErrValueLength and leaves the batch as it was.
func (b *Batch) PutFunc(key []byte, valueLen int, appendValue func(dst []byte) []byte) error {
	if err := checkSet(key, valueLen); err != nil {
		return b.reject(err)
	}
	if valueLen < 0 {
		return b.reject(errs.Errorf("%w: %d bytes declared", ErrValueLength, valueLen))
	}
	b.init()
	start := len(b.data)
	b.data = logformat.AppendOpHeader(b.data, base.KindSet, key, valueLen)
	at := len(b.data)
	b.data = appendValue(b.data)
	if n := len(b.data) - at; n != valueLen {
		b.data = b.data[:start]
		return b.reject(errs.Errorf("%w: %d bytes appended, %d declared", ErrValueLength, n, valueLen))
	}
	return b.addedSet(key, b.data[at:])
}

// Merge adds a merge of operand into key's value (see DB.Merge). The batch
// copies both. An indexed batch checks the operand with its database's
// merger at once; Write checks any batch's, and refuses a batch holding
// merges with ErrNoMerger in a database without a merger.
func (b *Batch) Merge(key, operand []byte) error {
	if err := base.CheckKey(key); err != nil {
		return b.reject(err)
	}
	if len(operand) > MaxValueSize {
		return b.reject(errs.Errorf("%w: %d bytes", ErrValueTooLarge, len(operand)))
	}
	if b.db != nil {
		if err := b.db.opts.checkOperand(operand); err != nil {
			return b.reject(err)
		}
	}
	b.init()
	b.data = logformat.AppendOp(b.data, base.KindMerge, key, operand)
	if err := b.indexOp(base.KindMerge, key, operand); err != nil {
		return b.reject(err)
	}
	b.merges++
	return b.added(len(key) + len(operand))
}

// Delete adds a deletion of key.
func (b *Batch) Delete(key []byte) error {
	if err := base.CheckKey(key); err != nil {
		return b.reject(err)
	}
	b.init()
	b.data = logformat.AppendOp(b.data, base.KindDelete, key, nil)
	if err := b.indexOp(base.KindDelete, key, nil); err != nil {
		return b.reject(err)
	}
	return b.added(len(key))
}

// DeleteRange adds the deletion of every key in [start, end): one op,
// whose size and cost do not depend on how many keys the range holds. A nil
// start or end leaves that side open, so DeleteRange(nil, nil) deletes
// every key; any other slice, the empty one too, is a bound, as everywhere
// in this package. A start at or after end makes an empty range: nothing
// is added and the call returns nil. An empty end is before every key, so
// DeleteRange(k, []byte{}) is such a range. A start or end over MaxKeySize
// is ErrKeyTooLarge. Keys written after the deletion, also later in the
// same batch, are not deleted. Start and end compare bytewise: a database
// in another key order refuses the batch (ErrRangeDelOrder).
func (b *Batch) DeleteRange(start, end []byte) error {
	for _, k := range [][]byte{start, end} {
		if len(k) > base.MaxKeySize {
			return b.reject(errs.Errorf("%w: %d bytes", ErrKeyTooLarge, len(k)))
		}
	}
	// A nil start compares as the empty slice, the least bound: the range
	// is empty only if end is empty too.
	if end != nil && bytes.Compare(start, end) >= 0 {
		return nil
	}
	if b.db != nil {
		// Write would refuse it; an index could not hold it.
		if err := b.db.opts.checkRangeDelOrder(); err != nil {
			return b.reject(err)
		}
	}
	b.init()
	b.data = logformat.AppendOp(b.data, base.KindRangeDelete, start, end)
	if err := b.indexOp(base.KindRangeDelete, start, end); err != nil {
		return b.reject(err)
	}
	b.rangeDels++
	return b.added(len(start) + len(end))
}

// Len returns the number of writes in the batch.
func (b *Batch) Len() int { return int(b.count) }

// Reset empties the batch for reuse.
func (b *Batch) Reset() {
	b.data, b.count, b.rangeDels, b.merges, b.bytes, b.err, b.index = b.data[:0], 0, 0, 0, 0, nil, nil
}

func (b *Batch) init() {
	if len(b.data) == 0 {
		b.data = logformat.AppendHeader(b.data)
	}
}

func (b *Batch) added(n int) error {
	b.count++
	b.bytes += int64(n)
	if len(b.data) > MaxBatchSize {
		return b.reject(errs.Errorf("%w: %d bytes", ErrBatchTooLarge, len(b.data)))
	}
	return nil
}

// reject records the first rejected op: Write refuses the whole batch, so a
// caller that ignores Put's error cannot commit half of what it meant.
func (b *Batch) reject(err error) error {
	if b.err == nil {
		b.err = err
	}
	return err
}

func (b *Batch) setSeq(seq uint64) { logformat.SetSeq(b.data, seq, b.count) }
