package simpledb

import (
	"fmt"
	"time"

	"github.com/stratadb/strata/internal/base"
)

// Writes go through a group commit. A writer queues its batch; the first
// writer to find no leader becomes one, takes every queued batch (up to
// maxGroupBytes), assigns their sequence numbers, appends them to the log,
// syncs the log once if any of them asked for it, applies them to the
// memstore, and publishes their sequence numbers to readers. Then it hands
// leadership to the next queued writer and returns. Writers arriving during
// a sync form the next group, so one fsync serves many synced writes and
// throughput rises with concurrency instead of queueing behind a lock.
//
// Readers see a batch all at once: they read at the published sequence
// number, which moves past a batch only after all of it is applied.

// maxGroupBytes bounds one group's log bytes, so the leader's latency stays
// bounded while followers pile up.
const maxGroupBytes = 4 << 20

type commitWaiter struct {
	batch *Batch // nil for a flush request
	sync  bool
	// flush asks the leader to make the active memstore immutable; rotated
	// is then the log number of the memstore it froze.
	flush   bool
	rotated uint64
	done    chan commitResult
}

type commitResult struct {
	err  error
	lead bool // the receiver is the next leader
}

// Put sets key to value.
func (d *DB) Put(key, value []byte) error {
	var b Batch
	if err := b.Put(key, value); err != nil {
		return err
	}
	return d.Write(&b)
}

// Delete deletes key. Deleting an absent key is not an error.
func (d *DB) Delete(key []byte) error {
	var b Batch
	if err := b.Delete(key); err != nil {
		return err
	}
	return d.Write(&b)
}

// Write applies a batch atomically, synced unless Options.NoSync says
// otherwise. An empty batch is a no-op.
func (d *DB) Write(b *Batch) error {
	return d.WriteWithOptions(b, &WriteOptions{Sync: !d.opts.NoSync})
}

// WriteWithOptions applies a batch atomically with per-write options; nil
// options mean the database's defaults.
func (d *DB) WriteWithOptions(b *Batch, o *WriteOptions) error {
	if o == nil {
		o = &WriteOptions{Sync: !d.opts.NoSync}
	}
	if b.err != nil {
		return b.err
	}
	if b.count == 0 {
		return d.checkOpen()
	}
	return d.commit(&commitWaiter{batch: b, sync: o.Sync, done: make(chan commitResult, 1)})
}

// commit queues w and, if no writer leads, leads: it commits the queue's
// head as a group, then hands leadership on.
func (d *DB) commit(w *commitWaiter) error {
	d.mu.Lock()
	switch {
	case d.closed.Load():
		d.mu.Unlock()
		return ErrClosed
	case d.bgErr != nil:
		err := d.bgErr
		d.mu.Unlock()
		return err
	}
	d.inflight.Add(1)
	d.mu.Unlock()
	defer d.inflight.Done()

	d.commitMu.Lock()
	d.queue = append(d.queue, w)
	if d.leading {
		d.commitMu.Unlock()
		r := <-w.done
		if !r.lead {
			return r.err
		}
		d.commitMu.Lock()
	} else {
		d.leading = true
	}
	// Leader: w is at the front of the queue.
	n, size := 0, 0
	for n < len(d.queue) && (n == 0 || size+d.queue[n].size() <= maxGroupBytes) {
		size += d.queue[n].size()
		n++
	}
	group := d.queue[:n:n]
	d.queue = d.queue[n:]
	d.commitMu.Unlock()

	err := d.commitGroup(group)

	d.commitMu.Lock()
	for _, f := range group[1:] {
		f.done <- commitResult{err: err}
	}
	if len(d.queue) > 0 {
		d.queue[0].done <- commitResult{lead: true}
	} else {
		d.leading = false
	}
	d.commitMu.Unlock()
	return err
}

func (w *commitWaiter) size() int {
	if w.batch == nil {
		return 0
	}
	return len(w.batch.data)
}

