package simpledb

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/stratadb/strata/internal/filenames"
	"github.com/stratadb/strata/internal/testseed"
	"github.com/stratadb/strata/sstables"
	"github.com/stratadb/strata/vfs"
	"github.com/stretchr/testify/require"
)

func u64(n uint64) []byte { return binary.LittleEndian.AppendUint64(nil, n) }

// counterValue reads key as a counter: its value, or -1 if absent.
func counterValue(t *testing.T, r pointReader, key string) int64 {
	t.Helper()
	v, err := r.Get([]byte(key))
	if err == ErrNotFound {
		return -1
	}
	require.NoError(t, err)
	require.Len(t, v, 8)
	return int64(binary.LittleEndian.Uint64(v))
}

// TestMergeCounter checks counters through every place a key's versions
// can be: memstores, L0, deeper levels, under snapshots, deletions, range
// deletions and Puts, read by Get, iterators both ways, snapshots, and
// after a reopen.
func TestMergeCounter(t *testing.T) {
	type step struct {
		op  string // put, merge, delete, rangedel, flush, compact, snap
		key string
		n   uint64
	}
	for _, tt := range []struct {
		name  string
		steps []step
		want  map[string]int64 // -1: absent
		snap  map[string]int64 // as the snapshot, taken at "snap", reads
	}{
		{"merges alone count from zero",
			[]step{{"merge", "a", 1}, {"merge", "a", 2}, {"flush", "", 0}, {"merge", "a", 3}},
			map[string]int64{"a": 6}, nil},
		{"onto a value in a deeper level",
			[]step{{"put", "a", 10}, {"flush", "", 0}, {"compact", "", 0}, {"merge", "a", 1}, {"flush", "", 0}, {"merge", "a", 1}},
			map[string]int64{"a": 12}, nil},
		{"a deletion resets",
			[]step{{"put", "a", 10}, {"merge", "a", 5}, {"flush", "", 0}, {"delete", "a", 0}, {"merge", "a", 2}, {"compact", "", 0}},
			map[string]int64{"a": 2}, nil},
		{"a range deletion resets",
			[]step{{"merge", "a", 5}, {"merge", "b", 5}, {"flush", "", 0}, {"rangedel", "a", 0}, {"merge", "a", 2}, {"flush", "", 0}, {"compact", "", 0}},
			map[string]int64{"a": 2, "b": 5}, nil},
		{"a put hides older operands",
			[]step{{"merge", "a", 5}, {"flush", "", 0}, {"put", "a", 1}, {"merge", "a", 1}, {"compact", "", 0}},
			map[string]int64{"a": 2}, nil},
		{"a snapshot between operands, compacted",
			[]step{{"merge", "a", 1}, {"merge", "a", 2}, {"snap", "", 0}, {"merge", "a", 4}, {"flush", "", 0}, {"compact", "", 0}, {"merge", "a", 8}, {"compact", "", 0}},
			map[string]int64{"a": 15}, map[string]int64{"a": 3}},
		{"a snapshot before a deletion",
			[]step{{"put", "a", 7}, {"merge", "a", 1}, {"snap", "", 0}, {"delete", "a", 0}, {"flush", "", 0}, {"compact", "", 0}},
			map[string]int64{"a": -1}, map[string]int64{"a": 8}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opts := testOptions(vfs.NewMem())
			opts.Merger = Uint64AddMerger
			db, err := Open("/db", opts)
			require.NoError(t, err)
			defer func() { db.Close() }()
			var snap *Snapshot
			for _, s := range tt.steps {
				switch s.op {
				case "put":
					require.NoError(t, db.Put([]byte(s.key), u64(s.n), DefaultSync))
				case "merge":
					require.NoError(t, db.Merge([]byte(s.key), u64(s.n), DefaultSync))
				case "delete":
					require.NoError(t, db.Delete([]byte(s.key), DefaultSync))
				case "rangedel":
					require.NoError(t, db.DeleteRange([]byte(s.key), []byte(s.key+"\x00"), DefaultSync))
				case "flush":
					require.NoError(t, db.Flush())
				case "compact":
					require.NoError(t, db.Compact())
				case "snap":
					snap = db.NewSnapshot()
				}
			}
			check := func(r pointReader, newIter func(lo, hi []byte) (*Iterator, error), want map[string]int64, what string) {
				live := map[string]string{}
				for k, n := range want {
					require.Equal(t, n, counterValue(t, r, k), "%s: %s", what, k)
					if n >= 0 {
						live[k] = string(u64(uint64(n)))
					}
				}
				checkScan(t, db.opts.Comparator.Compare, newIter, live, nil, nil, what)
			}
			check(db, db.NewIterator, tt.want, "db")
			if snap != nil {
				check(snap, snap.NewIterator, tt.snap, "snapshot")
				require.NoError(t, snap.Release())
			}
			require.NoError(t, db.Close())
			db, err = Open("/db", opts)
			require.NoError(t, err)
			check(db, db.NewIterator, tt.want, "reopened")
		})
	}
}

