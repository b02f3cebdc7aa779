package simpledb

import (
	"errors"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/memstore"
)

// Txn is a transaction: it reads a snapshot taken when it began, plus its
// own writes, and commits its writes as one batch only if no write
// committed since its snapshot touched what it read: a key it got (or
// found absent), or any key in the bounds of an iterator it made. That
// makes transactions serializable: each commits as if it ran alone at its
// commit, so write skew and phantoms abort one of the transactions
// involved, with ErrConflict; any write counts, a transaction's or not.
//
// On ErrConflict, run the transaction again in a new Txn: Update and
// UpdateWith do, a bounded number of times, if asked, and a plain loop of
// NewTxn, reads, writes and Commit does as well. Commit returns
// ErrConflict only once every write appended before it is published (or
// failed), within an fsync, so the new transaction sees the write the old
// one met and conflicts only with writes that come after it began.
//
// A Txn is not safe for concurrent use. Slices it returns are the caller's
// (Get) or valid until the iterator moves (Iterator). A Txn after Commit or
// Discard returns ErrTxnDone; writes to a read-only one, ErrTxnReadOnly.
type Txn struct {
	db      *DB
	update  bool
	snap    *Snapshot
	batch   *Batch // indexed; nil for a read-only transaction
	readSet        // what the oracle certifies its commit against
	done    bool
	managed bool // inside Update's or View's fn, which commit themselves
}

// NewTxn begins a transaction: one that may write if update, else
// read-only. Commit or Discard it. A read-only transaction is a snapshot
// with a transaction's API, and costs nothing else; an update transaction
// makes every write record its keys until it ends, so that its commit can
// be checked against them.
func (d *DB) NewTxn(update bool) (*Txn, error) {
	if err := d.checkOpen(); err != nil {
		return nil, err
	}
	t := &Txn{db: d, update: update}
	if !update {
		t.snap = d.NewSnapshot()
		t.snapSeq = t.snap.seq
		return t, nil
	}
	if err := d.checkWritable(); err != nil {
		return nil, err
	}
	// Beside open transactions the oracle records already: joining them
	// needs no log lock, which appends hold.
	from, held, ok := d.oracle.join(d.commits.visible)
	if !ok {
		d.commits.lastAssigned(func(last uint64) { from, held = d.oracle.begin(last, d.commits.visible()) })
	}
	// The snapshot must not miss what is not recorded: the writes appended
	// before recording started are published (or failed) first.
	d.commits.waitPublished(from)
	if err := d.checkOpen(); err != nil {
		d.oracle.end(held)
		return nil, err
	}
	t.snap = d.NewSnapshot() // registered, so that compaction keeps what it sees
	t.snapSeq, t.certified = t.snap.seq, t.snap.seq
	d.oracle.started(t.snapSeq, held)
	t.batch = d.NewIndexedBatch()
	return t, nil
}

// Update runs fn in an update transaction and commits it, with the
// database's default durability: UpdateWith(DefaultSync, retries, fn).
func (d *DB) Update(retries int, fn func(*Txn) error) error {
	return d.UpdateWith(DefaultSync, retries, fn)
}

// UpdateWith runs fn in an update transaction and commits it as opts
// says; retries is how many times to run fn again, in a new transaction,
// after ErrConflict (ErrInvalidOption if negative, or if opts is not a
// WriteOptions). An error fn returns, or a panic, discards the
// transaction (the panic goes on), and UpdateWith returns the error.
//
// The transaction is UpdateWith's to end: inside fn, its Commit returns
// ErrTxnManaged, doing nothing, and a Discard makes UpdateWith return
// ErrTxnDone, having written nothing.
func (d *DB) UpdateWith(opts WriteOptions, retries int, fn func(*Txn) error) error {
	if retries < 0 {
		return errs.Errorf("%w: retries %d: it counts the runs after the first", ErrInvalidOption, retries)
	}
	if _, err := opts.sync(d.opts.NoSync); err != nil {
		return err
	}
	for {
		err := d.runTxn(true, opts, fn)
		if !errors.Is(err, ErrConflict) || retries == 0 {
			return err
		}
		retries--
	}
}

// View runs fn in a read-only transaction. Inside fn, the transaction's
// Commit returns ErrTxnManaged.
func (d *DB) View(fn func(*Txn) error) error {
	return d.runTxn(false, DefaultSync, fn)
}

func (d *DB) runTxn(update bool, opts WriteOptions, fn func(*Txn) error) error {
	t, err := d.NewTxn(update)
	if err != nil {
		return err
	}
	defer t.Discard()
	t.managed = true
	if err := fn(t); err != nil {
		return err
	}
	t.managed = false
	return t.Commit(opts)
}

// Get returns key's value as the transaction sees it: its own write, or the
// snapshot's. ErrNotFound if it has none. A key the transaction did not
// write itself joins what it read.
func (t *Txn) Get(key []byte) ([]byte, error) {
	return t.read(key, nil, readCopy)
}

// AppendValue appends what Get would return for key to dst.
func (t *Txn) AppendValue(dst, key []byte) ([]byte, error) {
	return t.read(key, dst, readAppend)
}