// commitGroup logs and applies a group, then serves its flush requests.
// Only the leader runs it.
func (d *DB) commitGroup(group []*commitWaiter) error {
	var batches, flushes []*commitWaiter
	for _, w := range group {
		if w.batch != nil {
			batches = append(batches, w)
		} else {
			flushes = append(flushes, w)
		}
	}
	if len(batches) > 0 {
		if err := d.commitBatches(batches); err != nil {
			return err
		}
	}
	if len(flushes) == 0 {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.bgErr != nil {
		return d.bgErr
	}
	rotated := d.mem.logNum
	if d.mem.m.Len() > 0 {
		if err := d.rotate(); err != nil {
			return err
		}
	} else if len(d.imm) > 0 {
		rotated = d.imm[len(d.imm)-1].logNum
	} else {
		rotated = 0
	}
	for _, w := range flushes {
		w.rotated = rotated
	}
	return nil
}

// commitBatches logs and applies batches, then publishes them.
func (d *DB) commitBatches(group []*commitWaiter) error {
	if err := d.makeRoom(); err != nil {
		return err
	}
	seq := d.lastSeq + 1
	sync := false
	var logBytes, userBytes int64
	for _, w := range group {
		w.batch.setSeq(seq)
		seq += uint64(w.batch.count)
		sync = sync || w.sync
	}
	if seq-1 > base.MaxSeq {
		return d.fail(fmt.Errorf("sequence numbers exhausted"))
	}
	for _, w := range group {
		if _, err := d.wal.Write(w.batch.data); err != nil {
			return d.fail(err)
		}
		logBytes += int64(len(w.batch.data))
		userBytes += w.batch.bytes
	}
	// Unsynced writes still reach the operating system, so they survive a
	// crash of the process, if not of the machine.
	flush := d.wal.Flush
	if sync {
		flush = d.wal.Sync
	}
	if err := flush(); err != nil {
		return d.fail(err)
	}
	mem := d.mem.m
	for _, w := range group {
		_, _, err := decodeBatch(w.batch.data, func(seq uint64, kind base.Kind, key, value []byte) error {
			return mem.Apply(seq, kind, key, value)
		})
		if err != nil {
			return d.fail(fmt.Errorf("apply: %w", err))
		}
	}
	d.lastSeq = seq - 1
	d.visibleSeq.Store(seq - 1)

	d.mu.Lock()
	d.stats.userBytes += userBytes
	d.stats.logBytes += logBytes
	d.stats.writes += int64(len(group))
	if sync {
		d.stats.logSyncs++
	}
	d.mu.Unlock()
	return nil
}

// fail records a failure of the write path: the log's tail is in an
// unknown state, so the database refuses further writes.
func (d *DB) fail(err error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.setBackgroundError(fmt.Errorf("write: %w", err))
}

// setBackgroundError records the first failure and wakes stalled writers.
// The caller holds d.mu.
func (d *DB) setBackgroundError(err error) error {
	if d.bgErr == nil {
		d.bgErr = fmt.Errorf("%w: %w", ErrBackground, err)
		d.log.Error("simpledb: background error; writes are refused until reopen", "err", err)
	}
	d.cond.Broadcast()
	return d.bgErr
}

// makeRoom makes sure the active memstore can take a write: when it is
// full it becomes immutable and a new one (with a new log) takes its
// place. If too many memstores await their flush, or L0 holds too many
// tables, it stalls the writer until background work catches up.
func (d *DB) makeRoom() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var stalledAt time.Time
	defer func() {
		if !stalledAt.IsZero() {
			d.stats.stallTime += time.Since(stalledAt)
		}
	}()
	for {
		switch {
		case d.bgErr != nil:
			return d.bgErr
		case d.mem.m.SizeBytes() < d.opts.MemstoreSize:
			if d.opts.DisableAutoCompaction || len(d.current.levels[0]) < d.opts.L0StopWritesThreshold {
				return nil
			}
		case len(d.imm) < d.opts.MaxImmutableMemstores:
			return d.rotate()
		}
		if stalledAt.IsZero() {
			stalledAt = time.Now()
			d.stats.stalls++
			d.log.Debug("simpledb: write stall", "immutable", len(d.imm), "l0", len(d.current.levels[0]))
		}
		d.cond.Wait()
	}
}

// rotate makes the active memstore immutable and starts a new one with a
// new log. The caller holds d.mu and is the commit leader.
func (d *DB) rotate() error {
	old := d.wal
	if err := old.Close(); err != nil { // syncs what the old memstore holds
		return d.setBackgroundError(fmt.Errorf("close log: %w", err))
	}
	d.wal = nil
	d.imm = append(d.imm, d.mem)
	if err := d.newLog(); err != nil {
		return d.setBackgroundError(err)
	}
	d.installReadState()
	d.cond.Broadcast()
	return nil
}
