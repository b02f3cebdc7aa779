package simpledb

import (
	"slices"
	"sync"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/internal/manifest"
)

// flushScheduler owns the memstores, the active one and the immutable ones
// awaiting their flush, and is the only code that flushes one, whatever
// asks: its loop flushes the immutable memstores in turn while the
// database is healthy; Flush waits for it (waitFlushed); Resume has it
// flush through the database's failure (flushForResume); Close stops it.
// So a memstore is written by one flush, and imm[0] stays the memstore
// being flushed while the lock is released for the write: everyone else
// only appends to imm (rotate), and only the loop removes from it.
//
// It is guarded by DB.mu, which it shares with the version set, so that a
// flush's edit and the memstore it retires change together; its cond is
// DB.cond, broadcast whenever flush, compaction or failure state changes.
// It calls nothing but its flushEnv.
type flushScheduler struct {
	cond *sync.Cond
	env  flushEnv
	mem  *memTable
	imm  []*memTable // full memstores awaiting their flush, oldest first
	// resume: Resume has the loop flush through the database's failure
	// (asked), and err is the flush failure that stopped it.
	resume struct {
		asked bool
		err   error
	}
}

// flushEnv is what the flush scheduler asks of the database.
type flushEnv struct {
	// flush writes mt, the oldest immutable memstore, to a table and
	// installs it, calling flushed once its edit is durable. It is called
	// with the lock held, which it releases while it writes.
	flush func(mt *memTable) error
	// failed reports whether the database has failed; closed whether it is
	// closing; fail records a flush's failure as the database's.
	failed func() bool
	closed func() bool
	fail   func(err error)
}

// loop flushes immutable memstores, oldest first, one at a time, until
// the database closes. Memstores not flushed by then are safe in their
// logs. It flushes while the database is healthy, and, through a failure,
// while Resume asks it to: a failed flush then fails that Resume rather
// than the database, which has failed already.
func (s *flushScheduler) loop() {
	s.cond.L.Lock()
	defer s.cond.L.Unlock()
	for {
		for !s.env.closed() && (len(s.imm) == 0 || s.env.failed() && !s.resume.asked) {
			s.cond.Wait()
		}
		if s.env.closed() {
			return
		}
		switch err := s.env.flush(s.imm[0]); {
		case err == nil || err == ErrClosed:
		case s.resume.asked:
			s.resume.asked, s.resume.err = false, err
		default:
			s.env.fail(errs.Errorf("flush: %w", err))
		}
		s.cond.Broadcast()
	}
}

// reset makes mt the active memstore, and none immutable: at Open, and at
// a follower's catch-up.
func (s *flushScheduler) reset(mt *memTable) {
	s.mem, s.imm = mt, nil
}

// active returns the active memstore. It changes only under both DB.mu
// and the commit pipeline's log lock, so either suffices to read it.
func (s *flushScheduler) active() *memTable { return s.mem }

// flushed removes mt, the oldest immutable memstore, whose flush's edit is
// durable: env.flush calls it, under the lock.
func (s *flushScheduler) flushed(mt *memTable) {
	if s.imm[0] != mt {
		panic("simpledb: a flush of a memstore not the oldest")
	}
	s.imm = s.imm[1:]
}

// nextLog returns the log of the memstore after the oldest immutable one:
// once that one's flush is durable, the oldest log still needed.
func (s *flushScheduler) nextLog() uint64 {
	if len(s.imm) > 1 {
		return s.imm[1].logNum
	}
	return s.mem.logNum
}

// rotate makes the active memstore immutable and next the active one;
// abandoned marks the old one's log as given up (see Resume).
func (s *flushScheduler) rotate(next *memTable, abandoned bool) {
	s.mem.abandoned = abandoned
	s.imm = append(s.imm, s.mem)
	s.mem = next
	s.cond.Broadcast()
}

// newestImmutable returns the log number of the newest immutable memstore,
// 0 if none awaits its flush: what a Flush request waits for.
func (s *flushScheduler) newestImmutable() uint64 {
	if n := len(s.imm); n > 0 {
		return s.imm[n-1].logNum
	}
	return 0
}

// waitFlushed waits until every memstore up to the one of log rotated is
// flushed, and returns nil, or the database's failure, or ErrClosed.
// failure returns the database's failure, nil if none.
func (s *flushScheduler) waitFlushed(rotated uint64, failure func() error) error {
	for {
		switch {
		case failure() != nil:
			return failure()
		case s.env.closed():
			return ErrClosed
		case len(s.imm) == 0 || s.imm[0].logNum > rotated:
			return nil
		}
		s.cond.Wait()
	}
}

// flushForResume has the loop flush every memstore awaiting a flush,
// though the database has failed, and waits until it has, or a flush has
// failed. A flush the loop was running already, before the failure or the
// call, counts as one of them: it is the loop's, and no second flush of
// its memstore starts beside it.
func (s *flushScheduler) flushForResume() error {
	s.resume.asked, s.resume.err = true, nil
	s.cond.Broadcast()
	for s.resume.asked && len(s.imm) > 0 && !s.env.closed() {
		s.cond.Wait()
	}
	s.resume.asked = false
	switch {
	case s.resume.err != nil:
		return errs.Errorf("flush: %w", s.resume.err)
	case len(s.imm) > 0:
		return ErrClosed
	}
	return nil
}

// all returns the memstores, the active one first, then the immutable
// ones newest first: the order a read looks in.
func (s *flushScheduler) all() []*memTable {
	all := []*memTable{s.mem}
	for i := len(s.imm) - 1; i >= 0; i-- {
		all = append(all, s.imm[i])
	}
	return all
}

// held returns the bytes the memstores hold.
func (s *flushScheduler) held() int64 {
	var n int64
	for _, mt := range s.all() {
		n += mt.m.SizeBytes()
	}
	return n
}

// immutable counts the memstores awaiting their flush.
func (s *flushScheduler) immutable() int { return len(s.imm) }

// logs returns the logs the memstores hold, oldest first, for a new
// manifest.
func (s *flushScheduler) logs() []manifest.LogInfo {
	var logs []manifest.LogInfo
	for _, mt := range append(slices.Clone(s.imm), s.mem) {
		logs = append(logs, manifest.LogInfo{Num: mt.logNum, Size: mt.logSize, ID: mt.logID})
	}
	return logs
}

// readState returns a read state of the memstores and version v, holding
// a reference on each.
func (s *flushScheduler) readState(v *version) *readState {
	return newReadState(s.mem, s.imm, v)
}

// charge returns what the memstores are charged to the memory budget: see
// DB.chargeMemstores. size is the memstore size a writable database
// charges each at least, and slots the immutable memstores it may hold; a
// read-only database (size 0) charges each its size.
func (s *flushScheduler) charge(size int64, slots int) int64 {
	var charge int64
	for _, mt := range s.all() {
		charge += max(mt.m.SizeBytes(), size)
	}
	if size > 0 {
		charge += int64(max(slots-len(s.imm), 0)) * size
	}
	return charge
}
