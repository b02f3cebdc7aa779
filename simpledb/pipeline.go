package simpledb

import (
	"fmt"
	"iter"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/logformat"
	"github.com/stratadb/strata/vfs"
)

// commitPipeline is the write path: it takes batches from the writers,
// appends them to the log and applies them to a memstore, in three stages:
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
//
// The pipeline owns the queue, the log it appends to, the sequence
// numbers, the sync stage, the log's failure, and when a merge may fold
// into its key's entry as it is applied, which snapshots, taken beside it,
// also decide (mergeFolds). What it needs of the
// database around it (room in a memstore, a transaction's certification,
// the database's failure) it asks of its commitEnv, and nothing else: it
// can run, and is tested, over a fake one. Its locks are taken in the
// order log.mu, pub.mu, sync.mu; queue.mu is innermost.
type commitPipeline struct {
	env commitEnv

	queue struct {
		mu      sync.Mutex
		waiters []*commitWaiter
		leading bool
	}

	// log is the append stage's: held while a group appends, and by a
	// rotation, which replaces the log. The active memstore changes only
	// under it.
	log struct {
		mu      sync.Mutex
		w       *logWriter
		file    vfs.File // the log's file, which the sync stage fsyncs
		lastSeq uint64   // the last sequence number assigned
		// base maps the logs' logical length, in which the sync stage
		// measures durability, to offsets in the current log: offset =
		// logical length - base.
		base int64
	}

	// pub holds the groups appended but not yet published, in order, and
	// err: once a group that reached the log fails, every later one fails
	// with it. cond is broadcast at every publishReady.
	pub struct {
		mu      sync.Mutex
		cond    *sync.Cond
		pending []*commitGroup
		err     error
	}

	// sync is the sync stage's. err is the log's first failure, of an
	// append or an fsync (set by failLog): nothing is appended or synced
	// after it, and every write past syncedTo fails with it.
	sync struct {
		mu      sync.Mutex
		cond    *sync.Cond
		syncing bool // an fsync is running
		err     error
	}
	// syncedTo: the logs are durable up to this logical length; written
	// under sync.mu, read anywhere. logFailed is set and cleared with
	// sync.err, so that the publisher takes sync.mu only once there is one.
	syncedTo  atomic.Uint64
	logFailed atomic.Bool
	// gather holds the next fsync back for the synced writers the last one
	// released; its unsynchronized state is guarded by sync.mu.
	gather syncGather

	counters   writeCounters
	visibleSeq atomic.Uint64 // every write up to it is applied and readable
	folds      mergeFolds
}

// commitEnv is what the pipeline asks of the database around it. Each
// function is called by a group's leader, in the order listed.
type commitEnv struct {
	// certify returns why transaction t may not commit, the writes ahead
	// of it in its group being about to commit too; nil if it may. Before
	// the group appends, without the log's lock.
	certify func(t *readSet, ahead iter.Seq[*Batch]) error
	// waitForRoom stalls until a write can go in at once, without the
	// log's lock: groups appended before need it for their fsyncs.
	waitForRoom func() error
	// makeRoom returns the memstore the group goes to, under the log's
	// lock, after rotating a full one (see rotateLog).
	makeRoom func() (*memTable, error)
	// recordWrite notes batch b, numbered up to lastSeq, once it is
	// appended, under the log's lock: in sequence order.
	recordWrite func(b *Batch, lastSeq uint64)
	// rotateForFlush serves a flush request, under the log's lock: it
	// makes the active memstore immutable if anything went to it, and
	// returns the log number of the newest immutable memstore (0: none).
	rotateForFlush func() (rotated uint64, err error)
	// fail records a failure of the write path as the database's, and
	// returns the database's error; failure returns it, nil if none.
	fail    func(err error) error
	failure func() error
	// merge is Options.Merger's Merge, which folds merge operands as they
	// are applied (see mergeFolds); nil without a merger. Under pub.mu.
	merge func(key, older, newer []byte) ([]byte, error)
	// synced reports an fsync of the log number num that took took,
	// without the log's lock.
	synced func(num uint64, took time.Duration)
}

// maxGroupBytes bounds one group's log bytes.
const maxGroupBytes = 4 << 20

