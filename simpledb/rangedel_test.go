package simpledb

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stratadb/strata/internal/logformat"
	"github.com/stratadb/strata/internal/manifest"
	"github.com/stratadb/strata/internal/rangedel"
	"github.com/stratadb/strata/internal/testseed"
	"github.com/stratadb/strata/sstables"
	"github.com/stratadb/strata/vfs"
	"github.com/stretchr/testify/require"
)

// rdKey is the i'th key of the range-deletion tests.
func rdKey(i int) []byte { return fmt.Appendf(nil, "key-%05d", i) }

// liveKeys scans the database both ways and returns its keys, checking
// that the two agree.
func liveKeys(t *testing.T, newIter func(lo, hi []byte) (*Iterator, error)) []string {
	t.Helper()
	it, err := newIter(nil, nil)
	require.NoError(t, err)
	defer it.Close()
	var fwd, back []string
	for k := range it.All() {
		fwd = append(fwd, string(k))
	}
	for k := range it.Backward() {
		back = append([]string{string(k)}, back...)
	}
	require.NoError(t, it.Err())
	require.Equal(t, fwd, back, "forward and backward scans differ")
	return fwd
}

func TestDeleteRangeAcrossFlushAndCompaction(t *testing.T) {
	t.Parallel()
	stages := []struct {
		name string
		do   func(t *testing.T, db *DB)
	}{
		{"memstore", func(t *testing.T, db *DB) {}},
		{"flushed", func(t *testing.T, db *DB) { require.NoError(t, db.Flush()) }},
		{"compacted", func(t *testing.T, db *DB) { require.NoError(t, db.Flush()); require.NoError(t, db.Compact()) }},
	}
	for _, written := range stages {
		for _, deleted := range stages {
			t.Run(written.name+"/"+deleted.name, func(t *testing.T) {
				opts := testOptions(vfs.NewMem())
				opts.TargetTableSize = 4 << 10 // many tables, so tombstones span several
				// Fewer open files than tables: the table cache closes and
				// reopens them under the reads.
				opts.MaxOpenFiles = MinMaxOpenFiles
				db, err := Open("/db", opts)
				require.NoError(t, err)
				defer db.Close()
				for i := range 2000 {
					require.NoError(t, db.Put(rdKey(i), fmt.Appendf(nil, "value-%d", i), DefaultSync))
				}
				written.do(t, db)
				require.NoError(t, db.DeleteRange(rdKey(100), rdKey(1900), DefaultSync))
				deleted.do(t, db)
				var want []string
				for i := range 2000 {
					if i < 100 || i >= 1900 {
						want = append(want, string(rdKey(i)))
					}
				}
				require.Equal(t, want, liveKeys(t, db.NewIterator))
				for _, i := range []int{0, 99, 100, 101, 1000, 1899, 1900, 1999} {
					_, err := db.Get(rdKey(i))
					if i >= 100 && i < 1900 {
						require.ErrorIs(t, err, ErrNotFound, "key %d", i)
					} else {
						require.NoError(t, err, "key %d", i)
					}
				}
			})
		}
	}
}

func TestDeleteRangeBadInput(t *testing.T) {
	db, err := Open(t.TempDir(), smallOptions())
	require.NoError(t, err)
	for i := range 10 {
		require.NoError(t, db.Put(rdKey(i), []byte("v"), DefaultSync))
	}
	seq := db.commits.visible()

	// An empty range is a no-op: nothing is written.
	require.NoError(t, db.DeleteRange(rdKey(5), rdKey(5), DefaultSync))
	require.NoError(t, db.DeleteRange(rdKey(6), rdKey(2), DefaultSync))
	require.Equal(t, seq, db.commits.visible())
	b := db.NewBatch()
	require.NoError(t, b.DeleteRange(rdKey(6), rdKey(2)))
	require.Zero(t, b.Len())

	big := make([]byte, MaxKeySize+1)
	require.ErrorIs(t, db.DeleteRange(big, nil, DefaultSync), ErrKeyTooLarge)
	require.ErrorIs(t, db.DeleteRange(nil, big, DefaultSync), ErrKeyTooLarge)
	require.ErrorIs(t, b.DeleteRange(rdKey(1), big), ErrKeyTooLarge)
	require.ErrorIs(t, db.Write(b, DefaultSync), ErrKeyTooLarge, "the batch keeps its first error")
	require.Len(t, liveKeys(t, db.NewIterator), 10)

	// Unbounded on either side, then both.
	require.NoError(t, db.DeleteRange(nil, rdKey(2), DefaultSync))
	require.NoError(t, db.DeleteRange(rdKey(8), nil, DefaultSync))
	require.Equal(t, []string{string(rdKey(2)), string(rdKey(3)), string(rdKey(4)), string(rdKey(5)), string(rdKey(6)), string(rdKey(7))},
		liveKeys(t, db.NewIterator))
	require.NoError(t, db.DeleteRange([]byte{}, nil, DefaultSync), "an empty start is before every key")
	require.Empty(t, liveKeys(t, db.NewIterator))

	require.NoError(t, db.Close())
	require.ErrorIs(t, db.DeleteRange(rdKey(1), rdKey(2), DefaultSync), ErrClosed)
	require.ErrorIs(t, db.DeleteRange(rdKey(2), rdKey(1), DefaultSync), ErrClosed, "even an empty range")
}

