package simpledb

import (
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/stratadb/strata/internal/filenames"
	"github.com/stratadb/strata/internal/testseed"
	"github.com/stratadb/strata/vfs"
	"github.com/stratadb/strata/vfs/errorfs"
	"github.com/stretchr/testify/require"
)

// quietLogger discards the database's log: crash tests provoke the errors
// it would print.
var quietLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// workloadOp is one step of a crash workload: a batch of writes (a single
// Put, Delete, DeleteRange or Merge is a batch of one) or a transaction, or
// a flush or compaction.
type workloadOp struct {
	puts    map[string]string // key -> value
	deletes []string
	ranges  [][2][]byte       // [start, end) to delete, nil: unbounded
	merges  map[string]string // key -> operand, appended (AppendMerger)
	// txn: the writes commit as a transaction, not a batch.
	txn  bool
	sync bool
	// viaDefault: runOp asks for sync through DefaultSync where the
	// database's default is sync, rather than through Sync or NoSync.
	viaDefault bool
	flush      bool
	compact    bool
}

// apply applies the op's writes to a model state.
func (op workloadOp) apply(m model) {
	for k, v := range op.puts {
		m[k] = v
	}
	for _, k := range op.deletes {
		delete(m, k)
	}
	for _, r := range op.ranges {
		m.deleteRange(r[0], r[1])
	}
	for k, o := range op.merges {
		m.merge([]byte(k), []byte(o))
	}
}

// write adds the op's writes to w, a batch or a transaction: its puts, its
// deletes, its range deletions, then its merges, in the order apply
// applies them. A rejected write makes Write or Commit fail.
func (op workloadOp) write(w modelWriter) {
	for k, v := range op.puts {
		w.Put([]byte(k), []byte(v))
	}
	for _, k := range op.deletes {
		w.Delete([]byte(k))
	}
	for _, r := range op.ranges {
		w.DeleteRange(r[0], r[1])
	}
	for k, o := range op.merges {
		w.Merge([]byte(k), []byte(o))
	}
}

// randomOp draws a workload step; step makes every value unique.
func randomOp(rng *rand.Rand, step int, keys int) workloadOp {
	key := func() string { return fmt.Sprintf("key-%04d", rng.IntN(keys)) }
	op := workloadOp{puts: map[string]string{}, merges: map[string]string{}, sync: rng.IntN(3) > 0, viaDefault: rng.IntN(2) == 0}
	switch r := rng.IntN(100); {
	case r < 3:
		return workloadOp{flush: true}
	case r < 4:
		return workloadOp{compact: true}
	case r < 52:
		op.puts[key()] = fmt.Sprintf("v%d-%s", step, string(make([]byte, rng.IntN(400))))
	case r < 60:
		op.merges[key()] = fmt.Sprintf("+%d", step)
	case r < 70:
		op.deletes = []string{key()}
	case r < 75:
		// A range of a few keys; now and then unbounded on one side.
		n := rng.IntN(keys)
		lo, hi := fmt.Appendf(nil, "key-%04d", n), fmt.Appendf(nil, "key-%04d", n+1+rng.IntN(10))
		switch rng.IntN(30) {
		case 0:
			lo = nil
		case 1:
			hi = nil
		}
		op.ranges = [][2][]byte{{lo, hi}}
	default:
		op.txn = rng.IntN(3) == 0
		for i := range 1 + rng.IntN(8) {
			k := key()
			switch rng.IntN(6) {
			case 0:
				op.deletes = append(op.deletes, k)
				delete(op.puts, k)
				delete(op.merges, k)
			case 1:
				op.merges[k] += fmt.Sprintf("+%d.%d", step, i)
			default:
				op.puts[k] = fmt.Sprintf("v%d.%d", step, i)
			}
		}
	}
	return op
}

// runOp runs a workload step, which must succeed: see doOp.
func runOp(t *testing.T, db *DB, op workloadOp) {
	t.Helper()
	require.NoError(t, doOp(db, op))
}

