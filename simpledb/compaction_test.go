package simpledb

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stratadb/strata/internal/testseed"
	"github.com/stratadb/strata/vfs"
	"github.com/stretchr/testify/require"
)

// tableLog is a log handler that records the tables the database reports
// flushing and moving at Debug.
type tableLog struct {
	mu             sync.Mutex
	flushed, moved []uint64
}

func (h *tableLog) Enabled(context.Context, slog.Level) bool { return true }
func (h *tableLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *tableLog) WithGroup(string) slog.Handler            { return h }

func (h *tableLog) Handle(_ context.Context, r slog.Record) error {
	var to *[]uint64
	switch {
	case r.Level != slog.LevelDebug:
		return nil
	case r.Message == "simpledb: flushed memstore":
		to = &h.flushed
	case r.Message == "simpledb: moved table":
		to = &h.moved
	default:
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "table" {
			*to = append(*to, a.Value.Uint64())
		}
		return true
	})
	return nil
}

// tableLevels returns the level of every table of the current version.
func tableLevels(db *DB) map[uint64]int {
	db.mu.Lock()
	defer db.mu.Unlock()
	levels := map[uint64]int{}
	for level, tables := range db.mu.versions.current().levels {
		for _, t := range tables {
			levels[t.Num] = level
		}
	}
	return levels
}

// compactAsBackground runs the compactions the background would pick, one
// after the other, until none is due. For databases opened with
// DisableAutoCompaction.
func compactAsBackground(t *testing.T, db *DB) {
	t.Helper()
	db.mu.Lock()
	defer db.mu.Unlock()
	for c := db.mu.compaction.pick(db.mu.versions.current(), &db.opts); c != nil; c = db.mu.compaction.pick(db.mu.versions.current(), &db.opts) {
		require.NoError(t, db.runCompaction(c))
	}
}

// A sequential load (keys in ascending order) makes tables that nothing
// below overlaps: compaction moves every one of them down the levels and
// rewrites none. Every table, down to the deepest level, is one a flush
// wrote; each move is logged; the data reads back, also after a reopen.
func TestTrivialMovesOnSequentialFill(t *testing.T) {
	rng := rand.New(rand.NewPCG(testseed.Seed(t), 0))
	dir := t.TempDir()
	log := &tableLog{}
	opts := smallOptions()
	opts.Logger = slog.New(log)
	db, err := Open(dir, opts)
	require.NoError(t, err)
	m := model{}
	for i := range 12000 {
		k := fmt.Appendf(nil, "k%08d", i)
		v := randomValue(rng, k, uint64(i), 200+rng.IntN(300))
		require.NoError(t, db.Put(k, v, NoSync))
		m[string(k)] = string(v)
	}
	require.NoError(t, db.Flush())
	st := db.Stats()
	require.NoError(t, db.Close()) // waits for the background work
	// Moves that ran since Stats.
	st.TrivialMoves, st.Levels = db.mu.stats.trivialMoves, [NumLevels]LevelStats{}
	for level, tables := range db.mu.versions.current().levels {
		st.Levels[level] = LevelStats{len(tables), db.mu.versions.current().levelSize(level)}
	}
	t.Logf("levels %v, flushes %d, compactions %d (%d bytes written), trivial moves %d, write amplification %.2f",
		st.Levels, st.Flushes, st.Compactions, st.CompactionBytesWritten, st.TrivialMoves, st.WriteAmplification)

	log.mu.Lock()
	flushed := map[uint64]bool{}
	for _, num := range log.flushed {
		flushed[num] = true
	}
	require.Len(t, log.moved, int(st.TrivialMoves), "every move logged")
	log.mu.Unlock()
	require.Positive(t, st.TrivialMoves)
	require.Zero(t, db.mu.stats.compactions, "nothing rewritten")
	require.Zero(t, db.mu.stats.compactionBytes)
	require.Less(t, st.WriteAmplification, 2.5, "the log and one flush per byte")

	db, err = Open(dir, opts)
	require.NoError(t, err)
	defer db.Close()
	deepest := 0
	for num, level := range tableLevels(db) {
		require.True(t, flushed[num], "table %d in L%d was written by a flush", num, level)
		deepest = max(deepest, level)
	}
	require.GreaterOrEqual(t, deepest, 3, "tables moved down to L3 at least")
	checkScan(t, bytes.Compare, db.NewIterator, m, nil, nil, "after the reopen")
}

