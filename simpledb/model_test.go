package simpledb

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/itertest"
	"github.com/stratadb/strata/internal/testseed"
	"github.com/stratadb/strata/sstables"
	"github.com/stratadb/strata/vfs"
	"github.com/stratadb/strata/vfs/errorfs"
	"github.com/stretchr/testify/require"
)

// model is the reference: a plain map of what the database must hold.
type model map[string]string

// modelSnapshot pairs a database snapshot with the model's state then.
type modelSnapshot struct {
	snap  *Snapshot
	state model
}

// modelCheckpoint is a checkpoint's directory and the model's state when
// it was taken.
type modelCheckpoint struct {
	dir   string
	state model
}

// heldIterator is an iterator opened earlier and moved now and then while
// writes, flushes and compactions go on; it keeps seeing its moment, which
// a cursor over the keys then models.
type heldIterator struct {
	it    *Iterator
	state model
	keys  []string
	c     *itertest.Cursor
}

// newHeld opens an iterator over [lo, hi) with newIter, and its model, in
// cmp's key order.
func newHeld(t *testing.T, cmp func(a, b []byte) int, newIter func(lo, hi []byte) (*Iterator, error), m model, lo, hi []byte) *heldIterator {
	lo, hi = ordered(cmp, lo, hi)
	it, err := newIter(lo, hi)
	require.NoError(t, err)
	h := &heldIterator{it: it, state: maps.Clone(m), keys: keysIn(cmp, m, lo, hi)}
	h.c = itertest.NewCursorFunc(byteKeys(h.keys), cmp).StartAtEnds()
	return h
}

// walk makes steps random moves on the held iterator and its cursor, and
// checks that they agree.
func (h *heldIterator) walk(t *testing.T, rng *rand.Rand, steps int, key func() []byte, msg string) {
	t.Helper()
	itertest.Walk(t, rng, h.it, h.c, steps, key, func(i int) {
		require.Equal(t, h.state[h.keys[i]], string(h.it.Value()), "%s: value of %s", msg, h.keys[i])
	}, msg)
	require.NoError(t, h.it.Err(), msg)
}

// smallOptions make a database that flushes and compacts after a few
// hundred writes, so that tests exercise every level of the machinery.
func smallOptions() *Options {
	return &Options{
		MemstoreSize:        MinMemstoreSize,
		L0CompactionTrigger: 2,
		BaseLevelSize:       512 << 10,
		LevelSizeRatio:      4,
		TargetTableSize:     128 << 10,
		BlockSize:           1024,
		// Values of 512 bytes and more go to blob files: every test on
		// these options writes, reads, compacts, crashes and damages them.
		BlobThreshold: 512,
	}
}

// testOptions are smallOptions on fsys, logging nothing.
func testOptions(fsys vfs.FS) *Options {
	o := smallOptions()
	o.FS, o.Logger = fsys, quietLogger
	return o
}

// modelOrder is a key order the model test runs the database in, with
// keys for it.
type modelOrder struct {
	name string
	c    *sstables.Comparator
	// key formats key number i.
	key func(i int) []byte
}

var modelOrders = []modelOrder{
	{"bytewise", sstables.Bytewise, func(i int) []byte { return fmt.Appendf(nil, "key-%04d", i) }},
	{"reverse", reverseOrder, func(i int) []byte { return fmt.Appendf(nil, "key-%04d", i) }},
	{"numeric", numericOrder, func(i int) []byte { return strconv.AppendInt(nil, int64(i), 10) }},
}

// reverseOrder sorts keys bytewise from the largest down.
var reverseOrder = &sstables.Comparator{Name: "test.reverse", Compare: func(a, b []byte) int { return bytes.Compare(b, a) }}

// numericOrder sorts decimal numbers without leading zeros by value: a
// shorter number is smaller, numbers of one length compare bytewise. "9" <
// "10", which bytewise order has the other way round.
var numericOrder = &sstables.Comparator{Name: "test.numeric", Compare: func(a, b []byte) int {
	if c := cmp.Compare(len(a), len(b)); c != 0 {
		return c
	}
	return bytes.Compare(a, b)
}}

