package simpledb

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/testseed"
	"github.com/stratadb/strata/vfs"
	"github.com/stratadb/strata/vfs/errorfs"
	"github.com/stretchr/testify/require"
)

// The fault torture test runs everything at once, the way a service uses
// the database: writers (Puts, Deletes, range deletions, merges, batches
// and transactions, synced and not, and now and then a Flush or Compact),
// readers holding snapshots and iterators and reading through read-only
// transactions, and a follower catching up and releasing snapshots while
// its readers read them; flushes and compactions run by themselves. Into
// this it injects filesystem faults at random moments and places: EIO or
// ENOSPC on the writes, syncs, creates, renames, removes and reuses of
// logs, tables, the manifest and CURRENT, transient (a few operations) or
// lasting (until cleared), and slows fsyncs now and then. After each round
// the database recovers by one of: Resume while the writers go on, the
// automatic resume out of space, Close and Open, or a power loss (keeping
// only what was synced, or also pages of what was not, in any order).
//
// What it checks, against a model per writer (each writer owns its keys,
// so its writes are ordered even though the writers race):
//   - every acknowledged write is there, after Resume, after a reopen, and
//     after a power loss if it was synced (or a later synced write of its
//     writer was): what a power loss leaves is the state after a prefix of
//     each writer's writes;
//   - a write that failed with any other error than ErrWriteOutcomeUnknown
//     is never seen, by the database's readers or the follower's;
//   - a write of unknown outcome is not seen before a reopen, is lost once
//     Resume returns, and after a reopen is there whole or not at all;
//   - the database always opens once the faults clear, Verify finds no
//     damage, reads never fail, a snapshot and the iterators made from it
//     read one moment, and nothing panics or faults.
//
// Each round's choices come from the seed, which a failure prints; the
// interleavings, which the scheduler picks, do not.
func TestFaultTorture(t *testing.T) {
	rounds := 60
	if testseed.Long() {
		rounds = 1500
	}
	seed := testseed.Seed(t)
	tt := newTorture(t, seed)
	defer tt.close()
	for round := range rounds {
		tt.round(round)
		if t.Failed() {
			break
		}
	}
	acked, unknown, refused := tt.outcomes()
	tt.counts.folds += tt.db.Stats().MergesFolded
	t.Logf("seed %d, %d rounds: %d faults armed, %d operations failed by them, %d failing the database; %s; "+
		"%d acknowledged writes checked, %d refused, %d of unknown outcome (%d found whole after a reopen); %d values read checked, %d follower views",
		seed, rounds, tt.counts.faults, tt.faults.hits.Load(), tt.counts.failures, &tt.counts, acked, refused, unknown,
		tt.counts.unknownKept, tt.counts.observed, tt.counts.followerViews.Load())
	require.Positive(t, tt.faults.hits.Load(), "faults were injected")
	require.Positive(t, tt.counts.failures, "faults failed the database")
	require.Positive(t, tt.counts.folds, "merges folded at insert, beside everything else")
	require.Positive(t, acked, "writes were checked")
	tt.close() // delivers the last session's events
	tt.db = nil
	for _, event := range []string{"flush end", "compaction end", "background error", "resumed", "table created", "blob file created", "log created"} {
		require.Positive(t, tt.pairs.count(event), "%s events, beside everything else", event)
	}
}

const (
	tortureWriters = 3
	tortureKeys    = 60 // per writer
)

// tortureCounts count what the test did, for its log line and for the
// requirements that it did it. The controller keeps them, but for
// followerViews.
type tortureCounts struct {
	faults, failures                                              int64
	resumes, autoResumes, reopens, reopenFaults, clones, pageLoss int64
	checkpoints, folds                                            int64
	unknownKept, observed                                         int64
	followerViews                                                 atomic.Int64
}

// String describes the recoveries.
func (c *tortureCounts) String() string {
	return fmt.Sprintf("%d Resumes of a failed database, %d automatic resumes, %d reopens (%d Opens refused under a fault first), %d power losses (%d losing unsynced pages), %d checkpoints checked, %d merges folded",
		c.resumes, c.autoResumes, c.reopens, c.reopenFaults, c.clones, c.pageLoss, c.checkpoints, c.folds)
}

// outcomes counts the writers' writes by outcome.
func (tt *torture) outcomes() (acked, unknown, refused int) {
	for _, w := range tt.writers {
		for _, op := range w.ops {
			switch op.outcome {
			case writeAcked:
				acked++
			case writeUnknown:
				unknown++
			default:
				refused++
			}
		}
	}
	return acked, unknown, refused
}