// TestMergeRefused checks the errors of merges a database cannot take.
func TestMergeRefused(t *testing.T) {
	fsys := vfs.NewMem()
	db, err := Open("/plain", testOptions(fsys))
	require.NoError(t, err)
	defer db.Close()
	require.ErrorIs(t, db.Merge([]byte("k"), u64(1), DefaultSync), ErrNoMerger)
	b := db.NewBatch()
	require.NoError(t, b.Merge([]byte("k"), u64(1)), "a plain batch does not know its database")
	require.ErrorIs(t, db.Write(b, DefaultSync), ErrNoMerger)
	require.ErrorIs(t, db.NewIndexedBatch().Merge([]byte("k"), u64(1)), ErrNoMerger)
	tx, err := db.NewTxn(true)
	require.NoError(t, err)
	require.ErrorIs(t, tx.Merge([]byte("k"), u64(1)), ErrNoMerger)
	tx.Discard()
	view, err := db.NewTxn(false)
	require.NoError(t, err)
	require.ErrorIs(t, view.Merge([]byte("k"), u64(1)), ErrTxnReadOnly)
	view.Discard()
	has, err := db.Has([]byte("k"))
	require.NoError(t, err)
	require.False(t, has, "nothing was written")

	opts := testOptions(fsys)
	opts.Merger = Uint64AddMerger
	counters, err := Open("/counters", opts)
	require.NoError(t, err)
	defer counters.Close()
	require.ErrorIs(t, counters.Merge(nil, u64(1), DefaultSync), ErrEmptyKey)
	require.ErrorIs(t, counters.Merge([]byte("k"), []byte("abc"), DefaultSync), ErrMergeFailed, "CheckOperand")
	b = counters.NewBatch()
	require.NoError(t, b.Merge([]byte("k"), []byte("abc")))
	require.ErrorIs(t, counters.Write(b, DefaultSync), ErrMergeFailed, "Write checks a plain batch's operands")
	require.ErrorIs(t, counters.NewIndexedBatch().Merge([]byte("k"), []byte("abc")), ErrMergeFailed)
	require.ErrorIs(t, counters.Merge([]byte("k"), u64(1), WriteOptions(0x80)), ErrInvalidOption)

	for _, m := range []*Merger{{Name: "x"}, {Merge: AppendMerger.Merge}} {
		o := testOptions(fsys)
		o.Merger = m
		_, err := Open("/bad", o)
		require.ErrorIs(t, err, ErrInvalidOption)
	}
}