type commitWaiter struct {
	// batch is nil for a flush request, which asks the leader to make the
	// active memstore immutable; rotated is then the log number of the
	// newest immutable memstore, for Flush to wait for (0 if none), and
	// err the rotation's failure, which is not the batches' in its group.
	batch   *Batch
	txn     *readSet // what the transaction the batch commits read, if any: see oracle
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

func (w *commitWaiter) size() int {
	if w.batch == nil {
		return 0
	}
	return len(w.batch.data)
}

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

// groupPool recycles commit groups and their waiter lists.
var groupPool = sync.Pool{New: func() any { return new(commitGroup) }}

func putGroup(g *commitGroup) {
	clear(g.waiters)
	*g = commitGroup{waiters: g.waiters[:0]}
	groupPool.Put(g)
}

// newCommitPipeline returns a pipeline with no log and no write yet: see
// resetSeq and installLog.
func newCommitPipeline(env commitEnv) *commitPipeline {
	p := &commitPipeline{env: env}
	p.pub.cond = sync.NewCond(&p.pub.mu)
	p.sync.cond = sync.NewCond(&p.sync.mu)
	p.gather.init(p.sync.cond)
	return p
}

// commit queues w and, if no writer leads, leads a group through the
// pipeline. It returns w's result.
func (p *commitPipeline) commit(w *commitWaiter) error {
	q := &p.queue
	q.mu.Lock()
	q.waiters = append(q.waiters, w)
	if q.leading {
		q.mu.Unlock()
		r := <-w.done
		if !r.lead {
			return r.err
		}
		q.mu.Lock()
	} else {
		q.leading = true
	}
	// Leader: w is at the front of the queue.
	n, size := 0, 0
	for n < len(q.waiters) && (n == 0 || size+q.waiters[n].size() <= maxGroupBytes) {
		size += q.waiters[n].size()
		n++
	}
	g := groupPool.Get().(*commitGroup)
	g.waiters = append(g.waiters, q.waiters[:n]...)
	clear(q.waiters[:n])
	q.waiters = append(q.waiters[:0], q.waiters[n:]...)
	q.mu.Unlock()

	p.certify(g)
	syncTo := p.appendGroup(g)

	q.mu.Lock()
	if len(q.waiters) > 0 {
		q.waiters[0].done <- commitResult{lead: true}
	} else {
		q.leading = false
	}
	q.mu.Unlock()

	if syncTo > 0 {
		p.syncLog(syncTo)
	}
	var err error
	if p.publishReady(w) {
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

// certify refuses the transactions of a group that may not commit, which
// leave it with their error; the others go on.
func (p *commitPipeline) certify(g *commitGroup) {
	if !slices.ContainsFunc(g.waiters, func(w *commitWaiter) bool { return w.txn != nil }) {
		return // nothing to certify, and nothing to allocate for it
	}
	kept := g.waiters[:0]
	ahead := func(yield func(*Batch) bool) {
		for _, w := range kept {
			if w.batch != nil && !yield(w.batch) {
				return
			}
		}
	}
	for _, w := range g.waiters {
		if w.txn != nil {
			if err := p.env.certify(w.txn, ahead); err != nil {
				w.done <- commitResult{err: err}
				continue
			}
		}
		kept = append(kept, w)
	}
	clear(g.waiters[len(kept):])
	g.waiters = kept
}

// appendGroup is stage 1: make room, assign sequence numbers, append the
// batches to the log, and serve flush requests. Only the leader runs it.
// It returns the log length the group must be synced to, or 0 if it need
// not be: once the group is enqueued, a publisher of another goroutine
// may fail it and write g.err, so the leader reads nothing of it after.
func (p *commitPipeline) appendGroup(g *commitGroup) (syncTo uint64) {
	// A stall waits before log.mu: groups appended before this one need it
	// to start their fsync, and must not wait for a compaction.
	stallErr := p.env.waitForRoom()
	p.log.mu.Lock()
	defer p.log.mu.Unlock()
	// Enqueue for publication on the way out, in append order, error or
	// not: every group's writers get their result from the publisher.
	defer func() {
		if g.err == nil && g.sync {
			syncTo = g.logEnd
		}
		p.pub.mu.Lock()
		p.pub.pending = append(p.pub.pending, g)
		p.pub.mu.Unlock()
	}()
	if g.err = stallErr; g.err != nil {
		return
	}
	mem, err := p.env.makeRoom()
	if g.err = err; err != nil {
		return
	}
	if p.logFailed.Load() {
		// Nothing is appended to a failed log (see failLog).
		g.err = p.logError()
		return
	}
	seq := p.log.lastSeq + 1
	var batches, syncedBatches, userBytes int64
	synced := int64(p.syncedTo.Load()) - p.log.base
	for _, w := range g.waiters {
		if w.batch == nil {
			g.flush = true
			continue
		}
		batches++
		w.batch.setSeq(seq)
		logformat.SetSynced(w.batch.data, synced)
		seq += uint64(w.batch.count)
		if w.sync {
			g.sync = true
			syncedBatches++
		}
		userBytes += w.batch.bytes
	}
	if seq-1 > base.MaxSeq {
		g.err = p.env.fail(fmt.Errorf("write: sequence numbers exhausted"))
		return
	}
	start := p.log.w.Size()
	for _, w := range g.waiters {
		if w.batch == nil {
			continue
		}
		g.logged = true
		if _, err := p.log.w.Write(w.batch.data); err != nil {
			g.err = p.failLog(err)
			return
		}
	}
	if logBytes := p.log.w.Size() - start; logBytes > 0 {
		// Synced groups stay in the log's buffer for the fsync that will
		// cover them; unsynced ones reach the operating system now, so
		// they survive a crash of the process, if not of the machine.
		if !g.sync {
			if err := p.log.w.Flush(); err != nil {
				g.err = p.failLog(err)
				return
			}
		}
		// Recorded once appended, in sequence order: a failed append,
		// whose numbers the next group takes, recorded nothing.
		recorded := p.log.lastSeq
		for _, w := range g.waiters {
			if w.batch != nil {
				recorded += uint64(w.batch.count)
				p.env.recordWrite(w.batch, recorded)
			}
		}
		g.logEnd = uint64(p.counters.logBytes.Add(logBytes))
		g.lastSeq, p.log.lastSeq = seq-1, seq-1
		// Only now is the group the memstore's to apply: apply marks it
		// done, and a failed append never counted.
		g.mem = mem
		g.mem.writes.Add(1)
		g.mem.appended++
		p.gather.appended(syncedBatches)
	}
	p.counters.userBytes.Add(userBytes)
	p.counters.writes.Add(batches)

	if !g.flush {
		return
	}
	for _, w := range g.waiters {
		if w.batch != nil {
			continue
		}
		rotated, err := p.env.rotateForFlush()
		w.rotated = rotated
		if err != nil {
			for _, w := range g.waiters {
				if w.batch == nil {
					w.err = err
				}
			}
			return
		}
	}
	return // syncTo is set as the group is enqueued
}