// Has reports whether Get would find a value for key.
func (t *Txn) Has(key []byte) (bool, error) {
	return found(t.read(key, nil, readNone))
}

func (t *Txn) read(key, dst []byte, mode readMode) ([]byte, error) {
	if err := t.check(false); err != nil {
		return dst, err
	}
	if err := base.CheckKey(key); err != nil {
		return dst, err
	}
	var index *batchIndex
	if t.batch != nil {
		v, res, err := t.batch.readIndex(key, dst, mode)
		switch res {
		case memstore.Found, memstore.Deleted:
			return v, err
		case memstore.Merge: // folded onto what the snapshot holds: a read of it
			index = t.batch.index
		}
		t.addKey(key)
	}
	return t.snap.readUnder(index, key, dst, mode)
}

// NewIterator returns an iterator over [lower, upper) as the transaction
// sees it now: the snapshot under its writes so far. The whole range joins
// what the transaction read, whatever the iterator visits.
func (t *Txn) NewIterator(lower, upper []byte) (*Iterator, error) {
	if err := t.check(false); err != nil {
		return nil, err
	}
	rs, err := t.snap.acquire()
	if err != nil {
		return nil, err
	}
	var index *batchIndex
	if t.batch != nil {
		index = t.batch.index
		t.addRange(lower, upper)
	}
	return t.db.newIterator(rs, lower, upper, t.snapSeq, index), nil
}

// NewPrefixIterator returns an iterator over the keys that start with
// prefix, as NewIterator(prefix, PrefixUpperBound(prefix)) does.
func (t *Txn) NewPrefixIterator(prefix []byte) (*Iterator, error) {
	if err := t.db.opts.checkPrefixOrder(); err != nil {
		return nil, err
	}
	return t.NewIterator(prefix, PrefixUpperBound(prefix))
}

// Put writes value under key when the transaction commits.
func (t *Txn) Put(key, value []byte) error {
	if err := t.check(true); err != nil {
		return err
	}
	return t.batch.Put(key, value)
}

// Delete deletes key when the transaction commits.
func (t *Txn) Delete(key []byte) error {
	if err := t.check(true); err != nil {
		return err
	}
	return t.batch.Delete(key)
}

// Merge merges operand into key's value when the transaction commits, as
// DB.Merge does. A merge reads nothing, so it adds nothing to what the
// commit checks; reads of key in the transaction see it folded.
func (t *Txn) Merge(key, operand []byte) error {
	if err := t.check(true); err != nil {
		return err
	}
	return t.batch.Merge(key, operand)
}

// DeleteRange deletes every key in [start, end) when the transaction
// commits, as Batch.DeleteRange takes it.
func (t *Txn) DeleteRange(start, end []byte) error {
	if err := t.check(true); err != nil {
		return err
	}
	return t.batch.DeleteRange(start, end)
}

// Commit writes the transaction's writes as one batch, as opts says, and
// ends it. ErrConflict, writing nothing, if a write committed since the
// transaction's snapshot touched what it read; ErrTxnTooOld if the
// transaction ran so long that the database stopped keeping what it must
// check against. A transaction that wrote nothing commits without a check:
// it read one snapshot.
func (t *Txn) Commit(opts WriteOptions) error {
	if err := t.check(false); err != nil {
		return err
	}
	if t.managed {
		return ErrTxnManaged
	}
	defer t.Discard()
	if t.batch == nil || t.batch.Len() == 0 {
		return nil
	}
	sync, err := opts.sync(t.db.opts.NoSync)
	if err != nil {
		return err
	}
	b := t.batch
	if b.err != nil {
		return b.err
	}
	if b.rangeDels > 0 {
		if err := t.db.opts.checkRangeDelOrder(); err != nil {
			return err
		}
	}
	// Checked against the writes so far outside the commit pipeline, the
	// transaction holds up the writes behind it only for those that come
	// while it waits to append.
	t.seal(t.db.oracle.cmp)
	if err = t.db.oracle.precertify(&t.readSet); err == nil {
		w := waiterPool.Get().(*commitWaiter)
		w.batch, w.sync, w.txn = b, sync, &t.readSet
		err = t.db.commit(w)
		w.batch, w.txn = nil, nil
		waiterPool.Put(w)
	}
	switch {
	case err == nil:
		t.db.txnCommits.Add(1)
	case errors.Is(err, ErrConflict):
		t.db.txnConflicts.Add(1)
		// The write met may still await its fsync: a retry begun at once
		// would read past it and meet it again.
		t.db.commits.waitPublished(t.db.commits.lastAssigned(nil))
	}
	return err
}

// Discard ends the transaction without writing; after Commit it does
// nothing. A Txn must end one way or the other.
func (t *Txn) Discard() {
	if t.done {
		return
	}
	t.done = true
	t.snap.Release()
	if t.update {
		t.db.oracle.end(t.snapSeq)
	}
}

// check returns why the transaction cannot read, or write if write.
func (t *Txn) check(write bool) error {
	switch {
	case t.done:
		return ErrTxnDone
	case write && !t.update:
		return ErrTxnReadOnly
	}
	return t.db.checkOpen()
}