// A range deletion takes an empty bound as a bound, the least key, not as
// open: DeleteRange(c, []byte{}) is an empty range, a no-op that writes
// nothing, like any range whose end is not after its start.
func TestDeleteRangeEmptyBound(t *testing.T) {
	for _, call := range []struct {
		name        string
		deleteRange func(db *DB, start, end []byte) (ops int, err error)
	}{
		{"DB.DeleteRange", func(db *DB, start, end []byte) (int, error) {
			return -1, db.DeleteRange(start, end, DefaultSync)
		}},
		{"Batch.DeleteRange", func(db *DB, start, end []byte) (int, error) {
			b := db.NewBatch()
			if err := b.DeleteRange(start, end); err != nil {
				return b.Len(), err
			}
			return b.Len(), db.Write(b, DefaultSync)
		}},
	} {
		for _, tc := range boundCases {
			t.Run(call.name+" "+tc.name, func(t *testing.T) {
				db := boundDB(t, false)
				seq := db.commits.visible()
				ops, err := call.deleteRange(db, tc.start, tc.end)
				require.NoError(t, err)
				var left []string
				for _, k := range boundKeys {
					if !slices.Contains(tc.in, k) {
						left = append(left, k)
					}
				}
				require.Equal(t, left, liveKeys(t, db.NewIterator))
				if len(tc.in) == 0 {
					require.Equal(t, seq, db.commits.visible(), "an empty range writes nothing")
					if ops >= 0 {
						require.Zero(t, ops, "an empty range adds no op")
					}
				}
			})
		}
	}
}

func TestDeleteRangeInBatchOrder(t *testing.T) {
	db, err := Open(t.TempDir(), smallOptions())
	require.NoError(t, err)
	defer db.Close()
	b := db.NewBatch()
	require.NoError(t, b.Put(rdKey(1), []byte("before")))
	require.NoError(t, b.DeleteRange(rdKey(0), rdKey(9)))
	require.NoError(t, b.Put(rdKey(2), []byte("after")))
	require.NoError(t, db.Write(b, DefaultSync))
	_, err = db.Get(rdKey(1))
	require.ErrorIs(t, err, ErrNotFound, "written before the deletion in the batch")
	v, err := db.Get(rdKey(2))
	require.NoError(t, err, "written after it")
	require.Equal(t, "after", string(v))
}

func TestDeleteRangeSurvivesReopen(t *testing.T) {
	for _, flush := range []bool{false, true} {
		t.Run(fmt.Sprintf("flushed=%v", flush), func(t *testing.T) {
			dir := t.TempDir()
			db, err := Open(dir, smallOptions())
			require.NoError(t, err)
			for i := range 100 {
				require.NoError(t, db.Put(rdKey(i), []byte("v"), DefaultSync))
			}
			require.NoError(t, db.Flush())
			require.NoError(t, db.DeleteRange(rdKey(10), rdKey(90), DefaultSync))
			if flush {
				require.NoError(t, db.Flush())
			}
			require.NoError(t, db.Close())
			// Replay of the log (or the L0 table) brings it back.
			db, err = Open(dir, smallOptions())
			require.NoError(t, err)
			defer db.Close()
			require.Len(t, liveKeys(t, db.NewIterator), 20)
			_, err = db.Get(rdKey(50))
			require.ErrorIs(t, err, ErrNotFound)
		})
	}
}