// TestModel runs random operations against the database and a model, in
// bytewise order and in two others, given by Options.Comparator.
//
// Whether a random run rotates onto a recycled log, reopens a table or
// moves one down unrewritten depends on its seed: some seeds make no
// trivial move in one order. So the three runs together must have done
// each.
func TestModel(t *testing.T) {
	t.Parallel()
	var total modelCounts
	for _, o := range modelOrders {
		t.Run(o.name, func(t *testing.T) { total.add(testModel(t, o)) })
	}
	if t.Failed() {
		return
	}
	require.Positive(t, total.moves, "compaction moved tables")
	require.Positive(t, total.recycled, "rotations reused logs")
	require.Positive(t, total.reopens, "reads reopened tables")
	require.Positive(t, total.resumes, "faults were resumed from")
	require.Positive(t, total.folds, "merges folded at insert")
	for _, event := range []string{"flush begin", "flush end", "compaction begin", "compaction end", "background error", "resumed",
		"table created", "table deleted", "blob file created", "blob file deleted", "log created", "manifest created", "caught up"} {
		require.Positive(t, total.events[event], "%s events", event)
	}
}

// modelCounts counts what a model run exercised, over every session: the
// events by name (see eventPairs).
type modelCounts struct {
	moves, recycled, reopens, resumes, folds int64
	events                                   map[string]int
}

func (c *modelCounts) add(o modelCounts) {
	c.moves, c.recycled, c.reopens, c.resumes = c.moves+o.moves, c.recycled+o.recycled, c.reopens+o.reopens, c.resumes+o.resumes
	c.folds += o.folds
	if c.events == nil {
		c.events = map[string]int{}
	}
	for name, n := range o.events {
		c.events[name] += n
	}
}

