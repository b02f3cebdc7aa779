package simpledb

import (
	"fmt"
	"sync"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/logformat"
	"github.com/stratadb/strata/internal/manifest"
	"github.com/stratadb/strata/sstables"
)

// Writes go through a pipelined group commit, in three stages:
//
//  1. Append. Writers queue; the first to find no leader leads. It takes
//     every queued write (up to maxGroupBytes) as a group, makes room in
//     the memstore, assigns sequence numbers and appends the batches to the
//     log, then hands leadership to the next queued writer at once: the
//     next group appends while this one waits for its fsync.
//  2. Sync. A group that asked for durability waits until the log is synced
//     past its end. Syncs are shared: whoever finds no fsync running starts
//     one covering everything appended so far, so one fsync serves every
//     group appended while the previous one ran. It first waits, briefly,
//     for the writers the previous fsync released to append again, so
//     that writers in a loop share one fsync rather than take turns in
//     two halves (see syncGather).
//  3. Publish. Appended groups wait in a list, in append order. Whoever
//     finds groups at its head ready (durable, if they asked to be) applies
//     them to their memstores, publishes their sequence numbers and wakes
//     their writers, as many as are ready, in one pass; usually the
//     goroutine whose fsync made them durable. Readers see a batch all at
//     once, only once it is durable, and never a later batch without an
//     earlier one.
//
// Throughput therefore rises with the number of writers instead of
// queueing behind one lock and one fsync per write.

// maxGroupBytes bounds one group's log bytes.
const maxGroupBytes = 4 << 20

type commitWaiter struct {
	// batch is nil for a flush request, which asks the leader to make the
	// active memstore immutable; rotated is then the log number of the
	// newest immutable memstore, for Flush to wait for (0 if none), and
	// err the rotation's failure, which is not the batches' in its group.
	batch   *Batch
	txn     *Txn // the transaction the batch commits, if any: see oracle
	sync    bool
	rotated uint64
	err     error
	// done carries the waiter's result, unless its own goroutine
	// published its group: publishReady then leaves it in result.
	done   chan commitResult
	result error
}

type commitResult struct {
	err  error
	lead bool // the receiver is the next leader
}

var waiterPool = sync.Pool{New: func() any { return &commitWaiter{done: make(chan commitResult, 1)} }}