// TestMergerMismatch checks that a database written with a merger opens
// only with it, and that a refused Open leaves the directory as it was.
func TestMergerMismatch(t *testing.T) {
	fsys := vfs.NewMem()
	opts := testOptions(fsys)
	opts.Merger = AppendMerger
	db, err := Open("/db", opts)
	require.NoError(t, err)
	require.NoError(t, db.Merge([]byte("k"), []byte("a"), DefaultSync))
	require.NoError(t, db.Close())
	before := readDirFiles(t, fsys, "/db")
	for _, tt := range []struct {
		name   string
		merger *Merger
		mode   func(o *Options)
	}{
		{"none", nil, func(*Options) {}},
		{"another", Uint64AddMerger, func(*Options) {}},
		{"none, read-only", nil, func(o *Options) { o.ReadOnly = true }},
		{"none, following", nil, func(o *Options) { o.Follow = true }},
	} {
		o := testOptions(fsys)
		o.Merger = tt.merger
		tt.mode(o)
		_, err := Open("/db", o)
		require.ErrorIs(t, err, ErrMergerMismatch, tt.name)
		require.Equal(t, before, readDirFiles(t, fsys, "/db"), tt.name)
	}
	// A database without one takes one, and keeps it from then on.
	plain := testOptions(fsys)
	db, err = Open("/plain", plain)
	require.NoError(t, err)
	require.NoError(t, db.Put([]byte("k"), []byte("a"), DefaultSync))
	require.NoError(t, db.Close())
	db, err = Open("/plain", opts)
	require.NoError(t, err)
	require.NoError(t, db.Merge([]byte("k"), []byte("b"), DefaultSync))
	require.NoError(t, db.Close())
	_, err = Open("/plain", plain)
	require.ErrorIs(t, err, ErrMergerMismatch)
	db, err = Open("/plain", opts)
	require.NoError(t, err)
	defer db.Close()
	v, err := db.Get([]byte("k"))
	require.NoError(t, err)
	require.Equal(t, "ab", string(v))
}

// TestMergeFailure checks a value the merger cannot fold onto: the reads
// that need the fold fail, naming the key, while flushes and compactions
// go on and keep every version, and a Put mends the key.
func TestMergeFailure(t *testing.T) {
	opts := testOptions(vfs.NewMem())
	opts.Merger = Uint64AddMerger
	db, err := Open("/db", opts)
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.Put([]byte("bad"), []byte("abc"), DefaultSync))
	require.NoError(t, db.Merge([]byte("bad"), u64(1), DefaultSync))
	require.NoError(t, db.Merge([]byte("good"), u64(1), DefaultSync))
	check := func(what string) {
		_, err := db.Get([]byte("bad"))
		require.ErrorIs(t, err, ErrMergeFailed, what)
		require.ErrorContains(t, err, `"bad"`, what)
		it, err := db.NewIterator(nil, nil)
		require.NoError(t, err)
		require.False(t, it.First(), what)
		require.ErrorIs(t, it.Err(), ErrMergeFailed, what)
		require.NoError(t, it.Close())
		require.Equal(t, int64(1), counterValue(t, db, "good"), what)
	}
	check("in the memstore")
	require.NoError(t, db.Flush())
	check("flushed")
	require.NoError(t, db.Compact())
	check("compacted")
	require.Zero(t, db.Stats().BackgroundErrors)
	require.NoError(t, db.Put([]byte("bad"), u64(5), DefaultSync))
	require.NoError(t, db.Merge([]byte("bad"), u64(1), DefaultSync))
	require.Equal(t, int64(6), counterValue(t, db, "bad"))
}

