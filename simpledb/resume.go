package simpledb

import (
	"time"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/internal/manifest"
)

// A failure of the write path (the log, a rotation, a flush, the manifest)
// fails the database: writes are refused with ErrBackground wrapping the
// cause, reads go on. What happens next depends on the cause:
//
//   - A failure the filesystem caused (an I/O error, a full disk) is
//     recoverable: Resume makes every write the memstores hold durable in
//     new tables, on a new log where the log failed and in a new manifest
//     where the manifest failed, and takes writes again. Out of space
//     (ENOSPC, EDQUOT) resumes by itself: the database retries
//     resumeFirstDelay after the failure, then at doubling intervals up to
//     resumeMaxDelay, until space is back, as RocksDB's automatic recovery
//     does.
//   - Anything else (damage, a broken invariant) waits for a reopen.
//
// A compaction out of space fails nothing (unless it was the manifest's
// write that failed): it is retried at the same intervals, and writes go
// on while the log and flushes have room. If L0
// reaches L0StopWritesThreshold meanwhile, a write that would stall is
// refused with ErrBackground wrapping the compaction's error instead of
// waiting without end.
//
// Abandoning a failed log is safe because nothing is written to the new one
// until the memstore of the failed one is durable in a table: until then a
// crash replays the failed log, torn tail and all, followed by an empty
// one; after it, the failed log is obsolete, and the writes whose outcome
// was unknown are known to be lost.

const (
	resumeFirstDelay = 100 * time.Millisecond
	resumeMaxDelay   = 5 * time.Second
)

// Resume recovers the database from a failure of its write path that the
// filesystem caused, once the fault has cleared (see ErrBackground): it
// writes what the memstores hold to new tables (on a new log, if the log
// failed; into a new manifest, if the manifest failed) and takes writes
// again. Compactions put off for want of space are retried at once. A write that failed with ErrWriteOutcomeUnknown before it is then
// known to be lost. It returns nil at once if nothing failed; the failure,
// unchanged, if only a reopen can clear it (ErrCorruption, say); or the
// error that stopped it, the fault still being there: the database stays
// failed, and Resume may be called again. Out of space resumes by itself.
// Resume is safe for concurrent use; a Close meanwhile waits for it.
func (d *DB) Resume() error {
	d.closeMu.RLock()
	defer d.closeMu.RUnlock()
	if err := d.checkWritable(); err != nil {
		return err
	}
	d.resumeMu.Lock()
	defer d.resumeMu.Unlock()
	d.mu.Lock()
	failure, ok := d.mu.failure.resumable()
	if d.mu.compaction.unpause() {
		// Compactions put off for want of space try again now.
		d.cond.Broadcast()
	}
	d.mu.Unlock()
	if failure == nil || !ok {
		return failure
	}
	// Nothing is in flight while the log and the manifest are replaced.
	err := d.commits.whileQuiet(func() error {
		started, err := d.restartLog(d.commits)
		if err != nil {
			return err
		}
		d.mu.Lock()
		defer d.mu.Unlock()
		if err := d.mu.versions.restartManifest(d.mu.memstores.logs()); err != nil {
			return err
		}
		if started.Num == 0 {
			return nil
		}
		// The new log, recorded before anything is written to it.
		return d.mu.versions.writeEdit(&manifest.Edit{Logs: []manifest.LogInfo{started}})
	})
	if err == nil {
		d.mu.Lock()
		err = d.mu.memstores.flushForResume()
		d.mu.Unlock()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil {
		// The latest cause is the one a caller needs to see.
		d.mu.failure.replace(errs.Errorf("resume: %w", err))
		d.startAutoResume()
		return d.mu.failure.err()
	}
	d.mu.failure.clear()
	d.failed.Store(false)
	d.mu.stats.resumes++
	emit(d.events, d.listener().Resumed, ResumeInfo{Err: failure})
	d.cond.Broadcast()
	d.logger.Info("simpledb: resumed writes after a background error", "err", failure)
	return nil
}

// restartLog replaces a failed log of p, the commit pipeline, or a
// missing one (a rotation that failed after closing the old log), with a
// new one, which it returns (none if the log had not failed). The memstore
// of the log it replaces joins those awaiting a flush. The caller holds
// p's log lock, with nothing in flight (see commitPipeline.whileQuiet).
func (d *DB) restartLog(p *commitPipeline) (manifest.LogInfo, error) {
	if p.hasLog() {
		return manifest.LogInfo{}, nil
	}
	p.abandonLog()
	d.mu.Lock()
	num := d.mu.versions.newFileNum()
	d.mu.Unlock()
	w, f, err := d.logs.create(num, manifest.LogInfo{})
	if err != nil {
		return manifest.LogInfo{}, err
	}
	d.mu.Lock()
	d.mu.memstores.rotate(&memTable{m: d.opts.newMemstore(), logNum: num, logID: w.info.ID}, true)
	d.installReadState()
	d.mu.Unlock()
	p.restart(w, f)
	return w.info, nil
}

// startAutoResume starts a goroutine retrying Resume if the database is
// out of space and none runs: at a failure, at a Resume that failed, and
// as the goroutine ends, for a failure that came while it was ending. The
// caller holds d.mu.
func (d *DB) startAutoResume() {
	if !d.closed.Load() && d.mu.failure.startAutoResume() {
		d.bgWG.Add(1)
		go d.autoResume()
	}
}

// autoResume retries Resume while the database is out of space, at
// doubling intervals, until it resumes, fails for another reason, or
// closes; see startAutoResume.
func (d *DB) autoResume() {
	defer d.bgWG.Done()
	defer func() {
		d.mu.Lock()
		d.mu.failure.autoResumeEnded()
		d.startAutoResume()
		d.mu.Unlock()
	}()
	for delay := resumeFirstDelay; ; delay = min(2*delay, resumeMaxDelay) {
		select {
		case <-d.closing:
			return
		case <-time.After(delay):
		}
		if err := d.Resume(); err == nil || !outOfSpace(err) {
			return
		}
	}
}

// pauseCompactions puts compactions off after one ran out of space: the
// next waits for the back-off to pass. The caller holds d.mu.
func (d *DB) pauseCompactions(err error) {
	backoff := d.mu.compaction.paused(err, time.Now())
	d.mu.stats.compactionsPaused++
	d.logger.Warn("simpledb: compaction out of space; retrying later, writes go on", "err", err, "retry in", backoff)
	time.AfterFunc(backoff, func() {
		d.mu.Lock()
		d.cond.Broadcast()
		d.mu.Unlock()
	})
}