// doOp runs a workload step and returns its error: a write of one op by
// Put, Delete, DeleteRange or Merge, others by Write or as a transaction,
// synced or not as op.sync says.
func doOp(db *DB, op workloadOp) error {
	opts := syncIf(op.sync)
	if op.viaDefault && op.sync == !db.opts.NoSync {
		opts = DefaultSync
	}
	switch {
	case op.flush:
		return db.Flush()
	case op.compact:
		return db.Compact()
	case op.txn:
		tx, err := db.NewTxn(true)
		if err != nil {
			return err
		}
		op.write(tx)
		return tx.Commit(opts)
	case len(op.puts) == 1 && len(op.deletes) == 0 && len(op.ranges) == 0 && len(op.merges) == 0:
		for k, v := range op.puts {
			return db.Put([]byte(k), []byte(v), opts)
		}
	case len(op.puts) == 0 && len(op.deletes) == 1 && len(op.ranges) == 0 && len(op.merges) == 0:
		return db.Delete([]byte(op.deletes[0]), opts)
	case len(op.puts) == 0 && len(op.deletes) == 0 && len(op.ranges) == 1 && len(op.merges) == 0:
		return db.DeleteRange(op.ranges[0][0], op.ranges[0][1], opts)
	case len(op.puts) == 0 && len(op.deletes) == 0 && len(op.ranges) == 0 && len(op.merges) == 1:
		for k, o := range op.merges {
			return db.Merge([]byte(k), []byte(o), opts)
		}
	}
	b := new(Batch)
	op.write(b)
	return db.Write(b, opts)
}

// readAll returns everything the database holds, and checks that a
// backward scan reads the same in reverse.
func readAll(t *testing.T, db *DB) model {
	t.Helper()
	it, err := db.NewIterator(nil, nil)
	require.NoError(t, err)
	defer it.Close()
	m := model{}
	var keys []string
	for k, v := range it.All() {
		m[string(k)] = string(v)
		keys = append(keys, string(k))
	}
	require.NoError(t, it.Err())
	i := len(keys)
	for k, v := range it.Backward() {
		i--
		require.GreaterOrEqual(t, i, 0, "backward scan: extra key %s", k)
		require.Equal(t, keys[i], string(k), "backward scan")
		require.Equal(t, m[keys[i]], string(v), "backward scan: value of %s", k)
	}
	require.NoError(t, it.Err())
	require.Zero(t, i, "backward scan missed keys")
	return m
}

// matchPrefix returns the k in [from, len(ops)] for which got is the state
// after ops[:k], or -1. states[from] is the state after ops[:from].
func matchPrefix(got model, base model, ops []workloadOp, from int) int {
	state := maps.Clone(base)
	for k := from; ; k++ {
		if maps.Equal(got, state) {
			return k
		}
		if k == len(ops) {
			return -1
		}
		ops[k].apply(state)
	}
}

// TestPowerLoss runs random workloads of synced and unsynced writes (Put,
// Delete, DeleteRange, Merge, Write and transactions, each with Sync, NoSync
// or DefaultSync, in a database synced or not by default), batches,
// deletes, flushes and compactions on an in-memory filesystem,
// crash-clones it at a random point (while flushes and compactions may be
// running), reopens the clone, and checks that it holds exactly the state
// after some prefix of the workload that includes everything acknowledged as
// durable: every synced write present, no batch partly visible, no value
// that was never written, no deleted key resurrected; and that it reads
// the same backward.
func TestPowerLoss(t *testing.T) {
	t.Parallel()
	cycles := 60
	if testseed.Long() {
		cycles = 1000
	}
	seed := testseed.Seed(t)
	var total cycleCounts
	for cycle := range cycles {
		c := powerLossCycle(t, seed+uint64(cycle), crashMode(cycle%3))
		total.moves, total.recycled, total.reopens, total.resumes = total.moves+c.moves, total.recycled+c.recycled, total.reopens+c.reopens, total.resumes+c.resumes
		total.folds += c.folds
	}
	t.Logf("%d power-loss cycles, %d trivial moves, %d logs recycled, %d tables reopened, %d resumes after faults, %d merges folded", cycles, total.moves, total.recycled, total.reopens, total.resumes, total.folds)
	require.Positive(t, total.resumes, "faults were resumed from")
	require.Positive(t, total.moves, "compaction moved tables")
	require.Positive(t, total.recycled, "rotations reused logs")
	require.Positive(t, total.reopens, "reads reopened tables")
	require.Positive(t, total.folds, "merges folded at insert")
}