func testModel(t *testing.T, order modelOrder) modelCounts {
	// Bytewise order, with blob files, costs twice the others a step.
	steps := 1300
	if testseed.Long() {
		steps = 100000
	}
	if order.c != sstables.Bytewise {
		steps /= 2
	}
	seed := testseed.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 0))
	dir := t.TempDir()
	opts := smallOptions()
	opts.Comparator = order.c
	if order.c != sstables.Bytewise {
		// Blob files in bytewise order alone: the other orders cover the
		// comparator, and make test its time budget.
		opts.BlobThreshold = -1
	} else {
		// A cache of 256 MiB in bytewise order: its blocks keep their
		// hints, entry by entry for these keys, and its tables their
		// block slots. The other orders keep the default budget.
		opts.MemoryBudget = 256 << 20
	}
	// Merges append: the model's value grows by the operand.
	opts.Merger = AppendMerger
	keyCmp := order.c.Compare
	// Small levels and tables spread the data over L1 and L2, so that
	// compactions move tables as well as merge them.
	opts.BaseLevelSize, opts.TargetTableSize = 32<<10, 8<<10
	// The fewest open tables allowed, and fewer still below it: reads
	// reopen tables all the time, iterators and compactions pin more
	// tables than the bound.
	opts.MaxOpenFiles = MinMaxOpenFiles
	// Faults it injects now and then, and resumes from.
	faults := newResumeFaults()
	opts.FS, opts.Logger = errorfs.Wrap(vfs.Default, faults.injector()), quietLogger
	// Every event pairs, checked at each Close.
	pairs := newEventPairs()
	opts.EventListener = pairs.listener()
	const openTables = 4
	db, err := Open(dir, opts)
	require.NoError(t, err)
	setTableCacheCapacity(db, openTables)
	defer func() { db.Close() }()

	m := model{}
	var snaps []modelSnapshot
	var checkpoints []modelCheckpoint
	var held []*heldIterator
	var follower *DB
	closeHeld := func() {
		for _, h := range held {
			require.NoError(t, h.it.Close())
		}
		held = nil
	}
	var moves, recycled, reopens, resumes, folds int64 // trivial moves, recycled logs, reopened tables, resumes and merges folded, over every session
	key := func() []byte { return order.key(rng.IntN(2000)) }
	value := func() []byte {
		if rng.IntN(20) == 0 {
			return []byte{}
		}
		return bytes.Repeat(fmt.Appendf(nil, "v%d.", rng.IntN(1000)), 1+rng.IntN(300))
	}
	for step := range steps {
		msg := fmt.Sprintf("seed %d step %d", seed, step)
		switch op := rng.IntN(100); {
		case op < 5:
			// Half of them a run of merges to one of a few hot keys, whose
			// operands fold into its newest version in the memstore.
			k, runs := key(), 1
			if rng.IntN(2) == 0 {
				k, runs = order.key(rng.IntN(8)), 1+rng.IntN(4)
			}
			for range runs {
				operand := operand(rng)
				wo, ok := randomWriteOptions(rng)
				if !ok {
					require.ErrorIs(t, db.Merge(k, operand, wo), ErrInvalidOption, msg)
					continue
				}
				require.NoError(t, db.Merge(k, operand, wo), msg)
				m.merge(k, operand)
			}
		case op < 40:
			k, v := key(), value()
			wo, ok := randomWriteOptions(rng)
			if !ok {
				require.ErrorIs(t, db.Put(k, v, wo), ErrInvalidOption, msg)
				break
			}
			require.NoError(t, db.Put(k, v, wo), msg)
			m[string(k)] = string(v)
		case op < 47:
			k := key()
			wo, ok := randomWriteOptions(rng)
			if !ok {
				require.ErrorIs(t, db.Delete(k, wo), ErrInvalidOption, msg)
				break
			}
			require.NoError(t, db.Delete(k, wo), msg)
			delete(m, string(k))
		case op < 50:
			lo, hi := randomRange(rng)
			if order.c != sstables.Bytewise {
				require.ErrorIs(t, db.DeleteRange(lo, hi, DefaultSync), ErrRangeDelOrder, msg)
				break
			}
			require.NoError(t, db.DeleteRange(lo, hi, someWriteOptions(rng)), msg)
			m.deleteRange(lo, hi)
		case op < 58:
			// A batch: a plain one, an indexed one or a transaction, the
			// last two read between their writes (Get, scans, an iterator
			// held across later writes) and now and then dropped instead of
			// committed. (Alone, a transaction never conflicts: the
			// concurrent tests check that.)
			var w modelWriter
			var read modelReader
			var commit func() error
			var drop func()
			switch kind := rng.IntN(4); {
			case kind < 2:
				b := db.NewBatch()
				w, commit = b, func() error { return db.Write(b, someWriteOptions(rng)) }
			case kind == 2:
				b := db.NewIndexedBatch()
				w, read, commit, drop = b, b, func() error { return db.Write(b, someWriteOptions(rng)) }, func() {}
			default:
				tx, err := db.NewTxn(true)
				require.NoError(t, err, msg)
				w, read, commit, drop = tx, tx, func() error { return tx.Commit(someWriteOptions(rng)) }, tx.Discard
			}
			staged := maps.Clone(m)
			var held *heldIterator
			for range 1 + rng.IntN(20) {
				k := key()
				if rng.IntN(20) == 0 && order.c == sstables.Bytewise {
					lo, hi := randomRange(rng)
					require.NoError(t, w.DeleteRange(lo, hi))
					staged.deleteRange(lo, hi)
				} else if rng.IntN(3) == 0 {
					require.NoError(t, w.Delete(k))
					delete(staged, string(k))
				} else if rng.IntN(6) == 0 {
					o := operand(rng)
					require.NoError(t, w.Merge(k, o))
					staged.merge(k, o)
				} else {
					v := value()
					if b, ok := w.(*Batch); ok && rng.IntN(2) == 0 {
						require.NoError(t, b.PutFunc(k, len(v), func(dst []byte) []byte { return append(dst, v...) }))
					} else {
						require.NoError(t, w.Put(k, v))
					}
					staged[string(k)] = string(v)
				}
				if read == nil {
					continue
				}
				switch rng.IntN(12) {
				case 0:
					checkScan(t, keyCmp, read.NewIterator, staged, key(), key(), msg+" (batch or transaction)")
				case 1:
					if held == nil {
						held = newHeld(t, keyCmp, read.NewIterator, staged, boundKey(rng, key), boundKey(rng, key))
					}
				case 2, 3:
					checkGet(t, read, staged, key(), msg+" (batch or transaction)")
				}
			}
			if held != nil {
				held.walk(t, rng, 30, key, msg+" (batch or transaction, held)")
				require.NoError(t, held.it.Close())
			}
			if drop != nil && rng.IntN(4) == 0 {
				drop() // the database is unchanged
				break
			}
			require.NoError(t, commit(), msg)
			m = staged
		case op < 73:
			checkGet(t, db, m, key(), msg)
		case op < 77:
			checkScan(t, keyCmp, db.NewIterator, m, key(), key(), msg)
		case op < 79:
			checkPrefixScan(t, order, db.NewPrefixIterator, m, randomPrefix(rng, key()), msg)
		case op < 81:
			// An iterator that walks on later, either way, as the
			// database changes under it.
			if len(held) < 4 {
				held = append(held, newHeld(t, keyCmp, db.NewIterator, m, boundKey(rng, key), boundKey(rng, key)))
			}
		case op < 84:
			for i, h := range held {
				h.walk(t, rng, 1+rng.IntN(5), key, fmt.Sprintf("%s: held iterator %d", msg, i))
			}
			if len(held) > 0 && rng.IntN(4) == 0 {
				require.NoError(t, held[0].it.Close())
				held = held[1:]
			}
		case op < 86:
			snaps = append(snaps, modelSnapshot{db.NewSnapshot(), maps.Clone(m)})
		case op < 89 && len(snaps) > 0:
			i := rng.IntN(len(snaps))
			s := snaps[i]
			checkGet(t, s.snap, s.state, key(), msg+" (snapshot)")
			checkScan(t, keyCmp, s.snap.NewIterator, s.state, key(), key(), msg+" (snapshot)")
			checkPrefixScan(t, order, s.snap.NewPrefixIterator, s.state, randomPrefix(rng, key()), msg+" (snapshot)")
			h := newHeld(t, keyCmp, s.snap.NewIterator, s.state, boundKey(rng, key), boundKey(rng, key))
			h.walk(t, rng, 30, key, msg+" (snapshot walk)")
			require.NoError(t, h.it.Close())
			if rng.IntN(3) == 0 {
				require.NoError(t, s.snap.Release())
				snaps = slices.Delete(snaps, i, i+1)
			}
		case op < 92:
			require.NoError(t, db.Flush(), msg)
		case op < 94:
			require.NoError(t, db.Compact(), msg)
		case op < 96:
			for _, s := range snaps {
				require.NoError(t, s.snap.Release())
			}
			snaps = nil
			closeHeld()
			st := db.Stats()
			moves, recycled, reopens, resumes = moves+st.TrivialMoves, recycled+st.LogsRecycled, reopens+st.TableReopens, resumes+st.Resumes
			folds += st.MergesFolded
			require.NoError(t, db.Close(), msg)
			pairs.closed(t, msg)
			if rng.IntN(2) == 0 {
				// Read-only in between: the same contents, no writes.
				ro := *opts
				ro.ReadOnly = true
				db, err = Open(dir, &ro)
				require.NoError(t, err, msg)
				checkScan(t, keyCmp, db.NewIterator, m, nil, nil, msg+" (read-only)")
				require.ErrorIs(t, db.Put(key(), value(), DefaultSync), ErrReadOnly, msg)
				require.NoError(t, db.Close(), msg)
				report, err := Verify(dir, opts, nil)
				require.NoError(t, err, msg)
				require.Empty(t, report.Damage, msg)
			}
			db, err = Open(dir, opts)
			require.NoError(t, err, msg)
			setTableCacheCapacity(db, openTables)
		case op < 97 && rng.IntN(4) == 0:
			// A fault, and Resume: nothing the model holds is lost.
			require.NoError(t, faults.inject(db, byte(rng.IntN(3))), msg)
		case op < 97:
			// A checkpoint opens to the model as it is now, and stays so
			// while the database moves on.
			ckpt := filepath.Join(t.TempDir(), "ckpt")
			require.NoError(t, db.Checkpoint(ckpt), msg)
			checkpoints = append(checkpoints, modelCheckpoint{ckpt, maps.Clone(m)})
			c := checkpoints[rng.IntN(len(checkpoints))]
			co := *opts
			co.EventListener = nil // its job numbers are its own
			cdb, err := Open(c.dir, &co)
			require.NoError(t, err, msg)
			checkScan(t, keyCmp, cdb.NewIterator, c.state, nil, nil, msg+" (checkpoint)")
			require.NoError(t, cdb.Close(), msg)
		case rng.IntN(2) == 0:
			// A follower, which lives across the writer's sessions, sees
			// the model after a catch-up; Verify of the open database
			// finds it whole.
			if follower == nil {
				fo := *opts
				fo.FS, fo.Follow = vfs.Default, true
				follower, err = Open(dir, &fo)
				require.NoError(t, err, msg)
			} else {
				require.NoError(t, follower.CatchUp(), msg)
			}
			checkScan(t, keyCmp, follower.NewIterator, m, nil, nil, msg+" (follower)")
			checkGet(t, follower, m, key(), msg+" (follower)")
			if rng.IntN(4) == 0 {
				report, err := Verify(dir, opts, nil)
				require.NoError(t, err, msg)
				require.Empty(t, report.Damage, msg)
			}
		default:
			checkScan(t, keyCmp, db.NewIterator, m, nil, nil, msg+" (full scan)")
		}
	}
	checkScan(t, keyCmp, db.NewIterator, m, nil, nil, "final full scan")
	if follower != nil {
		require.NoError(t, follower.Close())
	}
	closeHeld()
	st := db.Stats()
	moves, recycled, reopens, resumes = moves+st.TrivialMoves, recycled+st.LogsRecycled, reopens+st.TableReopens, resumes+st.Resumes
	folds += st.MergesFolded
	require.NoError(t, db.Close())
	pairs.closed(t, "final")
	t.Logf("stats: %d flushes, %d compactions, levels %v, write amplification %.1f (the last session); %d trivial moves, %d logs recycled, %d tables reopened, %d resumes after faults, %d merges folded",
		st.Flushes, st.Compactions, st.Levels, st.WriteAmplification, moves, recycled, reopens, resumes, folds)
	return modelCounts{moves, recycled, reopens, resumes, folds, pairs.counts}
}