// TestMergeInBatchesAndTxns checks that an indexed batch and a transaction
// read their own merges folded onto the database, and that a merge is a
// write other transactions' reads conflict with.
func TestMergeInBatchesAndTxns(t *testing.T) {
	opts := testOptions(vfs.NewMem())
	opts.Merger = Uint64AddMerger
	db, err := Open("/db", opts)
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.Put([]byte("a"), u64(10), DefaultSync))
	require.NoError(t, db.Flush())

	b := db.NewIndexedBatch()
	require.NoError(t, b.Merge([]byte("a"), u64(1)))
	require.NoError(t, b.Merge([]byte("a"), u64(2)))
	require.NoError(t, b.Merge([]byte("new"), u64(7)))
	require.Equal(t, int64(13), counterValue(t, b, "a"))
	require.Equal(t, int64(7), counterValue(t, b, "new"))
	checkScan(t, db.opts.Comparator.Compare, b.NewIterator, map[string]string{"a": string(u64(13)), "new": string(u64(7))}, nil, nil, "indexed batch")
	require.Equal(t, int64(10), counterValue(t, db, "a"), "not committed yet")
	require.NoError(t, db.Write(b, DefaultSync))
	require.Equal(t, int64(13), counterValue(t, db, "a"))

	// A transaction reads its merge folded onto its snapshot: a read that a
	// concurrent merge conflicts with.
	tx, err := db.NewTxn(true)
	require.NoError(t, err)
	require.NoError(t, tx.Merge([]byte("a"), u64(100)))
	require.NoError(t, db.Merge([]byte("a"), u64(1000), DefaultSync))
	require.Equal(t, int64(113), counterValue(t, tx, "a"), "the snapshot's value, and its own merge")
	require.ErrorIs(t, tx.Commit(DefaultSync), ErrConflict)
	require.Equal(t, int64(1013), counterValue(t, db, "a"))

	// Merges that read nothing commit beside each other.
	tx1, err := db.NewTxn(true)
	require.NoError(t, err)
	tx2, err := db.NewTxn(true)
	require.NoError(t, err)
	require.NoError(t, tx1.Merge([]byte("a"), u64(1)))
	require.NoError(t, tx2.Merge([]byte("a"), u64(1)))
	require.NoError(t, tx1.Commit(DefaultSync))
	require.NoError(t, tx2.Commit(DefaultSync))
	require.Equal(t, int64(1015), counterValue(t, db, "a"))
}

// TestMergeCheckpointAndFollower checks that a checkpoint taken with
// operands in the memstore, over a range deletion, and a follower, read
// the folds the writer reads.
func TestMergeCheckpointAndFollower(t *testing.T) {
	dir := t.TempDir()
	opts := testOptions(vfs.Default)
	opts.Merger = AppendMerger
	db, err := Open(dir, opts)
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.Put([]byte("a"), []byte("old"), DefaultSync))
	require.NoError(t, db.Merge([]byte("b"), []byte("1"), DefaultSync))
	require.NoError(t, db.Flush())
	require.NoError(t, db.Merge([]byte("a"), []byte("+x"), DefaultSync))
	require.NoError(t, db.DeleteRange([]byte("a"), []byte("b"), DefaultSync))
	require.NoError(t, db.Merge([]byte("a"), []byte("y"), DefaultSync))
	require.NoError(t, db.Merge([]byte("b"), []byte("2"), DefaultSync))
	want := map[string]string{"a": "y", "b": "12"}
	checkScan(t, db.opts.Comparator.Compare, db.NewIterator, want, nil, nil, "db")

	ckpt := filepath.Join(t.TempDir(), "ckpt")
	require.NoError(t, db.Checkpoint(ckpt))
	cdb, err := Open(ckpt, opts)
	require.NoError(t, err)
	checkScan(t, db.opts.Comparator.Compare, cdb.NewIterator, want, nil, nil, "checkpoint")
	require.NoError(t, cdb.Close())
	_, err = Open(ckpt, testOptions(vfs.Default))
	require.ErrorIs(t, err, ErrMergerMismatch, "the checkpoint records the merger")

	fo := *opts
	fo.Follow = true
	follower, err := Open(dir, &fo)
	require.NoError(t, err)
	defer follower.Close()
	checkScan(t, db.opts.Comparator.Compare, follower.NewIterator, want, nil, nil, "follower")
	require.NoError(t, db.Merge([]byte("b"), []byte("3"), DefaultSync))
	require.NoError(t, follower.CatchUp())
	v, err := follower.Get([]byte("b"))
	require.NoError(t, err)
	require.Equal(t, "123", string(v))
}