// An L0 table moves to L1 only if no older L0 table overlaps it: below an
// older version of one of its keys, its newer one would be hidden. Each
// case builds L1 and two L0 tables (A, then the newer B), runs the
// compactions the background would, and checks that every key reads as
// last written, before and after a reopen.
func TestTrivialMoveKeepsL0Order(t *testing.T) {
	type write struct{ key, value string }
	for _, tc := range []struct {
		name     string
		l1, a, b []write
		moved    string // the table that moves to L1 ("A", "B"), or ""
	}{{
		// B overlaps no L1 table but the older A: moving B would put it
		// below A, and A's a=1 would hide B's a=2.
		name: "newer over older stays",
		l1:   []write{{"m", "0"}},
		a:    []write{{"a", "1"}, {"m", "1"}},
		b:    []write{{"a", "2"}},
	}, {
		name:  "oldest of overlapping moves",
		l1:    []write{{"x", "0"}},
		a:     []write{{"a", "1"}, {"c", "1"}},
		b:     []write{{"a", "2"}},
		moved: "A",
	}, {
		// A overlaps L1 and stays; B overlaps neither A nor L1.
		name:  "newer with no older overlap moves",
		l1:    []write{{"m", "0"}},
		a:     []write{{"a", "1"}, {"m", "1"}},
		b:     []write{{"x", "2"}},
		moved: "B",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			opts := testOptions(vfs.NewMem())
			opts.DisableAutoCompaction = true
			db, err := Open("/db", opts)
			require.NoError(t, err)
			defer func() { db.Close() }()
			m := model{}
			flush := func(writes []write) uint64 {
				for _, w := range writes {
					require.NoError(t, db.Put([]byte(w.key), []byte(w.value), DefaultSync))
					m[w.key] = w.value
				}
				require.NoError(t, db.Flush())
				db.mu.Lock()
				defer db.mu.Unlock()
				return db.mu.versions.current().levels[0][0].Num // the newest
			}
			flush(tc.l1)
			require.NoError(t, db.Compact())
			tables := map[string]uint64{"A": flush(tc.a), "B": flush(tc.b)}

			compactAsBackground(t, db)
			check := func(msg string) {
				for k := range m {
					checkGet(t, db, m, []byte(k), msg)
				}
				checkScan(t, bytes.Compare, db.NewIterator, m, nil, nil, msg)
			}
			check("after the compactions")
			levels := tableLevels(db)
			if tc.moved != "" {
				require.EqualValues(t, 1, db.Stats().TrivialMoves)
				require.Equal(t, 1, levels[tables[tc.moved]], "%s moved to L1", tc.moved)
			} else {
				require.Zero(t, db.Stats().TrivialMoves)
			}
			require.NoError(t, db.Close())
			db, err = Open("/db", opts)
			require.NoError(t, err)
			require.Equal(t, levels, tableLevels(db), "the levels after the reopen")
			check("after the reopen")
		})
	}
}

// A table moves only if the tables of the level below its new one that it
// overlaps total at most 10 × TargetTableSize; else its own compaction into
// that level would later rewrite them all at once. It is rewritten now
// instead, into tables that each overlap at most that much.
func TestTrivialMoveGrandparentLimit(t *testing.T) {
	for _, tc := range []struct {
		name     string
		lo, hi   int // the L0 table's keys
		wantMove bool
	}{
		{name: "narrow", lo: 100, hi: 101, wantMove: true},
		{name: "wide", lo: 1, hi: 398, wantMove: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 0))
			opts := testOptions(vfs.NewMem())
			opts.TargetTableSize = 4 << 10
			opts.L0CompactionTrigger = 1
			opts.DisableAutoCompaction = true
			db, err := Open("/db", opts)
			require.NoError(t, err)
			defer db.Close()
			m := model{}
			put := func(k string, n int) {
				v := randomValue(rng, []byte(k), 0, n)
				require.NoError(t, db.Put([]byte(k), v, DefaultSync))
				m[k] = string(v)
			}
			// L2: about 120 KiB of 4 KiB tables, three times the limit.
			for i := range 400 {
				put(fmt.Sprintf("k%04d", i), 300)
			}
			require.NoError(t, db.Compact()) // to L1
			func() {
				db.mu.Lock()
				defer db.mu.Unlock() // also when require fails: Close takes it
				require.NoError(t, db.runCompaction(newCompaction(db.mu.versions.current(), 1, db.mu.versions.current().levels[1])))
				require.Greater(t, db.mu.versions.current().levelDataSize(2), 3*db.opts.maxGrandparentOverlap())
			}()

			put(fmt.Sprintf("k%04dx", tc.lo), 10)
			put(fmt.Sprintf("k%04dx", tc.hi), 10)
			require.NoError(t, db.Flush())
			db.mu.Lock()
			l0 := db.mu.versions.current().levels[0][0].Num
			db.mu.Unlock()
			before := db.Stats()
			compactAsBackground(t, db)
			st := db.Stats()
			_, kept := tableLevels(db)[l0]
			if tc.wantMove {
				require.Equal(t, before.TrivialMoves+1, st.TrivialMoves)
				require.Equal(t, before.Compactions, st.Compactions)
				require.Equal(t, 1, tableLevels(db)[l0], "moved to L1")
			} else {
				require.Equal(t, before.TrivialMoves, st.TrivialMoves)
				require.Equal(t, before.Compactions+1, st.Compactions)
				require.False(t, kept, "rewritten")
			}
			db.mu.Lock()
			overlaps := map[string]int64{} // L1 table -> the bytes of L2 it overlaps
			for _, tb := range db.mu.versions.current().levels[1] {
				c := &compaction{level: 0, v: db.mu.versions.current()}
				overlaps[fmt.Sprintf("%s-%s", tb.Smallest, tb.Largest)] = c.grandparentOverlap(tb)
			}
			db.mu.Unlock()
			for name, overlap := range overlaps {
				require.LessOrEqual(t, overlap, db.opts.maxGrandparentOverlap(), "L1 table %s", name)
			}
			checkScan(t, bytes.Compare, db.NewIterator, m, nil, nil, "after the compaction")
		})
	}
}