// commitGroup is a group between its append and its publication.
type commitGroup struct {
	waiters []*commitWaiter
	mem     *memTable // the memstore its batches go to; nil if none, or the append failed
	lastSeq uint64
	logEnd  uint64 // the log's logical length after the group
	sync    bool
	flush   bool // the group holds flush requests
	logged  bool // it wrote to the log, if only in part
	err     error
}

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
		if err := d.checkRangeDelOrder(); err != nil {
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
func (d *DB) checkRangeDelOrder() error {
	if d.opts.Comparator.Name != sstables.Bytewise.Name {
		return fmt.Errorf("%w: the database orders keys by %q", ErrRangeDelOrder, d.opts.Comparator.Name)
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
		if err := d.checkRangeDelOrder(); err != nil {
			return err
		}
	}
	if b.merges > 0 {
		if err := d.checkMerges(b); err != nil {
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

// commit queues w and, if no writer leads, leads a group through the
// pipeline.
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
	g := groupPool.Get().(*commitGroup)
	g.waiters = append(g.waiters, d.queue[:n]...)
	clear(d.queue[:n])
	d.queue = append(d.queue[:0], d.queue[n:]...)
	d.commitMu.Unlock()

	d.certify(g)
	syncTo := d.appendGroup(g)

	d.commitMu.Lock()
	if len(d.queue) > 0 {
		d.queue[0].done <- commitResult{lead: true}
	} else {
		d.leading = false
	}
	d.commitMu.Unlock()

	if syncTo > 0 {
		d.syncLog(syncTo)
	}
	var err error
	if d.publishReady(w) {
		err = w.result
	} else {
		err = (<-w.done).err
	}
	// The leader is its group's first waiter, and the publisher wakes it
	// last: nothing uses the group any more. (A leader whose transaction
	// was refused left the group, which others may still be publishing: it
	// is not recycled then.)
	if len(g.waiters) > 0 && g.waiters[0] == w {
		putGroup(g)
	}
	return err
}

// groupPool recycles commit groups and their waiter lists.
var groupPool = sync.Pool{New: func() any { return new(commitGroup) }}

func putGroup(g *commitGroup) {
	clear(g.waiters)
	*g = commitGroup{waiters: g.waiters[:0]}
	groupPool.Put(g)
}

func (w *commitWaiter) size() int {
	if w.batch == nil {
		return 0
	}
	return len(w.batch.data)
}

// appendGroup is stage 1: make room, assign sequence numbers, append the
// batches to the log, and serve flush requests. Only the leader runs it.
// It returns the log length the group must be synced to, or 0 if it need
// not be: once the group is enqueued, a publisher of another goroutine
// may fail it and write g.err, so the leader reads nothing of it after.
func (d *DB) appendGroup(g *commitGroup) (syncTo uint64) {
	// A stall waits before walMu: groups appended before this one need it
	// to start their fsync, and must not wait for a compaction.
	stallErr := d.waitForRoom()
	d.walMu.Lock()
	defer d.walMu.Unlock()
	// Enqueue for publication on the way out, in append order, error or
	// not: every group's writers get their result from the publisher.
	defer func() {
		if g.err == nil && g.sync {
			syncTo = g.logEnd
		}
		d.pubMu.Lock()
		d.pending = append(d.pending, g)
		d.pubMu.Unlock()
	}()
	if g.err = stallErr; g.err != nil {
		return
	}
	if g.err = d.makeRoom(); g.err != nil {
		return
	}
	seq := d.lastSeq + 1
	var batches, syncedBatches, userBytes int64
	synced := int64(d.syncedTo.Load()) - d.walBase
	for _, w := range g.waiters {
		if w.batch == nil {
			g.flush = true
			continue
		}
		batches++
		w.batch.setSeq(seq)
		logformat.SetSynced(w.batch.data, synced)
		seq += uint64(w.batch.count)
		d.recordWrite(w.batch, seq-1)
		if w.sync {
			g.sync = true
			syncedBatches++
		}
		userBytes += w.batch.bytes
	}
	if seq-1 > base.MaxSeq {
		g.err = d.fail(fmt.Errorf("sequence numbers exhausted"))
		return
	}
	start := d.wal.Size()
	for _, w := range g.waiters {
		if w.batch == nil {
			continue
		}
		g.logged = true
		if _, err := d.wal.Write(w.batch.data); err != nil {
			g.err = d.failLog(err)
			return
		}
	}
	if logBytes := d.wal.Size() - start; logBytes > 0 {
		// Synced groups stay in the log's buffer for the fsync that will
		// cover them; unsynced ones reach the operating system now, so
		// they survive a crash of the process, if not of the machine.
		if !g.sync {
			if err := d.wal.Flush(); err != nil {
				g.err = d.failLog(err)
				return
			}
		}
		g.logEnd = uint64(d.writeStats.logBytes.Add(logBytes))
		g.lastSeq, d.lastSeq = seq-1, seq-1
		// Only now is the group the memstore's to apply: apply marks it
		// done, and a failed append never counted.
		g.mem = d.mem
		g.mem.writes.Add(1)
		g.mem.appended++
		d.gather.appended(syncedBatches)
	}
	d.writeStats.userBytes.Add(userBytes)
	d.writeStats.writes.Add(batches)

	if !g.flush {
		return
	}
	for _, w := range g.waiters {
		if w.batch != nil {
			continue
		}
		// A flush request freezes the active memstore, if anything was
		// written to it, and waits for the newest frozen one.
		if d.mem.appended > 0 {
			w.rotated = d.mem.logNum
			if err := d.rotate(); err != nil {
				for _, w := range g.waiters {
					if w.batch == nil {
						w.err = err
					}
				}
				return
			}
			continue
		}
		d.mu.Lock()
		w.rotated = 0
		if n := len(d.imm); n > 0 {
			w.rotated = d.imm[n-1].logNum
		}
		d.mu.Unlock()
	}
	return // syncTo is set as the group is enqueued
}

// syncLog is stage 2: it returns once the log is durable up to end, or
// the log has failed. If no fsync is running it runs one: it hands the
// log's buffer to the operating system (under walMu, so appends wait only
// for that write) and fsyncs everything appended so far, without holding
// any lock. Locks are taken in the order walMu, syncMu, so the append stage
// (which rotates logs under walMu) can wait for a running fsync. After an
// fsync it publishes what became durable.
func (d *DB) syncLog(end uint64) {
	for {
		d.syncMu.Lock()
		for d.syncedTo.Load() < end && d.logErr == nil && (d.syncing || d.gather.wait()) {
			d.syncCond.Wait()
		}
		done := d.syncedTo.Load() >= end || d.logErr != nil
		d.syncMu.Unlock()
		if done {
			return
		}

		d.walMu.Lock()
		d.syncMu.Lock()
		claimed := !d.syncing && d.syncedTo.Load() < end && d.logErr == nil
		d.syncing = d.syncing || claimed
		if claimed {
			d.gather.claimed()
		}
		d.syncMu.Unlock()
		if !claimed {
			d.walMu.Unlock()
			continue
		}
		err := errNoLog
		if d.wal != nil {
			err = d.wal.Flush()
		}
		target, file := uint64(d.writeStats.logBytes.Load()), d.walFile
		d.walMu.Unlock()
		if err == nil {
			start := time.Now()
			err = file.Sync()
			took := time.Since(start)
			d.logSyncNanos.Add(int64(took))
			d.gather.synced(took)
		}
		if err != nil {
			// Recorded before the fsync counts as finished, so that a
			// rotation waiting for it finds the log failed.
			d.failLog(fmt.Errorf("sync log: %w", err))
		}

		d.syncMu.Lock()
		d.syncing = false
		if err == nil {
			d.syncedTo.Store(max(d.syncedTo.Load(), target))
			d.logSyncs.Add(1)
		}
		d.syncCond.Broadcast()
		d.syncMu.Unlock()
		d.publishReady(nil)
	}
}

// publishReady is stage 3: it applies and publishes, in order, every group
// at the head of the pending list that is ready, and hands each writer its
// result. A group is ready once it failed, or did not ask for durability,
// or the log is synced past it. After a log failure every group the log
// had not made durable fails, synced or not, and once a group that reached
// the log has failed no later one succeeds: a write is never visible or
// acknowledged without every write before it.
//
// If it publishes the group of self, the caller's own waiter (nil for
// none), it leaves self's result in self.result rather than sending it
// through self.done, and reports true: for a lone writer, which publishes
// its own writes, the channel's round trip cost a tenth of a Put.
func (d *DB) publishReady(self *commitWaiter) (published bool) {
	d.pubMu.Lock()
	defer d.pubMu.Unlock()
	synced := d.syncedTo.Load()
	var logErr error
	if d.logFailed.Load() {
		d.syncMu.Lock()
		synced, logErr = d.syncedTo.Load(), d.logErr
		d.syncMu.Unlock()
	}
	n := 0
	for ; n < len(d.pending); n++ {
		g := d.pending[n]
		if g.err == nil && g.mem != nil && g.logEnd > synced {
			if logErr != nil {
				g.err = logErr
			} else if g.sync {
				break // awaits its fsync
			}
		}
		if g.err == nil && g.logged && d.pubErr != nil {
			g.err = d.pubErr
		}
		d.apply(g)
		if g.err == nil && g.sync {
			d.gather.released(g.waiters)
		}
		if g.err != nil && g.logged && d.pubErr == nil {
			d.pubErr = g.err
		}
		// The first waiter, the group's leader, last: once woken it
		// recycles the group.
		for i := len(g.waiters) - 1; i >= 0; i-- {
			w := g.waiters[i]
			err := g.err
			if w.batch == nil {
				// A flush request fails with its rotation or the database,
				// not with its group's batches.
				err = w.err
				if err == nil && g.err != nil {
					err = d.backgroundError()
				}
			}
			if w == self {
				w.result, published = err, true
				continue
			}
			w.done <- commitResult{err: err}
		}
	}
	clear(d.pending[:n])
	d.pending = append(d.pending[:0], d.pending[n:]...)
	return published
}

// apply applies a group's batches to its memstore and publishes them,
// unless the group failed. A group that reached the log, and its fsync if
// it asked for one, is applied even if the database has failed since: a
// flush or compaction failure does not undo a durable write. The caller
// holds d.pubMu.
func (d *DB) apply(g *commitGroup) {
	if g.mem == nil {
		return
	}
	defer g.mem.writes.Done()
	if g.err != nil {
		return
	}
	for _, w := range g.waiters {
		if w.batch == nil {
			continue
		}
		_, _, err := logformat.Decode(logformat.Current, w.batch.data, func(seq uint64, kind base.Kind, key, value []byte) error {
			return g.mem.m.Apply(seq, kind, key, value)
		})
		if err != nil {
			// Some of its entries may be in the memstore, unpublished:
			// nothing later may publish them.
			g.err = d.failLog(fmt.Errorf("apply: %w", err))
			return
		}
	}
	d.visibleSeq.Store(g.lastSeq)
}

func (d *DB) backgroundError() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.bgErr
}

// fail records a failure of the write path that leaves the log intact:
// the database refuses further writes.
func (d *DB) fail(err error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.setBackgroundError(fmt.Errorf("write: %w", err))
}

// failLog records a failure of the log, of an append or an fsync, and
// returns the error for the writes it hits. What the log holds past its
// last good fsync may or may not be on disk: after a failed fsync the
// kernel may have dropped the dirty pages and cleared the error, so a
// second fsync that succeeds proves nothing. So the log is never synced
// again (rotate and Close refuse to), every write it has not made durable
// fails, and the database fails. The database's failed state is set first,
// so that no writer sees the log failed and the database not.
func (d *DB) failLog(err error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.setBackgroundError(fmt.Errorf("write: %w", err))
	d.syncMu.Lock()
	defer d.syncMu.Unlock()
	if d.logErr == nil {
		d.logErr = fmt.Errorf("%w: %w: write: %w", ErrWriteOutcomeUnknown, ErrBackground, err)
		d.logFailed.Store(true)
		d.syncCond.Broadcast()
	}
	return d.logErr
}

// setBackgroundError records the first failure and wakes stalled writers.
// Out of space, it starts retrying Resume. The caller holds d.mu.
func (d *DB) setBackgroundError(err error) error {
	if d.bgErr == nil {
		d.bgErr = fmt.Errorf("%w: %w", ErrBackground, err)
		d.bgRecoverable = recoverable(err)
		d.failed.Store(true)
		d.stats.backgroundErrors++
		switch {
		case d.bgRecoverable && outOfSpace(err):
			d.logger.Error("simpledb: out of space; writes are refused until space is back", "err", err)
			if !d.autoResuming && !d.closed.Load() {
				d.autoResuming = true
				d.bgWG.Add(1)
				go d.autoResume()
			}
		case d.bgRecoverable:
			d.logger.Error("simpledb: background error; writes are refused until Resume or a reopen", "err", err)
		default:
			d.logger.Error("simpledb: background error; writes are refused until reopen", "err", err)
		}
	}
	d.cond.Broadcast()
	return d.bgErr
}

// hasRoom reports, without d.mu, the common case: no failure, room in the
// active memstore, L0 in shape. Only the leader calls it, and only the
// leader replaces d.mem.
func (d *DB) hasRoom() bool {
	return !d.failed.Load() && d.mem.m.SizeBytes() < d.opts.MemstoreSize &&
		(d.opts.DisableAutoCompaction || d.l0Tables.Load() < int64(d.opts.L0StopWritesThreshold))
}

// waitForRoom stalls the leader, before it takes walMu, until a write can
// go in at once: the active memstore has room, or is full but may become
// immutable, and L0 is in shape. Only background work changes that, so
// once it returns nil makeRoom does not stall.
func (d *DB) waitForRoom() error {
	if d.hasRoom() {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	_, err := d.stall()
	return err
}

// makeRoom makes sure the active memstore can take a write: when it is
// full it becomes immutable and a new one (with a new log) takes its
// place. The caller holds d.walMu and has waited for room first.
func (d *DB) makeRoom() error {
	if d.hasRoom() {
		return nil
	}
	d.mu.Lock()
	rotate, err := d.stall()
	d.mu.Unlock()
	if rotate {
		return d.rotate()
	}
	return err
}

// stall waits while too many memstores await their flush or L0 holds too
// many tables, and counts the stall. It returns rotate when the active
// memstore is full and may become immutable. The caller holds d.mu.
func (d *DB) stall() (rotate bool, err error) {
	var stalledAt time.Time
wait:
	for {
		switch {
		case d.bgErr != nil:
			err = d.bgErr
			break wait
		case d.mem.m.SizeBytes() < d.opts.MemstoreSize:
			if d.opts.DisableAutoCompaction || len(d.current.levels[0]) < d.opts.L0StopWritesThreshold {
				break wait
			}
			if d.compactPause != nil {
				// Only a compaction makes room in L0, and it waits for space.
				err = fmt.Errorf("%w: compaction: %w", ErrBackground, d.compactPause)
				break wait
			}
		case len(d.imm) < d.opts.MaxImmutableMemstores:
			// Only the leader adds to imm, so there is still room once
			// d.mu is released for the rotation.
			rotate = true
			break wait
		}
		if stalledAt.IsZero() {
			stalledAt = time.Now()
			d.stats.stalls++
			d.logger.Debug("simpledb: write stall", "immutable", len(d.imm), "l0", len(d.current.levels[0]))
		}
		d.cond.Wait()
	}
	if !stalledAt.IsZero() {
		d.stats.stallTime += time.Since(stalledAt)
	}
	return rotate, err
}

// rotate makes the active memstore immutable and starts a new one with a
// new log, in a recycled log's file if one is kept. The
// caller holds d.walMu, which owns the log, and not d.mu: the
// old log's fsync and the new log's creation run without it, so flushes,
// compactions and Stats do not wait for them, and d.mu is taken only to
// publish the switch. Until then readers and flushes see the old memstore
// as the active one, which it still is to them.
//
// The old log is synced and closed once no fsync of it is running; none
// can start meanwhile, since syncLog claims one only under walMu. If that
// fsync failed, or any before it, the log is not synced again: rotate
// refuses. A crash after the new log is created but before its header is
// durable leaves a header-less newest log, which no manifest names yet
// (the edit naming it follows the header's sync), and which recovery
// treats as empty.
func (d *DB) rotate() error {
	d.syncMu.Lock()
	for d.syncing {
		d.syncCond.Wait()
	}
	failed := d.logErr != nil
	d.syncMu.Unlock()
	if failed {
		return d.backgroundError()
	}
	oldNum, oldSize := d.mem.logNum, d.wal.Size()
	if err := d.wal.Close(); err != nil { // syncs what the old memstore holds
		d.failLog(fmt.Errorf("close log: %w", err))
		return d.backgroundError()
	}
	logical := d.writeStats.logBytes.Load()
	d.syncMu.Lock()
	d.syncedTo.Store(uint64(logical))
	d.syncMu.Unlock()

	// From here the database has no log until the new one is recorded: a
	// failure leaves none (see Resume).
	d.wal, d.walFile = nil, nil
	d.mu.Lock()
	d.mem.logSize = uint64(oldSize)
	num, recycled := d.newFileNum(), d.takeRecycledLog()
	d.mu.Unlock()
	w, f, err := d.createLog(num, recycled)
	if err != nil {
		return d.fail(err)
	}
	// The manifest records the old log's length and the new log before
	// anything is written to it.
	d.mu.Lock()
	err = d.writeEdit(&manifest.Edit{Logs: []manifest.LogInfo{{Num: oldNum, Size: uint64(oldSize)}, w.info}})
	d.mu.Unlock()
	if err != nil {
		w.Close()
		return d.fail(err)
	}
	d.wal, d.walFile, d.walBase = w, f, logical-w.Size()

	d.mu.Lock()
	defer d.mu.Unlock()
	if recycled.Num != 0 {
		d.stats.logsRecycled++
	}
	d.imm = append(d.imm, d.mem)
	d.mem = &memTable{m: d.newMemstore(), logNum: num, logID: w.info.ID}
	d.installReadState()
	d.cond.Broadcast()
	return nil
}