// TestMergeModelWithSnapshots runs random counter merges, puts, deletions,
// flushes and compactions under many snapshots, and checks every
// snapshot's view after each compaction: the stripes compaction folds
// within must keep what each snapshot sees.
func TestMergeModelWithSnapshots(t *testing.T) {
	seed := testseed.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 7))
	opts := testOptions(vfs.NewMem())
	opts.Merger = Uint64AddMerger
	db, err := Open("/db", opts)
	require.NoError(t, err)
	defer db.Close()
	type snap struct {
		s     *Snapshot
		state map[string]string
	}
	m := map[string]uint64{}
	state := func() map[string]string {
		out := map[string]string{}
		for k, n := range m {
			out[k] = string(u64(n))
		}
		return out
	}
	var snaps []snap
	steps := 3000
	if testseed.Long() {
		steps = 30000
	}
	for step := range steps {
		msg := fmt.Sprintf("seed %d step %d", seed, step)
		k := fmt.Sprintf("k%02d", rng.IntN(40))
		switch op := rng.IntN(100); {
		case op < 60:
			n := rng.Uint64N(100)
			require.NoError(t, db.Merge([]byte(k), u64(n), NoSync), msg)
			m[k] += n
		case op < 70:
			n := rng.Uint64N(100)
			require.NoError(t, db.Put([]byte(k), u64(n), NoSync), msg)
			m[k] = n
		case op < 75:
			require.NoError(t, db.Delete([]byte(k), NoSync), msg)
			delete(m, k)
		case op < 78:
			hi := fmt.Sprintf("k%02d", rng.IntN(40))
			lo, hi := min(k, hi), max(k, hi)
			require.NoError(t, db.DeleteRange([]byte(lo), []byte(hi), NoSync), msg)
			for key := range maps.Keys(m) {
				if lo <= key && key < hi {
					delete(m, key)
				}
			}
		case op < 83 && len(snaps) < 16: // at most 16, so that checking them all stays cheap
			snaps = append(snaps, snap{db.NewSnapshot(), state()})
		case op < 86 && len(snaps) > 0:
			i := rng.IntN(len(snaps))
			require.NoError(t, snaps[i].s.Release(), msg)
			snaps = slices.Delete(snaps, i, i+1)
		case op < 92:
			require.NoError(t, db.Flush(), msg)
		default:
			require.NoError(t, db.Compact(), msg)
			checkScan(t, db.opts.Comparator.Compare, db.NewIterator, state(), nil, nil, msg)
			for i, s := range snaps {
				checkScan(t, db.opts.Comparator.Compare, s.s.NewIterator, s.state, nil, nil, fmt.Sprintf("%s snapshot %d", msg, i))
			}
		}
	}
	checkScan(t, db.opts.Comparator.Compare, db.NewIterator, state(), nil, nil, "final")
	for k := range m {
		require.Equal(t, int64(m[k]), counterValue(t, db, k))
	}
}

// TestCompactionFoldsOperands checks that compaction writes a key's
// operands as one entry per snapshot stripe: a value at the bottom, where
// nothing older can lie.
func TestCompactionFoldsOperands(t *testing.T) {
	fsys := vfs.NewMem()
	opts := testOptions(fsys)
	opts.Merger = Uint64AddMerger
	db, err := Open("/db", opts)
	require.NoError(t, err)
	defer db.Close()
	var snap *Snapshot
	for i := range 100 {
		require.NoError(t, db.Merge([]byte("a"), u64(1), NoSync))
		if i == 49 {
			snap = db.NewSnapshot()
		}
		if i%10 == 9 {
			require.NoError(t, db.Flush())
		}
	}
	entries := func() []string {
		require.NoError(t, db.Compact())
		var out []string
		for _, tables := range db.mu.versions.current().levels {
			for _, tb := range tables {
				r, err := sstables.Open(filenames.TablePath("/db", tb.Num), &sstables.ReaderOptions{FS: fsys, NoMmap: true})
				require.NoError(t, err)
				it := r.NewIterator(nil)
				for ok := it.First(); ok; ok = it.Next() {
					out = append(out, fmt.Sprintf("%s:%v:%d", it.Key(), it.Kind(), binary.LittleEndian.Uint64(it.Value())))
				}
				require.NoError(t, it.Close())
				require.NoError(t, r.Close())
			}
		}
		return out
	}
	require.Equal(t, []string{"a:merge:50", "a:set:50"}, entries(), "one entry per stripe; the lowest a value")
	require.Equal(t, int64(50), counterValue(t, snap, "a"))
	require.NoError(t, snap.Release())
	require.NoError(t, db.Merge([]byte("a"), u64(1), NoSync))
	require.NoError(t, db.Flush())
	require.Equal(t, []string{"a:set:101"}, entries(), "the stripes merged once the snapshot went")
	require.Equal(t, int64(101), counterValue(t, db, "a"))
}