// operand returns a merge operand for AppendMerger: short, so that values
// merged into often stay small.
func operand(rng *rand.Rand) []byte {
	if rng.IntN(20) == 0 {
		return []byte{}
	}
	return fmt.Appendf(nil, "+%d", rng.IntN(100))
}

// merge appends operand to k's value, as AppendMerger does.
func (m model) merge(k, operand []byte) {
	m[string(k)] += string(operand)
}

// randomWriteOptions returns the options of a write: mostly DefaultSync,
// Sync or NoSync, and now and then ones that are refused (ok false).
func randomWriteOptions(rng *rand.Rand) (opts WriteOptions, ok bool) {
	switch rng.IntN(40) {
	case 0:
		return Sync | NoSync, false
	case 1:
		return WriteOptions(1 << (2 + rng.IntN(6))), false
	}
	return someWriteOptions(rng), true
}

// someWriteOptions returns DefaultSync, Sync or NoSync.
func someWriteOptions(rng *rand.Rand) WriteOptions {
	return []WriteOptions{DefaultSync, Sync, NoSync}[rng.IntN(3)]
}

// deleteRange deletes the model's keys in [lo, hi) (nil: unbounded; an
// empty slice is a bound, before every key), in bytewise order: the only order range deletions take.
func (m model) deleteRange(lo, hi []byte) {
	for k := range m {
		if (lo == nil || k >= string(lo)) && (hi == nil || k < string(hi)) {
			delete(m, k)
		}
	}
}