func TestDeleteRangeSnapshots(t *testing.T) {
	opts := smallOptions()
	opts.DisableAutoCompaction = true
	db, err := Open(t.TempDir(), opts)
	require.NoError(t, err)
	defer db.Close()
	for i := range 100 {
		require.NoError(t, db.Put(rdKey(i), []byte("old"), DefaultSync))
	}
	before := db.NewSnapshot()
	require.NoError(t, db.DeleteRange(rdKey(20), rdKey(80), DefaultSync))
	between := db.NewSnapshot()
	require.NoError(t, db.Put(rdKey(50), []byte("new"), DefaultSync))
	check := func(stage string) {
		require.Len(t, liveKeys(t, before.NewIterator), 100, stage)
		require.Len(t, liveKeys(t, between.NewIterator), 40, stage)
		require.Len(t, liveKeys(t, db.NewIterator), 41, stage)
		v, err := before.Get(rdKey(50))
		require.NoError(t, err, stage)
		require.Equal(t, "old", string(v), stage)
		_, err = between.Get(rdKey(50))
		require.ErrorIs(t, err, ErrNotFound, stage)
		v, err = db.Get(rdKey(50))
		require.NoError(t, err, stage)
		require.Equal(t, "new", string(v), stage)
	}
	check("memstore")
	require.NoError(t, db.Flush())
	check("flushed")
	require.NoError(t, db.Compact())
	check("compacted")
	require.NoError(t, before.Release())
	require.NoError(t, between.Release())
	require.NoError(t, db.Compact())
	require.Len(t, liveKeys(t, db.NewIterator), 41)
}

// levelTables returns the tables of a level of the current version.
func levelTables(db *DB, level int) []*table {
	db.mu.Lock()
	defer db.mu.Unlock()
	return slices.Clone(db.mu.versions.current().levels[level])
}

func TestDeleteRangeSplitAcrossCompactionOutputs(t *testing.T) {
	opts := smallOptions()
	opts.DisableAutoCompaction = true
	opts.TargetTableSize = 4 << 10
	db, err := Open(t.TempDir(), opts)
	require.NoError(t, err)
	defer db.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		value := make([]byte, 100)
		for j := range value {
			value[j] = byte(rng.Uint32())
		}
		require.NoError(t, db.Put(rdKey(i), value, DefaultSync))
	}
	// The snapshot keeps the covered keys, and so the tombstone, through
	// the compaction.
	snap := db.NewSnapshot()
	defer snap.Release()
	require.NoError(t, db.DeleteRange(rdKey(150), rdKey(1850), DefaultSync))
	require.NoError(t, db.Compact())

	tables := levelTables(db, 1)
	require.Greater(t, len(tables), 10)
	var frags []pieceBounds
	holding := 0
	for i, tb := range tables {
		if i > 0 {
			require.Positive(t, bytes.Compare(tb.Smallest, tables[i-1].Largest), "L1 tables %d and %d overlap", i-1, i)
		}
		fs := tb.rangeDels
		if len(fs) > 0 {
			holding++
		}
		for _, f := range fs {
			require.GreaterOrEqual(t, bytes.Compare(f.Start, tb.Smallest), 0, "table %d: fragment starts before the table", i)
			_, hi := rangeBounds(rangedel.List{f})
			require.LessOrEqual(t, bytes.Compare(hi, tb.Largest), 0, "table %d: fragment ends after the table", i)
			frags = append(frags, pieceBounds{string(f.Start), string(f.End)})
		}
	}
	require.Greater(t, holding, 5, "the tombstone spans several tables")
	// Together the pieces are the range, whole.
	require.Equal(t, string(rdKey(150)), frags[0].start)
	require.Equal(t, string(rdKey(1850)), frags[len(frags)-1].end)
	for i := 1; i < len(frags); i++ {
		require.Equal(t, frags[i-1].end, frags[i].start, "a gap between pieces %d and %d", i-1, i)
	}
	require.Len(t, liveKeys(t, db.NewIterator), 300)
	require.Len(t, liveKeys(t, snap.NewIterator), 2000)
	for _, i := range []int{149, 150, 151, 1000, 1849, 1850} {
		_, err := db.Get(rdKey(i))
		require.Equal(t, i >= 150 && i < 1850, errors.Is(err, ErrNotFound), "key %d: %v", i, err)
		_, err = snap.Get(rdKey(i))
		require.NoError(t, err, "key %d", i)
	}
}