// Merges fold into their counters' entries while snapshots are taken,
// read, flushed under and read again: a snapshot reads the same counts
// before its memstore is flushed and after, though the flush writes only
// each counter's newest fold, and counts taken later are never lower. A
// snapshot taken while a group of folds is being applied is where a fold
// could replace a version the snapshot reads (see mergeFolds).
func TestMergeFoldsBesideSnapshots(t *testing.T) {
	opts := testOptions(vfs.NewMem())
	opts.Merger = Uint64AddMerger
	db, err := Open("/db", opts)
	require.NoError(t, err)
	defer db.Close()
	const writers, keys = 4, 3
	perWriter := 3000
	if testseed.Long() {
		perWriter = 100_000
	}
	key := func(i int) []byte { return fmt.Appendf(nil, "counter%d", i) }
	counts := func(r pointReader) [keys]int64 {
		var c [keys]int64
		for i := range keys {
			c[i] = max(counterValue(t, r, string(key(i))), 0)
		}
		return c
	}
	var done sync.WaitGroup
	for w := range writers {
		done.Go(func() {
			for i := range perWriter {
				if err := db.Merge(key((w+i)%keys), u64(1), NoSync); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	finished := make(chan struct{})
	go func() { done.Wait(); close(finished) }()
	var last [keys]int64
	snapshots := 0
	for running := true; running; snapshots++ {
		select {
		case <-finished:
			running = false
		default:
		}
		s := db.NewSnapshot()
		before := counts(s)
		for i := range keys {
			require.GreaterOrEqual(t, before[i], last[i], "snapshot %d, counter %d: lower than an earlier snapshot's", snapshots, i)
		}
		require.NoError(t, db.Flush())
		if snapshots%4 == 0 {
			require.NoError(t, db.Compact())
		}
		require.Equal(t, before, counts(s), "snapshot %d: its counts changed with a flush", snapshots)
		require.NoError(t, s.Release())
		last = before
	}
	total := int64(0)
	for _, c := range counts(db) {
		total += c
	}
	require.Equal(t, int64(writers*perWriter), total)
	require.Positive(t, db.Stats().MergesFolded, "no merge folded")
	t.Logf("%d snapshots; %d of %d merges folded", snapshots, db.Stats().MergesFolded, writers*perWriter)
}

// EncodeCounter and DecodeCounter are Uint64AddMerger's format: what one
// writes the merger adds, and what a Get of the sum returns the other
// reads; a value of another length is ErrCounterMalformed.
func TestCounterEncoding(t *testing.T) {
	for _, n := range []uint64{0, 1, 255, 256, 1 << 40, math.MaxUint64} {
		got, err := DecodeCounter(EncodeCounter(n))
		require.NoError(t, err)
		require.Equal(t, n, got)
	}
	sum, err := Uint64AddMerger.Merge(nil, EncodeCounter(math.MaxUint64), EncodeCounter(2))
	require.NoError(t, err)
	got, err := DecodeCounter(sum)
	require.NoError(t, err)
	require.Equal(t, uint64(1), got, "added with wraparound")
	for _, v := range [][]byte{nil, {}, []byte("1234567"), []byte("123456789")} {
		_, err := DecodeCounter(v)
		require.ErrorIs(t, err, ErrCounterMalformed, "%q", v)
	}
}