// randomRange returns a range to delete among the keys of TestModel: most
// span a few dozen keys, a few are empty (start after end, or an empty
// end) or unbounded on one side.
func randomRange(rng *rand.Rand) (lo, hi []byte) {
	n := rng.IntN(2000)
	lo = fmt.Appendf(nil, "key-%04d", n)
	hi = fmt.Appendf(nil, "key-%04d", n+rng.IntN(40)-2)
	if rng.IntN(5) == 0 {
		hi = append(hi, 'x') // not a key: the range ends between keys
	}
	switch rng.IntN(40) {
	case 0:
		lo = nil
	case 1:
		hi = nil
	case 2:
		lo = []byte{} // before every key: as good as nil
	case 3:
		hi = []byte{} // before every key: an empty range
	}
	return lo, hi
}

// pointReader is what DB and Snapshot offer to read one key.
// modelWriter is what the model test writes a batch through.
type modelWriter interface {
	Put(key, value []byte) error
	Delete(key []byte) error
	DeleteRange(start, end []byte) error
	Merge(key, operand []byte) error
}

// modelReader is what it reads an indexed batch or a transaction through.
type modelReader interface {
	pointReader
	NewIterator(lower, upper []byte) (*Iterator, error)
}

type pointReader interface {
	Get(key []byte) ([]byte, error)
	AppendValue(dst, key []byte) ([]byte, error)
	Has(key []byte) (bool, error)
}

