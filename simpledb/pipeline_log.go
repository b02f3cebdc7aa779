package simpledb

import (
	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/vfs"
)

// The pipeline's log changes hands in four ways: Open starts it (resetSeq,
// then installLog), a rotation replaces it (closeLog, then installLog,
// both under log.mu, from the env's makeRoom or rotateForFlush), Resume
// replaces a failed one (quiesce, abandonLog, restart), and Close ends it
// (close).

// closeLog syncs and closes the log for a rotation, once no fsync of it is
// running (none can start meanwhile: syncLog claims one only under
// log.mu), and leaves the pipeline without a log until installLog. It
// returns the closed log's size. A log that failed, now or before, is not
// synced again: closeLog refuses with the database's failure. The caller
// holds p.log.mu.
func (p *commitPipeline) closeLog() (size int64, err error) {
	p.sync.mu.Lock()
	for p.sync.syncing {
		p.sync.cond.Wait()
	}
	failed := p.sync.err != nil
	p.sync.mu.Unlock()
	if failed {
		return 0, p.env.failure()
	}
	size = p.log.w.Size()
	if err := p.log.w.Close(); err != nil {
		p.failLog(errs.Errorf("close log: %w", err))
		return 0, p.env.failure()
	}
	p.sync.mu.Lock()
	p.syncedTo.Store(uint64(p.counters.logBytes.Load()))
	p.sync.mu.Unlock()
	p.log.w, p.log.file = nil, nil
	return size, nil
}

// installLog makes w, in file f, the log groups append to. The caller
// holds p.log.mu, or has not shared the pipeline yet, and the pipeline has
// no log: see closeLog.
func (p *commitPipeline) installLog(w *logWriter, f vfs.File) {
	p.log.w, p.log.file, p.log.base = w, f, p.counters.logBytes.Load()-w.Size()
}

// hasLog reports whether the pipeline has a log that has not failed. The
// caller holds p.log.mu.
func (p *commitPipeline) hasLog() bool {
	return p.log.w != nil && p.logError() == nil
}

// whileQuiet runs fn holding p.log.mu, which keeps new groups out, once no
// group is between its append and its publication and no fsync runs:
// nothing is in flight while fn replaces a failed log (see abandonLog and
// restart).
func (p *commitPipeline) whileQuiet(fn func() error) error {
	p.log.mu.Lock()
	defer p.log.mu.Unlock()
	p.quiesce()
	return fn()
}

// quiesce waits until no group is between its append and its publication
// and no fsync runs. The caller holds p.log.mu, which it releases while
// it waits (a group waiting for its fsync needs it to start one).
func (p *commitPipeline) quiesce() {
	for {
		p.pub.mu.Lock()
		p.sync.mu.Lock()
		idle := len(p.pub.pending) == 0 && !p.sync.syncing
		p.sync.mu.Unlock()
		if idle {
			p.pub.mu.Unlock()
			return
		}
		// Every fsync ends in a publishReady, which broadcasts under
		// pub.mu: the wake-up is not lost.
		p.log.mu.Unlock()
		p.pub.cond.Wait()
		p.pub.mu.Unlock()
		p.log.mu.Lock()
	}
}

// abandonLog gives up a failed log without syncing it: its tail is
// unknown, and after a failed fsync a retry proves nothing. The caller
// holds p.log.mu: see whileQuiet.
func (p *commitPipeline) abandonLog() {
	if p.log.w != nil {
		p.log.file.Close()
		p.log.w, p.log.file = nil, nil
	}
}

// restart makes w, in file f, the log after a failure, and clears the
// failure: the groups the failure hit are all published. The caller holds
// p.log.mu: see whileQuiet.
func (p *commitPipeline) restart(w *logWriter, f vfs.File) {
	p.installLog(w, f)
	p.sync.mu.Lock()
	p.syncedTo.Store(uint64(p.counters.logBytes.Load()))
	p.sync.err = nil
	p.logFailed.Store(false)
	p.sync.mu.Unlock()
	p.pub.mu.Lock()
	p.pub.err = nil
	p.pub.mu.Unlock()
}

// close ends the log at Close, once no write can start: it returns the
// log's size once synced and closed, or the log's failure (the file is
// then closed unsynced: see failLog), or, when a rotation left no log,
// the database's failure.
func (p *commitPipeline) close() (size int64, err error) {
	p.gather.stop()
	p.log.mu.Lock()
	defer p.log.mu.Unlock()
	w, f := p.log.w, p.log.file
	p.log.w, p.log.file = nil, nil
	switch err = p.logError(); {
	case err != nil:
		// The log's writer would flush and fsync it on Close, so its file
		// is closed instead. (A Resume that failed may have given the file
		// up already.)
		if f != nil {
			f.Close()
		}
		return 0, err
	case w == nil:
		return 0, p.env.failure()
	}
	return w.Size(), w.Close()
}

// resetSeq makes seq the last sequence number assigned and published: the
// last a replay applied, before the pipeline's first write, or a
// follower's, which appends nothing.
func (p *commitPipeline) resetSeq(seq uint64) {
	p.log.mu.Lock()
	p.log.lastSeq = seq
	p.log.mu.Unlock()
	p.visibleSeq.Store(seq)
}

// visible returns the sequence number every published write is at or
// below: a read at it sees every write acknowledged before it began.
func (p *commitPipeline) visible() uint64 { return p.visibleSeq.Load() }

// lastAssigned returns the last sequence number assigned, under the
// log's lock, after running fn (if not nil) under it too: what fn does
// comes before every later append.
func (p *commitPipeline) lastAssigned(fn func(last uint64)) uint64 {
	p.log.mu.Lock()
	defer p.log.mu.Unlock()
	if fn != nil {
		fn(p.log.lastSeq)
	}
	return p.log.lastSeq
}

// waitPublished waits until every write numbered up to seq is published
// or has failed (a failed write is never published, so the visible
// sequence number need not reach it). A write appended is resolved within
// an fsync: its leader publishes it, or sees it published.
func (p *commitPipeline) waitPublished(seq uint64) {
	if p.visible() >= seq {
		return // every group up to seq is published: none waits
	}
	p.pub.mu.Lock()
	defer p.pub.mu.Unlock()
	for p.pendingUpTo(seq) {
		p.pub.cond.Wait()
	}
}

// pendingUpTo reports whether a group numbered at or below seq awaits its
// publication. The caller holds p.pub.mu.
func (p *commitPipeline) pendingUpTo(seq uint64) bool {
	for _, g := range p.pub.pending {
		if g.lastSeq != 0 && g.lastSeq <= seq {
			return true
		}
	}
	return false
}

// writeStats returns the write path's running totals.
func (p *commitPipeline) writeStats() writeStats {
	c := &p.counters
	return writeStats{writes: c.writes.Load(), userBytes: c.userBytes.Load(), logBytes: c.logBytes.Load(),
		syncs: c.syncs.Load(), syncNanos: c.syncNanos.Load(), mergesFolded: c.mergesFolded.Load()}
}

// release closes the log, unsynced, if the pipeline still has one: after
// a failed Open.
func (p *commitPipeline) release() error {
	p.log.mu.Lock()
	defer p.log.mu.Unlock()
	w := p.log.w
	p.log.w, p.log.file = nil, nil
	if w == nil {
		return nil
	}
	return w.Close()
}