// torture is the test's state across rounds.
type torture struct {
	t       *testing.T
	seed    uint64
	rng     *rand.Rand // the controller's
	mem     *vfs.MemFS // the database's files, as a power loss would find them
	faults  *tortureFaults
	opts    *Options
	db      *DB
	writers []*tortureWriter
	taken   *takenCheckpoint // during a round, to check once it stops
	session int              // counts the database's opens
	gen     atomic.Uint64    // counts power losses; each op records it when it returns
	counts  tortureCounts
	// pairs checks the events of each session, through its faults,
	// Resumes and Close, beside the writers, readers and followers.
	pairs *eventPairs

	obsMu    sync.Mutex
	observed map[tortureTag]observation
}

// observation is where a value was read first.
type observation struct {
	session  int
	follower bool
}

func newTorture(t *testing.T, seed uint64) *torture {
	tt := &torture{t: t, seed: seed, rng: rand.New(rand.NewPCG(seed, 0)), mem: vfs.NewMem(), observed: map[tortureTag]observation{}}
	tt.faults = &tortureFaults{rng: rand.New(rand.NewPCG(seed, 1))}
	o := smallOptions()
	o.Logger = quietLogger
	o.Merger = AppendMerger
	o.MaxOpenFiles = MinMaxOpenFiles
	o.BaseLevelSize, o.TargetTableSize = 64<<10, 16<<10
	o.NoSync = tt.rng.IntN(2) == 0
	o.BlobThreshold = 100 // most of its values in blob files, beside the faults
	tt.pairs = newEventPairs()
	o.EventListener = tt.pairs.listener()
	tt.opts = o
	for w := range tortureWriters {
		tt.writers = append(tt.writers, &tortureWriter{id: w, rng: rand.New(rand.NewPCG(seed, uint64(10+w))), settled: model{}, ops: map[int]*tortureOp{}})
	}
	tt.open()
	return tt
}

func (tt *torture) msg(format string, args ...any) string {
	return fmt.Sprintf("seed %d: ", tt.seed) + fmt.Sprintf(format, args...)
}

// open opens the database on the memory filesystem, with faults cleared.
func (tt *torture) open() {
	tt.opts.FS = errorfs.Wrap(tt.mem, tt.faults)
	// A small budget, whose cache's chunks are reused all the time under
	// the readers; every other session one of 256 MiB, whose cache keeps
	// its blocks' hints and its tables' block slots, through which the
	// readers pin blocks while compactions drop tables under them.
	tt.opts.MemoryBudget = 2 << 20
	if tt.session%2 == 1 {
		tt.opts.MemoryBudget = 256 << 20
	}
	db, err := Open("/db", tt.opts)
	require.NoError(tt.t, err, tt.msg("open"))
	tt.db = db
	tt.session++
}

func (tt *torture) close() {
	if tt.db != nil {
		tt.db.Close()
		tt.pairs.closed(tt.t, tt.msg("the last close"))
	}
}