// checkGet reads k from r every way, and checks each answer against m.
func checkGet(t *testing.T, r pointReader, m model, k []byte, msg string) {
	t.Helper()
	want, ok := m[string(k)]
	v, err := r.Get(k)
	has, herr := r.Has(k)
	require.NoError(t, herr, "%s: has %s", msg, k)
	require.Equal(t, ok, has, "%s: has %s", msg, k)
	prefix := []byte("prefix")
	appended, aerr := r.AppendValue(prefix, k)
	if !ok {
		require.ErrorIs(t, err, ErrNotFound, "%s: get %s", msg, k)
		require.ErrorIs(t, aerr, ErrNotFound, "%s: append %s", msg, k)
		require.Equal(t, "prefix", string(appended), "%s: append %s leaves dst", msg, k)
		return
	}
	require.NoError(t, err, "%s: get %s", msg, k)
	require.NotNil(t, v, "%s: get %s: a found value is never nil", msg, k)
	require.Equal(t, want, string(v), "%s: get %s", msg, k)
	require.NoError(t, aerr, "%s: append %s", msg, k)
	require.Equal(t, "prefix"+want, string(appended), "%s: append %s", msg, k)
}

// ordered returns the bounds lo and hi in cmp's order.
func ordered(cmp func(a, b []byte) int, lo, hi []byte) ([]byte, []byte) {
	if lo != nil && hi != nil && cmp(lo, hi) > 0 {
		return hi, lo
	}
	return lo, hi
}

// boundKey returns key(), or now and then nil, an open bound, or an empty
// slice, a bound like any other key.
func boundKey(rng *rand.Rand, key func() []byte) []byte {
	switch rng.IntN(16) {
	case 0, 1, 2, 3:
		return nil
	case 4:
		return []byte{}
	}
	return key()
}

// keysIn returns the model's keys in [lo, hi) (nil: open), in cmp's order.
func keysIn(cmp func(a, b []byte) int, m model, lo, hi []byte) []string {
	var keys []string
	for k := range m {
		if (lo == nil || cmp([]byte(k), lo) >= 0) && (hi == nil || cmp([]byte(k), hi) < 0) {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp([]byte(a), []byte(b)) })
	return keys
}

func byteKeys(keys []string) [][]byte {
	out := make([][]byte, len(keys))
	for i, k := range keys {
		out[i] = []byte(k)
	}
	return out
}