// pieceBounds are a fragment's bounds, as strings.
type pieceBounds struct{ start, end string }

// rangeDelTables counts the tables that hold range tombstones.
func rangeDelTables(db *DB) int {
	db.mu.Lock()
	defer db.mu.Unlock()
	n := 0
	for _, tables := range db.mu.versions.current().rangeDelTables {
		n += len(tables)
	}
	return n
}

func TestDeleteRangeElision(t *testing.T) {
	setup := func(t *testing.T) *DB {
		opts := smallOptions()
		opts.DisableAutoCompaction = true
		db, err := Open(t.TempDir(), opts)
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		for i := range 500 {
			require.NoError(t, db.Put(rdKey(i), []byte("v"), DefaultSync))
		}
		require.NoError(t, db.Compact()) // into L1, the bottom
		return db
	}
	t.Run("at the bottom, with no snapshot, it goes", func(t *testing.T) {
		db := setup(t)
		require.NoError(t, db.DeleteRange(rdKey(100), rdKey(400), DefaultSync))
		require.NoError(t, db.Flush())
		require.Equal(t, 1, rangeDelTables(db))
		require.NoError(t, db.Compact())
		require.Zero(t, rangeDelTables(db), "elided")
		require.Len(t, liveKeys(t, db.NewIterator), 200)
		var records uint64
		for _, tb := range levelTables(db, 1) {
			r, err := tb.tc.pin(tb)
			require.NoError(t, err)
			records += r.Metadata().Records
			tb.tc.unpin(tb)
		}
		require.Equal(t, uint64(200), records, "the covered keys were dropped with it")
	})
	t.Run("a snapshot below it keeps it", func(t *testing.T) {
		db := setup(t)
		snap := db.NewSnapshot()
		require.NoError(t, db.DeleteRange(rdKey(100), rdKey(400), DefaultSync))
		require.NoError(t, db.Compact())
		require.Positive(t, rangeDelTables(db))
		require.Len(t, liveKeys(t, db.NewIterator), 200)
		require.Len(t, liveKeys(t, snap.NewIterator), 500)
		// Compact leaves the bottom level as it is: the tombstone goes
		// when a compaction next rewrites its table.
		require.NoError(t, snap.Release())
		require.NoError(t, db.Put(rdKey(250), []byte("back"), DefaultSync))
		require.NoError(t, db.Flush())
		db.mu.Lock()
		require.NoError(t, db.runCompaction(newCompaction(db.mu.versions.current(), 0, db.mu.versions.current().levels[0])))
		db.mu.Unlock()
		require.Zero(t, rangeDelTables(db))
		require.Len(t, liveKeys(t, db.NewIterator), 201)
	})
	t.Run("a deeper level that overlaps keeps it", func(t *testing.T) {
		db := setup(t)
		// Move L1 down to L2, then compact the deletion into L1.
		db.mu.Lock()
		require.NoError(t, db.runCompaction(newCompaction(db.mu.versions.current(), 1, db.mu.versions.current().levels[1])))
		db.mu.Unlock()
		require.Empty(t, levelTables(db, 1))
		require.NoError(t, db.DeleteRange(rdKey(100), rdKey(400), DefaultSync))
		require.NoError(t, db.Flush())
		db.mu.Lock()
		require.NoError(t, db.runCompaction(newCompaction(db.mu.versions.current(), 0, db.mu.versions.current().levels[0])))
		db.mu.Unlock()
		l1 := levelTables(db, 1)
		require.Len(t, l1, 1)
		require.NotEmpty(t, l1[0].rangeDels, "kept: L2 holds keys it covers")
		require.Len(t, liveKeys(t, db.NewIterator), 200)
		_, err := db.Get(rdKey(200))
		require.ErrorIs(t, err, ErrNotFound)
		// Down to the bottom, with the keys it covers, it goes.
		require.NoError(t, db.Compact())
		require.Zero(t, rangeDelTables(db))
		require.Len(t, liveKeys(t, db.NewIterator), 200)
	})
}