// crashMode is what a power loss does to the unsynced end of each file.
type crashMode int

const (
	crashLosesUnsynced crashMode = iota // only synced bytes remain
	crashTearsTail                      // a random prefix of the unsynced bytes remains
	crashLosesPages                     // unsynced pages remain or read as zeros, in any order
)

// options returns the crash options of the mode, drawing from rng.
func (m crashMode) options(rng *rand.Rand) vfs.CrashOptions {
	switch m {
	case crashTearsTail:
		return vfs.CrashOptions{Rand: rng}
	case crashLosesPages:
		// Pages smaller than the filesystem's give a small log's tail many
		// of them, lost or kept independently.
		return vfs.CrashOptions{Rand: rng, PageLoss: true, PageSize: []int{64, 512, 4096}[rng.IntN(3)]}
	}
	return vfs.CrashOptions{}
}

// powerLossCycle runs one workload, crash and recovery. It returns the
// trivial moves compaction made and the logs rotations recycled before the
// crash, summed over the sessions.
func powerLossCycle(t *testing.T, seed uint64, mode crashMode) (before cycleCounts) {
	rng := rand.New(rand.NewPCG(seed, 0))
	fsys := vfs.NewMem()
	faults := newResumeFaults() // now and then one, and Resume
	opts := smallOptions()
	opts.FS, opts.Logger = errorfs.Wrap(fsys, faults.injector()), quietLogger
	opts.MemstoreSize = MinMemstoreSize
	// Few open tables, as in TestModel: reads reopen tables before the
	// power loss and after it.
	opts.MaxOpenFiles = MinMaxOpenFiles
	opts.Merger = AppendMerger
	// Either default: each write says Sync or NoSync, or DefaultSync
	// where that is the same.
	opts.NoSync = rng.IntN(2) == 0
	// Half the cycles with a cache of 256 MiB, whose blocks keep their
	// hints and whose tables their block slots.
	if rng.IntN(2) == 0 {
		opts.MemoryBudget = 256 << 20
	}
	const openTables = 4
	db, err := Open("/db", opts)
	require.NoError(t, err)
	setTableCacheCapacity(db, openTables)

	var ops []workloadOp
	durable := 0 // ops[:durable] were acknowledged as durable
	steps := 50 + rng.IntN(450)
	for step := range steps {
		if rng.IntN(100) == 0 {
			// A fault and Resume: what the memstores held is in tables
			// now, durable, and the write the fault failed is lost.
			require.NoError(t, faults.inject(db, byte(rng.IntN(3))), "seed %d", seed)
			durable = len(ops)
			continue
		}
		op := randomOp(rng, step, 300)
		runOp(t, db, op)
		ops = append(ops, op)
		// A synced write makes everything before it durable too: the log
		// is written and synced in order. So do flushes and compactions.
		if op.sync || op.flush || op.compact {
			durable = len(ops)
		}
		if rng.IntN(400) == 0 {
			before.add(db.Stats())
			require.NoError(t, db.Close())
			db, err = Open("/db", opts)
			require.NoError(t, err)
			setTableCacheCapacity(db, openTables)
			durable = len(ops)
		}
	}
	clone := fsys.CrashClone(mode.options(rng))
	before.add(db.Stats())
	db.Close()

	opts.FS = clone
	// What a power loss leaves is no damage: Verify agrees with Open.
	report, err := Verify("/db", opts, nil)
	require.NoError(t, err, "seed %d: verify after the power loss", seed)
	require.Empty(t, report.Damage, "seed %d: verify after the power loss", seed)
	recovered, err := Open("/db", opts)
	require.NoError(t, err, "seed %d: open after the power loss", seed)
	defer recovered.Close()
	setTableCacheCapacity(recovered, openTables)
	got := readAll(t, recovered)
	base := model{}
	for _, op := range ops[:durable] {
		op.apply(base)
	}
	k := matchPrefix(got, base, ops, durable)
	require.GreaterOrEqual(t, k, 0, "seed %d: the recovered state is no prefix of the workload at or after op %d of %d", seed, durable, len(ops))

	// The recovered database goes on working.
	require.NoError(t, recovered.Put([]byte("after"), []byte("crash"), DefaultSync))
	v, err := recovered.Get([]byte("after"))
	require.NoError(t, err)
	require.Equal(t, "crash", string(v))
	return before
}

