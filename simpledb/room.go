package simpledb

import (
	"time"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/internal/manifest"
)

func (d *DB) backgroundError() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.mu.failure.err()
}

// fail records a failure of the write path that leaves the log intact:
// the database refuses further writes.
func (d *DB) fail(err error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.setBackgroundError(errs.Errorf("write: %w", err))
}

// setBackgroundError records the first failure and wakes stalled writers.
// Out of space, it starts retrying Resume. The caller holds d.mu.
func (d *DB) setBackgroundError(err error) error {
	f := &d.mu.failure
	if f.set(err) {
		d.failed.Store(true)
		d.mu.stats.backgroundErrors++
		_, resumable := f.resumable()
		emit(d.events, d.listener().BackgroundError, BackgroundErrorInfo{Err: err, Resumable: resumable, OutOfSpace: outOfSpace(err)})
		switch {
		case resumable && outOfSpace(err):
			d.logger.Error("simpledb: out of space; writes are refused until space is back", "err", err)
			d.startAutoResume()
		case resumable:
			d.logger.Error("simpledb: background error; writes are refused until Resume or a reopen", "err", err)
		default:
			d.logger.Error("simpledb: background error; writes are refused until reopen", "err", err)
		}
	}
	d.cond.Broadcast()
	return f.err()
}

// hasRoom reports, without d.mu, the common case: no failure, room in the
// active memstore, L0 in shape. Only the commit pipeline's leader calls
// it, and only the leader replaces the active memstore.
func (d *DB) hasRoom() bool {
	return !d.failed.Load() && d.mu.memstores.active().m.SizeBytes() < d.opts.MemstoreSize &&
		(d.opts.DisableAutoCompaction || d.mu.versions.l0Count() < (d.opts.L0StopWritesThreshold))
}

// waitForRoom stalls the leader, before it takes the log's lock, until a write can
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

// makeRoom returns the memstore the next group goes to, one that can
// take a write: when the active one is full it becomes immutable and a
// new one (with a new log) takes its place. The commit pipeline's leader
// calls it, holding the log's lock, after waitForRoom.
func (d *DB) makeRoom() (*memTable, error) {
	if !d.hasRoom() {
		d.mu.Lock()
		rotate, err := d.stall()
		d.mu.Unlock()
		if rotate {
			err = d.rotate()
		}
		if err != nil {
			return nil, err
		}
	}
	return d.mu.memstores.active(), nil
}

// rotateForFlush serves a flush request: it makes the active memstore
// immutable, if anything was written to it, and returns the log number of
// the newest immutable memstore, for Flush to wait for (0: none). The
// commit pipeline's leader calls it, holding the log's lock.
func (d *DB) rotateForFlush() (uint64, error) {
	if mt := d.mu.memstores.active(); mt.appended > 0 {
		return mt.logNum, d.rotate()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.mu.memstores.newestImmutable(), nil
}

// stall waits while too many memstores await their flush or L0 holds too
// many tables, and counts the stall. It returns rotate when the active
// memstore is full and may become immutable. The caller holds d.mu.
func (d *DB) stall() (rotate bool, err error) {
	var stalledAt time.Time
	var cause string
wait:
	for {
		switch {
		case d.mu.failure.err() != nil:
			err = d.mu.failure.err()
			break wait
		case d.mu.memstores.active().m.SizeBytes() < d.opts.MemstoreSize:
			if d.opts.DisableAutoCompaction || len(d.mu.versions.current().levels[0]) < d.opts.L0StopWritesThreshold {
				break wait
			}
			if d.mu.compaction.pausedBy() != nil {
				// Only a compaction makes room in L0, and it waits for space.
				err = errs.Errorf("%w: compaction: %w", ErrBackground, d.mu.compaction.pausedBy())
				break wait
			}
		case d.mu.memstores.immutable() < d.opts.MaxImmutableMemstores:
			// Only the leader adds to imm, so there is still room once
			// d.mu is released for the rotation.
			rotate = true
			break wait
		}
		if stalledAt.IsZero() {
			stalledAt = time.Now()
			cause = StallMemstores
			if d.mu.memstores.active().m.SizeBytes() < d.opts.MemstoreSize {
				cause = StallL0
			}
			emit(d.events, d.listener().WriteStallBegin, WriteStallInfo{Cause: cause})
			d.mu.stats.stalls++
			d.logger.Debug("simpledb: write stall", "immutable", d.mu.memstores.immutable(), "l0", len(d.mu.versions.current().levels[0]))
		}
		d.cond.Wait()
	}
	if !stalledAt.IsZero() {
		took := time.Since(stalledAt)
		d.mu.stats.stallTime += took
		emit(d.events, d.listener().WriteStallEnd, WriteStallInfo{Cause: cause, Duration: took})
	}
	return rotate, err
}

// rotate makes the active memstore immutable and starts a new one with a
// new log, in a recycled log's file if one is kept. The caller holds the
// commit pipeline's log lock, which owns the log, and not d.mu: the old
// log's fsync and the new log's creation run without it, so flushes,
// compactions and Stats do not wait for them, and d.mu is taken only to
// publish the switch. Until then readers and flushes see the old memstore
// as the active one, which it still is to them.
//
// The old log is synced and closed (commitPipeline.closeLog), unless it
// failed: then rotate refuses. A crash after the new log is created but
// before its header is durable leaves a header-less newest log, which no
// manifest names yet (the edit naming it follows the header's sync), and
// which recovery treats as empty.
func (d *DB) rotate() error {
	old := d.mu.memstores.active()
	oldSize, err := d.commits.closeLog()
	if err != nil {
		return err
	}
	// From here the database has no log until the new one is recorded: a
	// failure leaves none (see Resume).
	d.mu.Lock()
	old.logSize = uint64(oldSize)
	num, recycled := d.mu.versions.newFileNum(), d.mu.versions.takeRecycledLog()
	d.mu.Unlock()
	w, f, err := d.logs.create(num, recycled)
	if err != nil {
		return d.fail(err)
	}
	// The manifest records the old log's length and the new log before
	// anything is written to it.
	d.mu.Lock()
	err = d.mu.versions.writeEdit(&manifest.Edit{Logs: []manifest.LogInfo{{Num: old.logNum, Size: uint64(oldSize)}, w.info}})
	d.mu.Unlock()
	if err != nil {
		w.Close()
		return d.fail(err)
	}
	d.commits.installLog(w, f)

	d.mu.Lock()
	defer d.mu.Unlock()
	if recycled.Num != 0 {
		d.mu.stats.logsRecycled++
	}
	d.mu.memstores.rotate(&memTable{m: d.opts.newMemstore(), logNum: num, logID: w.info.ID}, false)
	d.installReadState()
	return nil
}