func TestDeleteRangeIteratorWalks(t *testing.T) {
	seed := testseed.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 0))
	opts := smallOptions()
	opts.DisableAutoCompaction = true
	db, err := Open(t.TempDir(), opts)
	require.NoError(t, err)
	defer db.Close()
	m := model{}
	key := func() []byte { return rdKey(rng.IntN(300)) }
	// Tombstones and keys in L1, L0 and the memstore, overlapping.
	for stage := range 3 {
		for range 200 {
			k := key()
			require.NoError(t, db.Put(k, k, DefaultSync))
			m[string(k)] = string(k)
		}
		for range 5 {
			lo, hi := ordered(bytes.Compare, key(), key())
			require.NoError(t, db.DeleteRange(lo, hi, DefaultSync))
			m.deleteRange(lo, hi)
		}
		switch stage {
		case 0:
			require.NoError(t, db.Compact())
		case 1:
			require.NoError(t, db.Flush())
		}
	}
	for i := range 50 {
		h := newHeld(t, bytes.Compare, db.NewIterator, m, boundKey(rng, key), boundKey(rng, key))
		h.walk(t, rng, 40, key, fmt.Sprintf("seed %d walk %d", seed, i))
		require.NoError(t, h.it.Close())
	}
	checkScan(t, bytes.Compare, db.NewIterator, m, nil, nil, "full scan")
}

// TestNewerLogFormatIsRefused: a manifest naming a log format newer than
// the build's is a malformed edit, so Open refuses the database. This is
// how a build from before range deletions (log format 3) refuses a
// database this build wrote (log format 4).
func TestNewerLogFormatIsRefused(t *testing.T) {
	_, err := manifest.DecodeEdit((&manifest.Edit{LogFormat: logformat.Current + 1}).Encode())
	require.ErrorIs(t, err, manifest.ErrBadEdit)
	require.ErrorContains(t, err, fmt.Sprintf("log format %d", logformat.Current+1))
	e, err := manifest.DecodeEdit((&manifest.Edit{LogFormat: logformat.RangeDel}).Encode())
	require.NoError(t, err)
	require.Equal(t, uint64(logformat.RangeDel), e.LogFormat)
	// Records of the formats before it hold no range deletions.
	var b Batch
	require.NoError(t, b.DeleteRange([]byte("a"), []byte("b")))
	b.setSeq(1)
	for _, format := range []uint64{logformat.V1, logformat.WithSynced, logformat.LogNum} {
		_, _, err := logformat.Decode(format, b.data, nil)
		require.ErrorIs(t, err, logformat.ErrBadBatch, "format %d", format)
	}
	_, _, err = logformat.Decode(logformat.RangeDel, b.data, nil)
	require.NoError(t, err)
}

func TestDeleteRangeNeedsBytewiseOrder(t *testing.T) {
	opts := smallOptions()
	opts.Comparator = &sstables.Comparator{Name: "test.reverse", Compare: func(a, b []byte) int { return bytes.Compare(b, a) }}
	db, err := Open(t.TempDir(), opts)
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.Put(rdKey(1), []byte("v"), DefaultSync))
	require.ErrorIs(t, db.DeleteRange(rdKey(2), rdKey(0), DefaultSync), ErrRangeDelOrder)
	require.ErrorIs(t, db.DeleteRange(nil, nil, DefaultSync), ErrRangeDelOrder)
	b := db.NewBatch()
	require.NoError(t, b.Put(rdKey(2), []byte("v")))
	require.NoError(t, b.DeleteRange(rdKey(0), rdKey(9)))
	require.ErrorIs(t, db.Write(b, DefaultSync), ErrRangeDelOrder, "the whole batch is refused")
	_, err = db.Get(rdKey(2))
	require.ErrorIs(t, err, ErrNotFound)
	v, err := db.Get(rdKey(1))
	require.NoError(t, err)
	require.Equal(t, "v", string(v))
}

func TestDeleteRangeInCheckpoint(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(filepath.Join(dir, "db"), smallOptions())
	require.NoError(t, err)
	defer db.Close()
	for i := range 100 {
		require.NoError(t, db.Put(rdKey(i), []byte("v"), DefaultSync))
	}
	require.NoError(t, db.Flush())
	require.NoError(t, db.DeleteRange(rdKey(10), rdKey(90), DefaultSync)) // in the memstore only
	require.NoError(t, db.Checkpoint(filepath.Join(dir, "ckpt")))
	cp, err := Open(filepath.Join(dir, "ckpt"), smallOptions())
	require.NoError(t, err)
	defer cp.Close()
	require.Len(t, liveKeys(t, cp.NewIterator), 20)
	_, err = cp.Get(rdKey(50))
	require.ErrorIs(t, err, ErrNotFound)
}