// cycleCounts sums what a power-loss cycle's sessions did that the test
// requires to happen: trivial moves, recycled logs, reopened tables,
// resumes after faults and merges folded at insert.
type cycleCounts struct{ moves, recycled, reopens, resumes, folds int64 }

func (c *cycleCounts) add(s Stats) {
	c.moves += s.TrivialMoves
	c.recycled += s.LogsRecycled
	c.reopens += s.TableReopens
	c.resumes += s.Resumes
	c.folds += s.MergesFolded
}

// A power loss that keeps the unsynced end of the log with pages lost in
// any order (zeros, then valid records) loses no synced write and keeps a
// prefix of the unsynced ones. Before the log's records carried their
// synced length, Open refused such a log as damaged. In a recycled log a
// lost page holds the file's earlier use's records instead of zeros:
// valid records, of another log, which must neither replay nor vouch.
func TestPowerLossLosesUnsyncedPagesInAnyOrder(t *testing.T) {
	t.Parallel()
	seed := testseed.Seed(t)
	for _, recycled := range []bool{false, true} {
		t.Run(fmt.Sprintf("recycled=%v", recycled), func(t *testing.T) {
			for i := range uint64(100) {
				rng := rand.New(rand.NewPCG(seed+i, 3))
				live := vfs.NewMem()
				opts := testOptions(live)
				opts.DisableAutoCompaction = true
				db, err := Open("/db", opts)
				require.NoError(t, err)
				synced := model{}
				if recycled {
					// Longer than what follows, so that the earlier use's
					// records lie under every page written.
					maps.Copy(synced, putAcked(t, db, 1000, 1300))
					require.NoError(t, db.Flush())
					require.NoError(t, db.Put([]byte("rotate"), []byte("x"), DefaultSync))
					synced["rotate"] = "x"
					require.NoError(t, db.Flush())
					require.EqualValues(t, 1, db.Stats().LogsRecycled)
				}
				maps.Copy(synced, putAcked(t, db, 0, 50))
				unsynced := []string{}
				for j := range 100 {
					k := fmt.Sprintf("unsynced%04d", j)
					require.NoError(t, db.Put([]byte(k), []byte(k), NoSync))
					unsynced = append(unsynced, k)
				}
				clone := live.CrashClone(vfs.CrashOptions{Rand: rng, PageLoss: true, PageSize: 64})
				require.NoError(t, db.Close())

				opts.FS = clone
				db, err = Open("/db", opts)
				require.NoError(t, err, "seed %d", seed+i)
				requireAcked(t, db, synced)
				got := readAll(t, db)
				kept := len(got) - len(synced)
				for j, k := range unsynced {
					_, ok := got[k]
					require.Equal(t, j < kept, ok, "seed %d: the unsynced writes kept are a prefix", seed+i)
				}
				require.NoError(t, db.Close())
			}
		})
	}
}

// Damage to synced records, in a log a crash left open, is not taken for
// a torn tail: the later records say the log was durable past it.
func TestSyncedDamageIsNoTornTail(t *testing.T) {
	live := vfs.NewMem()
	opts := testOptions(live)
	db, err := Open("/db", opts)
	require.NoError(t, err)
	putAcked(t, db, 0, 100)
	crashed := live.CrashClone(vfs.CrashOptions{})
	require.NoError(t, db.Close())

	names, err := crashed.List("/db")
	require.NoError(t, err)
	var log string
	for _, name := range names {
		if kind, _ := filenames.Parse(name); kind == filenames.Log {
			log = "/db/" + name
		}
	}
	f, err := crashed.Open(log)
	require.NoError(t, err)
	data, err := io.ReadAll(f)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	data[len(data)/2] ^= 0x01
	f, err = crashed.Create(log)
	require.NoError(t, err)
	_, err = f.Write(data)
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())

	opts.FS = crashed
	_, err = Open("/db", opts)
	require.ErrorIs(t, err, ErrCorruption)
	require.Contains(t, err.Error(), "durable up to")
}