// round runs the workload, injects a fault, recovers and checks.
func (tt *torture) round(round int) {
	t := tt.t
	db := tt.db
	w := tt.start(db, round)
	defer w.stop(t) // (stopped already, unless the round failed)
	time.Sleep(time.Duration(2+tt.rng.IntN(30)) * time.Millisecond)
	if tt.rng.IntN(2) == 0 {
		// Half the faults come while a flush is under way, when the log,
		// the flush and the manifest's edits are all in flight.
		flushing := func() bool {
			db.mu.Lock()
			defer db.mu.Unlock()
			return db.mu.memstores.immutable() > 0
		}
		for deadline := time.Now().Add(50 * time.Millisecond); !flushing() && time.Now().Before(deadline); {
			time.Sleep(100 * time.Microsecond)
		}
	}

	spec := tt.faults.arm(tt.rng)
	tt.counts.faults++
	if tt.rng.IntN(3) == 0 {
		tt.checkpoint(db, round, spec)
	}
	failed := false
	for deadline := time.Now().Add(time.Duration(20+tt.rng.IntN(80)) * time.Millisecond); time.Now().Before(deadline); {
		if failed = db.failed.Load(); failed {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if failed {
		tt.counts.failures++
	}
	if spec.lasting && tt.rng.IntN(2) == 0 {
		time.Sleep(time.Duration(tt.rng.IntN(20)) * time.Millisecond) // the fault lasts a while
	}

	switch action := tt.rng.IntN(10); {
	case action < 4:
		// Resume while the writers, readers and the follower go on: it
		// must not flush what the flush loop is flushing.
		tt.faults.clear()
		if failed {
			tt.counts.resumes++
		}
		var err error
		for range 5 { // a fault injected before it cleared may fail one
			if err = db.Resume(); err == nil {
				break
			}
		}
		require.NoError(t, err, tt.msg("round %d: Resume after %v", round, spec))
		time.Sleep(time.Duration(tt.rng.IntN(20)) * time.Millisecond)
		tt.stop(w)
		tt.checkLive(round, "after Resume")
	case action < 5 && errors.Is(db.backgroundError(), syscall.ENOSPC):
		// Out of space, the database resumes by itself once there is
		// space again.
		tt.faults.clear()
		tt.counts.autoResumes++
		require.Eventually(t, func() bool { return !db.failed.Load() }, 20*time.Second, time.Millisecond,
			tt.msg("round %d: no automatic resume after %v", round, spec))
		tt.stop(w)
		tt.checkLive(round, "after the automatic resume")
	case action < 8:
		tt.stop(w)
		if tt.rng.IntN(3) > 0 {
			tt.faults.clear()
		}
		tt.counts.folds += db.Stats().MergesFolded
		db.Close() // its error is the failure's, or the fault's
		tt.pairs.closed(t, tt.msg("round %d: Close", round))
		tt.faults.clear()
		tt.reopen(round, "after Close", func(got map[int]model) { tt.settle(got, round) })
	default:
		// A power loss, while everything runs.
		gen := tt.gen.Add(1)
		mode := crashMode(tt.rng.IntN(3))
		clone := tt.mem.CrashClone(mode.options(tt.rng))
		tt.stop(w)
		tt.faults.clear()
		tt.counts.folds += db.Stats().MergesFolded
		db.Close()
		tt.pairs.closed(t, tt.msg("round %d: Close after a power loss", round))
		tt.mem = clone
		tt.counts.clones++
		if mode == crashLosesPages {
			tt.counts.pageLoss++
		}
		tt.reopen(round, fmt.Sprintf("after a power loss (%d)", mode), func(got map[int]model) { tt.settlePowerLoss(got, round, gen) })
	}
	tt.checkObservations(round)
}

// reopen proves the closed database, opens it and checks what it holds
// with check. Now and then a fault is armed during the first Open, which
// must then fail cleanly and leave the directory to the second.
func (tt *torture) reopen(round int, when string, check func(got map[int]model)) {
	t := tt.t
	opts := *tt.opts
	opts.FS = tt.mem
	report, err := Verify("/db", &opts, nil)
	require.NoError(t, err, tt.msg("round %d: Verify %s", round, when))
	require.Empty(t, report.Damage, tt.msg("round %d: Verify %s", round, when))
	if tt.rng.IntN(4) == 0 {
		tt.faults.arm(tt.rng)
		tt.opts.FS = errorfs.Wrap(tt.mem, tt.faults)
		if db, err := Open("/db", tt.opts); err == nil {
			db.Close()
			tt.pairs.closed(t, tt.msg("round %d: Close of an Open under a fault", round))
		} else {
			tt.counts.reopenFaults++
		}
		tt.faults.clear()
	}
	tt.open()
	check(tt.readWriters(tt.db, round, when))
	tt.counts.reopens++
}

// checkpoint takes a checkpoint while everything runs, under the round's
// fault: it fails cleanly, leaving nothing, or holds each writer's keys
// after a prefix of its writes that includes every write acknowledged
// before it began.
func (tt *torture) checkpoint(db *DB, round int, spec faultSpec) {
	t := tt.t
	gen := tt.gen.Add(1)
	dir := fmt.Sprintf("/checkpoint-%d", round)
	defer func() {
		names, _ := tt.mem.List(dir)
		for _, name := range names {
			tt.mem.Remove(dir + "/" + name)
		}
		tt.mem.Remove(dir)
	}()
	if err := db.Checkpoint(dir); err != nil {
		require.ErrorIs(t, err, errorfs.ErrInjected, tt.msg("round %d: checkpoint", round))
		names, _ := tt.mem.List(dir)
		require.Empty(t, names, tt.msg("round %d: a failed checkpoint leaves its files", round))
		return
	}
	tt.counts.checkpoints++
	opts := *tt.opts
	opts.FS, opts.EventListener = tt.mem, nil // its job numbers are its own
	c, err := Open(dir, &opts)
	require.NoError(t, err, tt.msg("round %d: open the checkpoint", round))
	got := tt.readWriters(c, round, "in a checkpoint")
	require.NoError(t, c.Close())
	// Writes under way when it was taken may be in it: it is checked once
	// they have returned.
	tt.taken = &takenCheckpoint{round, spec, gen, got}
}

// takenCheckpoint is a checkpoint's contents, to check once the writers
// stop.
type takenCheckpoint struct {
	round int
	spec  faultSpec
	gen   uint64
	got   map[int]model
}

// stop stops the round's workers and checks the checkpoint taken while
// they ran, if any.
func (tt *torture) stop(w *workers) {
	w.stop(tt.t)
	c := tt.taken
	if c == nil {
		return
	}
	tt.taken = nil
	for _, w := range tt.writers {
		floor := w.acknowledged(c.gen)
		require.True(tt.t, w.matchesPrefix(c.got[w.id], floor),
			tt.msg("round %d: a checkpoint under %v holds no prefix of writer %d's %d writes from %d on: %s",
				c.round, c.spec, w.id, len(w.pending), floor, diffModels(w.state(len(w.pending), false), c.got[w.id])))
	}
}

// readWriters reads a database and splits what it holds by writer.
func (tt *torture) readWriters(db *DB, round int, when string) map[int]model {
	t := tt.t
	all := readAll(t, db)
	got := map[int]model{}
	for w := range tortureWriters {
		got[w] = model{}
	}
	for k, v := range all {
		var w int
		_, err := fmt.Sscanf(k, "w%d/", &w)
		require.NoError(t, err, tt.msg("round %d: %s: a key no writer writes: %q", round, when, k))
		got[w][k] = v
	}
	return got
}

// checkLive checks the live database after a resume: it holds every
// acknowledged write, and none of unknown outcome, which the resume made
// lost.
func (tt *torture) checkLive(round int, when string) {
	got := tt.readWriters(tt.db, round, when)
	for _, w := range tt.writers {
		want := w.state(len(w.pending), false)
		require.True(tt.t, maps.Equal(want, got[w.id]), tt.msg("round %d: %s: writer %d: %s", round, when, w.id, diffModels(want, got[w.id])))
		w.dropUnknown()
	}
}

// settle checks the database after a reopen: every acknowledged write
// there, and each of unknown outcome whole or not at all. What it holds
// is then what each writer's model starts from.
func (tt *torture) settle(got map[int]model, round int) {
	for _, w := range tt.writers {
		n := len(w.pending)
		switch {
		case maps.Equal(w.state(n, false), got[w.id]):
		case n > 0 && w.pending[n-1].outcome == writeUnknown && maps.Equal(w.state(n, true), got[w.id]):
			tt.counts.unknownKept++
		default:
			tt.t.Fatal(tt.msg("round %d: after Close: writer %d: %s", round, w.id, diffModels(w.state(n, false), got[w.id])))
		}
		w.settle(got[w.id])
	}
}

// settlePowerLoss checks the database after a power loss: each writer's
// keys hold the state after a prefix of its writes, at least up to its
// last synced write acknowledged before the power went.
func (tt *torture) settlePowerLoss(got map[int]model, round int, gen uint64) {
	for _, w := range tt.writers {
		floor := w.durable(gen)
		if !w.matchesPrefix(got[w.id], floor) {
			tt.t.Fatal(tt.msg("round %d: after a power loss: writer %d holds no prefix of its %d writes from %d on: %s",
				round, w.id, len(w.pending), floor, diffModels(w.state(len(w.pending), false), got[w.id])))
		}
		w.settle(got[w.id])
	}
}

// checkObservations checks every value the round's readers saw: none of a
// write that was refused, none of a write of unknown outcome in the
// session that reported it.
func (tt *torture) checkObservations(round int) {
	tt.obsMu.Lock()
	defer tt.obsMu.Unlock()
	for tag, seen := range tt.observed {
		w := tt.writers[tag.writer]
		w.mu.Lock()
		op := w.ops[tag.n]
		w.mu.Unlock()
		switch {
		case op == nil:
			tt.t.Fatal(tt.msg("round %d: read a value no write wrote: %v", round, tag))
		case op.outcome == writeRefused:
			tt.t.Fatal(tt.msg("round %d: read a write that was refused (follower: %v): %v: %v", round, seen.follower, tag, op.err))
		case op.outcome == writeUnknown && !seen.follower && seen.session == op.session:
			tt.t.Fatal(tt.msg("round %d: read a write of unknown outcome before a reopen: %v", round, tag))
		}
	}
	tt.counts.observed += int64(len(tt.observed))
	clear(tt.observed)
}

// observe records the values read in value.
func (tt *torture) observe(value []byte, session int, follower bool) {
	tags, ok := parseTortureValue(value)
	tt.obsMu.Lock()
	defer tt.obsMu.Unlock()
	if !ok {
		tt.t.Errorf("seed %d: read a value no write wrote: %q", tt.seed, value)
		return
	}
	for _, tag := range tags {
		if _, ok := tt.observed[tag]; !ok {
			tt.observed[tag] = observation{session, follower}
		}
	}
}

// workers are a round's goroutines.
type workers struct {
	stopping atomic.Bool
	wg       sync.WaitGroup
}

// stop stops the workers and waits for them, failing rather than hanging
// if one is stuck.
func (w *workers) stop(t *testing.T) {
	w.stopping.Store(true)
	done := make(chan struct{})
	go func() { w.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		buf := make([]byte, 1<<22)
		t.Fatalf("the workers did not stop:\n%s", buf[:runtime.Stack(buf, true)])
	}
}

// start starts the round's writers, readers and follower.
func (tt *torture) start(db *DB, round int) *workers {
	w := &workers{}
	session := tt.session
	for _, wr := range tt.writers {
		w.wg.Go(func() { wr.run(tt, db, &w.stopping, session) })
	}
	for r := range 2 {
		rng := rand.New(rand.NewPCG(tt.seed, uint64(1000*round+100+r)))
		w.wg.Go(func() { tt.read(db, rng, &w.stopping, session) })
	}
	if tt.rng.IntN(3) > 0 {
		rng := rand.New(rand.NewPCG(tt.seed, uint64(1000*round+200)))
		w.wg.Go(func() { tt.follow(rng, &w.stopping) })
	}
	return w
}

// tortureTag names the write that wrote a value: its writer and number.
type tortureTag struct{ writer, n int }

// tortureValue is the value write n of writer w puts, or its merge
// operand: its tag, and pad bytes. A merged value is the operands one after
// the other.
func tortureValue(w, n, pad int) string {
	return fmt.Sprintf("w%d.%d:%s|", w, n, strings.Repeat("x", pad))
}

// parseTortureValue returns the tags of the writes a value holds.
func parseTortureValue(v []byte) ([]tortureTag, bool) {
	var tags []tortureTag
	for len(v) > 0 {
		end := bytes.IndexByte(v, '|')
		if end < 0 {
			return nil, false
		}
		var tag tortureTag
		colon := bytes.IndexByte(v[:end], ':')
		if colon < 0 {
			return nil, false
		}
		if _, err := fmt.Sscanf(string(v[:colon]), "w%d.%d", &tag.writer, &tag.n); err != nil || tag.writer < 0 || tag.writer >= tortureWriters {
			return nil, false
		}
		tags = append(tags, tag)
		v = v[end+1:]
	}
	return tags, len(tags) > 0
}

func tortureKey(w, i int) string { return fmt.Sprintf("w%d/k%03d", w, i) }

// writeOutcome is what became of a write.
type writeOutcome uint8

const (
	writeAcked   writeOutcome = iota + 1
	writeUnknown              // ErrWriteOutcomeUnknown
	writeRefused              // any other error: never applied
)

// tortureOp is one write of a writer and what became of it.
type tortureOp struct {
	workloadOp
	n       int
	outcome writeOutcome
	err     error
	session int    // the session it returned in
	gen     uint64 // torture.gen when it returned
}

// tortureWriter writes its own keys, one write at a time, and keeps the
// model of them.
type tortureWriter struct {
	id  int
	rng *rand.Rand // its goroutine's

	mu sync.Mutex
	// settled is what its keys held at the last reopen; pending are its
	// writes since that reached the log or may have, in order: acked ones,
	// and ones of unknown outcome not yet known lost.
	settled model
	pending []*tortureOp
	ops     map[int]*tortureOp // every write, by number
	next    int
}

// draw returns the writer's next write: a Flush or Compact now and then
// (n < 0), otherwise writes of its keys.
func (w *tortureWriter) draw() *tortureOp {
	rng := w.rng
	n := w.next
	w.next++
	key := func() string { return tortureKey(w.id, rng.IntN(tortureKeys)) }
	value := func() string { return tortureValue(w.id, n, rng.IntN(100)) }
	op := workloadOp{puts: map[string]string{}, merges: map[string]string{}, sync: rng.IntN(3) > 0, viaDefault: rng.IntN(2) == 0}
	switch r := rng.IntN(100); {
	case r < 1:
		return &tortureOp{workloadOp: workloadOp{flush: true}, n: -1}
	case r < 2:
		return &tortureOp{workloadOp: workloadOp{compact: true}, n: -1}
	case r < 45:
		op.puts[key()] = value()
	case r < 55:
		op.merges[key()] = tortureValue(w.id, n, 0)
	case r < 65:
		op.deletes = []string{key()}
	case r < 70:
		i := rng.IntN(tortureKeys)
		op.ranges = [][2][]byte{{[]byte(tortureKey(w.id, i)), []byte(tortureKey(w.id, i+1+rng.IntN(8)))}}
	default:
		op.txn = rng.IntN(3) == 0
		for range 1 + rng.IntN(6) {
			k := key()
			switch rng.IntN(5) {
			case 0:
				op.deletes = append(op.deletes, k)
				delete(op.puts, k)
				delete(op.merges, k)
			case 1:
				if _, ok := op.puts[k]; !ok && !slices.Contains(op.deletes, k) {
					op.merges[k] = tortureValue(w.id, n, 0) // one operand a key: values stay parsable
				}
			default:
				op.puts[k] = value()
				delete(op.merges, k)
			}
		}
	}
	return &tortureOp{workloadOp: op, n: n}
}

// run writes until stopped, recording each write's outcome.
func (w *tortureWriter) run(tt *torture, db *DB, stop *atomic.Bool, session int) {
	for !stop.Load() {
		op := w.draw()
		err := doOp(db, op.workloadOp)
		if op.n < 0 {
			continue // a Flush or Compact: a fault may fail it
		}
		op.err, op.session, op.gen = err, session, tt.gen.Load()
		w.mu.Lock()
		w.ops[op.n] = op
		switch {
		case err == nil:
			op.outcome = writeAcked
			// The database took a write after one of unknown outcome: a
			// Resume came between, and that one is lost.
			w.dropUnknown()
			w.pending = append(w.pending, op)
		case errors.Is(err, ErrWriteOutcomeUnknown):
			op.outcome = writeUnknown
			w.pending = append(w.pending, op)
		default:
			op.outcome = writeRefused
		}
		w.mu.Unlock()
		if err != nil && !errors.Is(err, ErrBackground) && !errors.Is(err, ErrClosed) {
			tt.t.Errorf("seed %d: writer %d: a write failed for another reason than the database's failure: %v", tt.seed, w.id, err)
		}
		if err != nil {
			time.Sleep(time.Millisecond) // refused: the database has failed
		}
	}
}

// dropUnknown forgets the pending writes of unknown outcome: they are
// known lost. The caller holds w.mu, or the writer is stopped.
func (w *tortureWriter) dropUnknown() {
	w.pending = slices.DeleteFunc(w.pending, func(op *tortureOp) bool { return op.outcome == writeUnknown })
}

// state returns the writer's keys after its first n pending writes, those
// of unknown outcome left out, but for the n-th if withLast.
func (w *tortureWriter) state(n int, withLast bool) model {
	m := maps.Clone(w.settled)
	for i, op := range w.pending[:n] {
		if op.outcome == writeAcked || withLast && i == n-1 {
			op.apply(m)
		}
	}
	return m
}

// durable returns how many pending writes a power loss at gen must keep:
// up to the last synced write acknowledged before it.
func (w *tortureWriter) durable(gen uint64) int {
	return w.floor(gen, true)
}

// acknowledged returns how many pending writes were acknowledged before
// gen: every one a checkpoint begun then holds.
func (w *tortureWriter) acknowledged(gen uint64) int {
	return w.floor(gen, false)
}

// floor returns the number of pending writes up to the last acknowledged
// before gen, of those synced if synced.
func (w *tortureWriter) floor(gen uint64, synced bool) int {
	floor := 0
	for i, op := range w.pending {
		if op.outcome == writeAcked && (op.sync || !synced) && op.gen < gen {
			floor = i + 1
		}
	}
	return floor
}

// matchesPrefix reports whether got is the writer's keys after a prefix of
// its pending writes at least floor long, one of unknown outcome counted
// only as the prefix's last.
func (w *tortureWriter) matchesPrefix(got model, floor int) bool {
	state := maps.Clone(w.settled)
	for k := 0; ; k++ {
		if k >= floor && maps.Equal(got, state) {
			return true
		}
		if k == len(w.pending) {
			return false
		}
		op := w.pending[k]
		if op.outcome == writeUnknown {
			if k+1 >= floor {
				with := maps.Clone(state)
				op.apply(with)
				if maps.Equal(got, with) {
					return true
				}
			}
			continue
		}
		op.apply(state)
	}
}

// settle makes got what the writer's model starts from: it was found after
// a reopen.
func (w *tortureWriter) settle(got model) {
	w.settled = got
	w.pending = nil
}

// read reads the database until stopped, through Get, AppendValue, Has,
// snapshots and iterators held across rounds of the others' writes
// (walked both ways, each value checked against the snapshot), and
// read-only transactions.
func (tt *torture) read(db *DB, rng *rand.Rand, stop *atomic.Bool, session int) {
	type held struct {
		snap *Snapshot
		it   *Iterator
		fwd  bool
		last []byte
	}
	var helds []*held
	fail := func(format string, args ...any) {
		tt.t.Errorf("seed %d: "+format, append([]any{tt.seed}, args...)...)
	}
	key := func() []byte { return []byte(tortureKey(rng.IntN(tortureWriters), rng.IntN(tortureKeys))) }
	// A read fails only where a fault failed its read of a table.
	check := func(v []byte, err error) {
		switch {
		case err == nil:
			tt.observe(v, session, false)
		case !errors.Is(err, ErrNotFound) && !errors.Is(err, errorfs.ErrInjected):
			fail("a read: %v", err)
		}
	}
	var buf []byte
	for !stop.Load() {
		switch r := rng.IntN(100); {
		case r < 30:
			check(db.Get(key()))
		case r < 45:
			var err error
			buf, err = db.AppendValue(buf[:0], key())
			check(buf, err)
		case r < 49:
			if _, err := db.Has(key()); err != nil && !errors.Is(err, errorfs.ErrInjected) {
				fail("Has: %v", err)
			}
		case r < 50:
			// Metrics beside the writes, flushes, compactions and faults
			// that add to them.
			m := db.Metrics()
			for _, l := range []LatencyStats{m.Commit, m.Get, m.LogSync, m.Flush, m.Compaction} {
				if l.P50 > l.P99 || l.P99 > l.Max || l.Count > 0 && l.Buckets[len(l.Buckets)-1].Count != l.Count {
					fail("latencies: %+v", l)
				}
			}
			if m.String() == "" {
				fail("Metrics prints nothing")
			}
		case r < 60 && len(helds) < 4:
			w := rng.IntN(tortureWriters)
			snap := db.NewSnapshot()
			it, err := snap.NewIterator([]byte(tortureKey(w, 0)), []byte(tortureKey(w, tortureKeys)))
			if err != nil {
				fail("snapshot iterator: %v", err)
				snap.Release()
				continue
			}
			h := &held{snap: snap, it: it, fwd: rng.IntN(2) == 0}
			if h.fwd {
				it.First()
			} else {
				it.Last()
			}
			helds = append(helds, h)
		case r < 85 && len(helds) > 0:
			// Move a held iterator on: its value is the snapshot's.
			h := helds[rng.IntN(len(helds))]
			if !h.it.Valid() {
				continue
			}
			k, v := h.it.Key(), h.it.Value()
			if c := bytes.Compare(k, h.last); h.last != nil && (h.fwd && c <= 0 || !h.fwd && c >= 0) {
				fail("a held iterator went from %s to %s (forward: %v)", h.last, k, h.fwd)
			}
			h.last = bytes.Clone(k)
			if sv, err := h.snap.Get(k); err == nil && !bytes.Equal(sv, v) || err != nil && !errors.Is(err, errorfs.ErrInjected) {
				fail("a held iterator read %q at %s, its snapshot %q (%v)", v, k, sv, err)
			}
			tt.observe(v, session, false)
			if h.fwd {
				h.it.Next()
			} else {
				h.it.Prev()
			}
			if err := h.it.Err(); err != nil && !errors.Is(err, errorfs.ErrInjected) {
				fail("a held iterator: %v", err)
			}
		case r < 90 && len(helds) > 0:
			i := rng.IntN(len(helds))
			helds[i].it.Close()
			helds[i].snap.Release()
			helds = slices.Delete(helds, i, i+1)
		default:
			tx, err := db.NewTxn(false)
			if err != nil {
				fail("NewTxn: %v", err)
				continue
			}
			k := key()
			v, gerr := tx.Get(k)
			check(v, gerr)
			it, err := tx.NewIterator(k, nil)
			if err != nil {
				fail("a transaction's iterator: %v", err)
			} else {
				found := it.First() && bytes.Equal(it.Key(), k)
				if err := it.Err(); err != nil {
					if !errors.Is(err, errorfs.ErrInjected) {
						fail("a transaction's iterator: %v", err)
					}
				} else if found != (gerr == nil) && !errors.Is(gerr, errorfs.ErrInjected) {
					fail("a transaction read %s as %v, its iterator as %s", k, gerr, it.Key())
				}
				it.Close()
			}
			tx.Discard()
		}
	}
	for _, h := range helds {
		h.it.Close()
		h.snap.Release()
	}
}

// follow opens a follower of the database and, until stopped, catches up
// and reads through snapshots that it releases while its readers read
// them.
func (tt *torture) follow(rng *rand.Rand, stop *atomic.Bool) {
	opts := followOptions(tt.mem)
	opts.Merger = AppendMerger
	f, err := Open("/db", opts)
	for range 10 {
		if !errors.Is(err, ErrOutpaced) {
			break
		}
		f, err = Open("/db", opts)
	}
	if err != nil {
		tt.t.Errorf("seed %d: open a follower: %v", tt.seed, err)
		return
	}
	// The follower closes under a CatchUp of its own, which Close waits
	// for: it ends with nil, ErrOutpaced or ErrClosed.
	defer func() {
		caught := make(chan error, 1)
		go func() { caught <- f.CatchUp() }()
		f.Close()
		if err := <-caught; err != nil && !errors.Is(err, ErrClosed) && !errors.Is(err, ErrOutpaced) {
			tt.t.Errorf("seed %d: a CatchUp beside Close: %v", tt.seed, err)
		}
	}()
	for !stop.Load() {
		if err := f.CatchUp(); err != nil && !errors.Is(err, ErrOutpaced) {
			tt.t.Errorf("seed %d: CatchUp: %v", tt.seed, err)
			return
		}
		tt.counts.followerViews.Add(1)
		snap := f.NewSnapshot()
		var wg sync.WaitGroup
		for r := range 2 {
			rng := rand.New(rand.NewPCG(rng.Uint64(), uint64(r)))
			wg.Go(func() {
				for i := 0; ; i++ {
					k := []byte(tortureKey(rng.IntN(tortureWriters), rng.IntN(tortureKeys)))
					var v []byte
					var err error
					if i%4 == 3 {
						var it *Iterator
						if it, err = snap.NewIterator(k, nil); err == nil {
							if it.Last() {
								v = bytes.Clone(it.Value())
							}
							err = it.Err()
							it.Close()
						}
					} else {
						v, err = snap.Get(k)
					}
					switch {
					case errors.Is(err, ErrClosed):
						return
					case err == nil && v != nil:
						tt.observe(v, -1, true)
					case err != nil && !errors.Is(err, ErrNotFound):
						tt.t.Errorf("seed %d: a follower's snapshot read: %v", tt.seed, err)
						return
					}
				}
			})
		}
		time.Sleep(time.Duration(rng.IntN(500)) * time.Microsecond)
		// Catch up under the readers: the snapshot's view is then only its
		// own and theirs, and its Release races their reads.
		if err := f.CatchUp(); err != nil && !errors.Is(err, ErrOutpaced) {
			tt.t.Errorf("seed %d: CatchUp: %v", tt.seed, err)
		}
		snap.Release()
		wg.Wait()
	}
}

// tortureFaults injects the round's fault, and slows fsyncs now and then.
type tortureFaults struct {
	mu   sync.Mutex
	rng  *rand.Rand
	spec *faultSpec // nil: none
	hits atomic.Int64
}

// faultSpec is one fault: the operations and files it fails, with what,
// and for how long.
type faultSpec struct {
	ops     errorfs.Op
	files   string // a suffix or part of the path: .log, .sst, MANIFEST, CURRENT
	errno   syscall.Errno
	lasting bool
	left    int // a transient fault's failures left
}

func (s faultSpec) String() string {
	d := fmt.Sprintf("%d operations", s.left)
	if s.lasting {
		d = "lasting"
	}
	return fmt.Sprintf("%v on %v of %s (%s)", s.errno, s.ops, s.files, d)
}

// arm draws a fault and injects it from now on.
func (f *tortureFaults) arm(rng *rand.Rand) faultSpec {
	// Writes and syncs fail a database; the other operations, less often.
	ops := []errorfs.Op{errorfs.OpWrite, errorfs.OpSync, errorfs.OpWrite | errorfs.OpSync,
		errorfs.OpCreate, errorfs.OpRename, errorfs.OpRemove, errorfs.OpReuse, errorfs.OpLink,
		errorfs.OpRead | errorfs.OpReadAt, errorfs.OpSyncDir}
	s := &faultSpec{
		ops:     ops[min(rng.IntN(14), len(ops)-1)],
		files:   []string{".log", ".log", ".sst", "MANIFEST", "MANIFEST", "CURRENT"}[rng.IntN(6)],
		errno:   []syscall.Errno{syscall.EIO, syscall.ENOSPC}[rng.IntN(2)],
		lasting: rng.IntN(2) == 0,
		left:    1 + rng.IntN(3),
	}
	if s.ops == errorfs.OpSyncDir {
		s.files = "" // a directory's
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.spec = s
	return *s
}

// clear clears the fault.
func (f *tortureFaults) clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.spec = nil
}

// MaybeError implements errorfs.Injector.
func (f *tortureFaults) MaybeError(op errorfs.Op, path string) error {
	f.mu.Lock()
	s := f.spec
	var slow time.Duration
	if op == errorfs.OpSync && f.rng.IntN(20) == 0 {
		slow = time.Duration(1+f.rng.IntN(3)) * time.Millisecond
	}
	var err error
	if s != nil && s.ops&op != 0 && strings.Contains(path, s.files) && (s.lasting || s.left > 0) {
		s.left--
		f.hits.Add(1)
		err = &errorfs.InjectedError{Op: op, Path: path, Err: s.errno}
	}
	f.mu.Unlock()
	time.Sleep(slow)
	return err
}

// diffModels describes how got differs from want.
func diffModels(want, got model) string {
	var d []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if g, ok := got[k]; !ok {
			d = append(d, fmt.Sprintf("%s missing (want %.40q)", k, want[k]))
		} else if g != want[k] {
			d = append(d, fmt.Sprintf("%s = %.40q, want %.40q", k, g, want[k]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			d = append(d, fmt.Sprintf("%s = %.40q, not written", k, got[k]))
		}
	}
	if len(d) > 8 {
		d = append(d[:8], fmt.Sprintf("and %d more", len(d)-8))
	}
	return strings.Join(d, "; ")
}
