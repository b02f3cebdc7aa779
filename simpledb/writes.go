package simpledb

import (
	"sync"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/sstables"
)

// The public writes. Each becomes a batch, which the commit pipeline
// (commitPipeline) appends to the log and applies.

// Put sets key to value. It copies both: the caller may reuse or modify
// them once it returns. Opts choose whether it is synced (DefaultSync: as
// Options.NoSync says); its errors are Write's.
func (d *DB) Put(key, value []byte, opts WriteOptions) error {
	return d.writeOp(base.KindSet, key, value, opts)
}

// Delete deletes key. Deleting an absent key is not an error. Opts are
// Put's.
func (d *DB) Delete(key []byte, opts WriteOptions) error {
	return d.writeOp(base.KindDelete, key, nil, opts)
}

// DeleteRange deletes every key in [start, end) as one write, whose cost
// does not grow with the number of keys the range holds. A nil start or
// end leaves that side open; an empty one is a bound, before every key. An
// empty range (start at or after end, as with any empty end) is a no-op;
// see Batch.DeleteRange. A database whose Options.Comparator is not
// bytewise refuses range deletions with ErrRangeDelOrder. Opts are Put's.
func (d *DB) DeleteRange(start, end []byte, opts WriteOptions) error {
	return d.writeOp(base.KindRangeDelete, start, end, opts)
}

// Merge folds operand into key's value, with Options.Merger: a counter's
// increment, an append, whatever the merger defines, as one write that
// reads nothing. Reads see the fold of every operand since the key's last
// Put or deletion. It copies key and operand. A database opened without a
// merger returns ErrNoMerger; an operand the merger's CheckOperand refuses,
// ErrMergeFailed. Opts, and the other errors, are Put's.
func (d *DB) Merge(key, operand []byte, opts WriteOptions) error {
	return d.writeOp(base.KindMerge, key, operand, opts)
}

// writeOp writes one op, of kind, as a batch of its own: Put, Delete,
// DeleteRange (key and value its start and end) and Merge.
func (d *DB) writeOp(kind base.Kind, key, value []byte, opts WriteOptions) error {
	sync, err := opts.sync(d.opts.NoSync)
	if err != nil {
		return err
	}
	if kind == base.KindRangeDelete {
		// Refused here, before the batch, which would drop an empty range.
		if err := d.checkOpen(); err != nil {
			return err
		}
		if err := d.opts.checkRangeDelOrder(); err != nil {
			return err
		}
	}
	b := batchPool.Get().(*Batch)
	defer putBatch(b)
	b.Reset()
	switch kind {
	case base.KindSet:
		err = b.Put(key, value)
	case base.KindDelete:
		err = b.Delete(key)
	case base.KindRangeDelete:
		err = b.DeleteRange(key, value)
	default:
		err = b.Merge(key, value)
	}
	if err != nil {
		return err
	}
	return d.write(b, sync)
}

// checkRangeDelOrder returns ErrRangeDelOrder unless the database orders
// keys bytewise.
func (o *Options) checkRangeDelOrder() error {
	if o.Comparator.Name != sstables.Bytewise.Name {
		return errs.Errorf("%w: the database orders keys by %q", ErrRangeDelOrder, o.Comparator.Name)
	}
	return nil
}

// batchPool recycles the batches of Put, Delete and DeleteRange.
var batchPool = sync.Pool{New: func() any { return new(Batch) }}

// maxPooledBatch bounds the buffer of a batch returned to the pool, so that
// one large value does not keep its buffer alive for every later write.
const maxPooledBatch = 1 << 20

func putBatch(b *Batch) {
	if cap(b.data) <= maxPooledBatch {
		batchPool.Put(b)
	}
}

// Write applies a batch atomically, synced as opts say (DefaultSync: as
// Options.NoSync says). An empty batch is a no-op. Its error says what
// became of the batch:
//
//   - nil: it is applied, visible to reads, and durable if synced.
//   - An error matching ErrWriteOutcomeUnknown (and ErrBackground): the
//     log failed on this write or an earlier one not yet durable. The batch
//     is not visible, but may be on disk and back after a reopen.
//   - Any other error (bad input, ErrInvalidOption, ErrClosed,
//     ErrBackground alone): it did not reach the log; it is not applied and
//     never will be.
//
// A flush or compaction failing meanwhile does not fail a write that has
// reached the log. The batch may be reused or reset once Write returns.
func (d *DB) Write(b *Batch, opts WriteOptions) error {
	sync, err := opts.sync(d.opts.NoSync)
	if err != nil {
		return err
	}
	return d.write(b, sync)
}

// write applies a batch, synced if sync.
func (d *DB) write(b *Batch, sync bool) error {
	if b == nil {
		return ErrNilBatch
	}
	if b.err != nil {
		return b.err
	}
	if b.rangeDels > 0 {
		if err := d.opts.checkRangeDelOrder(); err != nil {
			return err
		}
	}
	if b.merges > 0 {
		if err := d.opts.checkMerges(b); err != nil {
			return err
		}
	}
	if b.count == 0 {
		return d.checkWritable()
	}
	w := waiterPool.Get().(*commitWaiter)
	w.batch, w.sync = b, sync
	err := d.commit(w)
	w.batch = nil
	waiterPool.Put(w)
	return err
}

// commit sends w through the commit pipeline, unless the database is
// closed, read-only or failed.
func (d *DB) commit(w *commitWaiter) error {
	// Close takes closeMu exclusively: it waits for writes under way, and
	// none starts after it.
	d.closeMu.RLock()
	defer d.closeMu.RUnlock()
	if err := d.checkWritable(); err != nil {
		return err
	}
	if d.failed.Load() {
		// (nil if Resume cleared the failure meanwhile: the write goes on.)
		if err := d.backgroundError(); err != nil {
			return err
		}
	}
	start := sampleStart()
	err := d.commits.commit(w)
	d.latencies.commit.addSince(start)
	return err
}