// checkScan scans [lo, hi) forward and backward, and seeks either way,
// checking each against the model, in cmp's key order.
func checkScan(t *testing.T, cmp func(a, b []byte) int, newIter func(lo, hi []byte) (*Iterator, error), m model, lo, hi []byte, msg string) {
	t.Helper()
	lo, hi = ordered(cmp, lo, hi)
	want := keysIn(cmp, m, lo, hi)
	it, err := newIter(lo, hi)
	require.NoError(t, err, msg)
	defer it.Close()
	i := 0
	for k, v := range it.All() {
		require.Less(t, i, len(want), "%s: scan [%s, %s) returned extra key %s", msg, lo, hi, k)
		require.Equal(t, want[i], string(k), "%s: scan [%s, %s) key %d", msg, lo, hi, i)
		require.Equal(t, m[want[i]], string(v), "%s: scan value of %s", msg, k)
		i++
	}
	require.NoError(t, it.Err(), msg)
	require.Equal(t, len(want), i, "%s: scan [%s, %s) returned %d of %d keys", msg, lo, hi, i, len(want))

	// Backward, the same in reverse.
	for k, v := range it.Backward() {
		i--
		require.GreaterOrEqual(t, i, 0, "%s: backward scan [%s, %s) returned extra key %s", msg, lo, hi, k)
		require.Equal(t, want[i], string(k), "%s: backward scan [%s, %s) key %d", msg, lo, hi, i)
		require.Equal(t, m[want[i]], string(v), "%s: backward scan value of %s", msg, k)
	}
	require.NoError(t, it.Err(), msg)
	require.Zero(t, i, "%s: backward scan [%s, %s) missed %d keys", msg, lo, hi, i)

	// SeekGE lands on the first key at or after the target, SeekLT on the
	// last before it.
	if len(want) > 0 {
		mid := len(want) / 2
		target := want[mid]
		require.True(t, it.SeekGE([]byte(target)), msg)
		require.Equal(t, target, string(it.Key()), msg)
		require.Equal(t, mid > 0, it.SeekLT([]byte(target)), msg)
		if mid > 0 {
			require.Equal(t, want[mid-1], string(it.Key()), msg)
		}
	}
}

// randomPrefix returns a prefix of k: mostly its last few bytes cut, so
// that a prefix scan reads tens of keys rather than all, now and then
// the whole of it, or none (every key).
func randomPrefix(rng *rand.Rand, k []byte) []byte {
	if rng.IntN(20) == 0 {
		return k[:0]
	}
	return k[:max(0, len(k)-rng.IntN(4))]
}

// checkPrefixScan walks the keys that start with prefix, forward from a
// new iterator's Next and backward, and checks them against the model; a
// database in another order than bytewise must refuse.
func checkPrefixScan(t *testing.T, order modelOrder, newPrefixIter func(prefix []byte) (*Iterator, error), m model, prefix []byte, msg string) {
	t.Helper()
	it, err := newPrefixIter(prefix)
	if order.c != sstables.Bytewise {
		require.ErrorIs(t, err, ErrPrefixOrder, msg)
		return
	}
	require.NoError(t, err, msg)
	defer it.Close()
	var want []string
	for k := range m {
		if strings.HasPrefix(k, string(prefix)) {
			want = append(want, k)
		}
	}
	slices.Sort(want)
	var got []string
	for it.Next() {
		require.Equal(t, m[string(it.Key())], string(it.Value()), "%s: prefix %q: value of %s", msg, prefix, it.Key())
		got = append(got, string(it.Key()))
	}
	require.NoError(t, it.Err(), msg)
	require.Equal(t, want, got, "%s: prefix %q", msg, prefix)
	got = got[:0]
	for k := range it.Backward() {
		got = append(got, string(k))
	}
	require.NoError(t, it.Err(), msg)
	slices.Reverse(got)
	require.Equal(t, want, got, "%s: prefix %q, backward", msg, prefix)
}
