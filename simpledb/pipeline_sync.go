package simpledb

import (
	"time"

	"github.com/stratadb/strata/internal/errs"
)

// syncLog is stage 2: it returns once the log is durable up to end, or
// the log has failed. If no fsync is running it runs one: it hands the
// log's buffer to the operating system (under log.mu, so appends wait
// only for that write) and fsyncs everything appended so far, without
// holding any lock. The append stage (which rotates logs under log.mu)
// can so wait for a running fsync. After an fsync it publishes what became
// durable.
func (p *commitPipeline) syncLog(end uint64) {
	for {
		p.sync.mu.Lock()
		for p.syncedTo.Load() < end && p.sync.err == nil && (p.sync.syncing || p.gather.wait()) {
			p.sync.cond.Wait()
		}
		done := p.syncedTo.Load() >= end || p.sync.err != nil
		p.sync.mu.Unlock()
		if done {
			return
		}

		p.log.mu.Lock()
		p.sync.mu.Lock()
		claimed := !p.sync.syncing && p.syncedTo.Load() < end && p.sync.err == nil
		p.sync.syncing = p.sync.syncing || claimed
		if claimed {
			p.gather.claimed()
		}
		p.sync.mu.Unlock()
		if !claimed {
			p.log.mu.Unlock()
			continue
		}
		err := errNoLog
		if p.log.w != nil {
			err = p.log.w.Flush()
		}
		target, file := uint64(p.counters.logBytes.Load()), p.log.file
		var num uint64
		if p.log.w != nil {
			num = p.log.w.info.Num
		}
		p.log.mu.Unlock()
		if err == nil {
			start := time.Now()
			err = file.Sync()
			took := time.Since(start)
			p.counters.syncNanos.Add(int64(took))
			p.gather.synced(took)
			if p.env.synced != nil {
				p.env.synced(num, took)
			}
		}
		if err != nil {
			// Recorded before the fsync counts as finished, so that a
			// rotation waiting for it finds the log failed.
			p.failLog(errs.Errorf("sync log: %w", err))
		}

		p.sync.mu.Lock()
		p.sync.syncing = false
		if err == nil {
			p.syncedTo.Store(max(p.syncedTo.Load(), target))
			p.counters.syncs.Add(1)
		}
		p.sync.cond.Broadcast()
		p.sync.mu.Unlock()
		p.publishReady(nil)
	}
}

// failLog records a failure of the log, of an append or an fsync, and
// returns the error for the writes it hits. What the log holds past its
// last good fsync may or may not be on disk: after a failed fsync the
// kernel may have dropped the dirty pages and cleared the error, so a
// second fsync that succeeds proves nothing. So the log is never synced
// again (rotateLog and close refuse to), every write it has not made
// durable fails, and the database fails. The database's failure is
// recorded first, so that no writer sees the log failed and the database
// not.
func (p *commitPipeline) failLog(err error) error {
	p.env.fail(errs.Errorf("write: %w", err))
	p.sync.mu.Lock()
	defer p.sync.mu.Unlock()
	if p.sync.err == nil {
		p.sync.err = errs.Errorf("%w: %w: write: %w", ErrWriteOutcomeUnknown, ErrBackground, err)
		p.logFailed.Store(true)
		p.sync.cond.Broadcast()
	}
	return p.sync.err
}

// logError returns the log's failure, nil if it has none.
func (p *commitPipeline) logError() error {
	p.sync.mu.Lock()
	defer p.sync.mu.Unlock()
	return p.sync.err
}
