package simpledb

import (
	"bytes"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stratadb/strata/internal/testseed"
	"github.com/stretchr/testify/require"
)

// long runs the randomised tests for much longer: `make stress`.
var long = flag.Bool("long", false, "run randomised tests at stress length")

// model is the reference: a plain map of what the database must hold.
type model map[string]string

// modelSnapshot pairs a database snapshot with the model's state then.
type modelSnapshot struct {
	snap  *Snapshot
	state model
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
	}
}

func TestModel(t *testing.T) {
	steps := 3000
	if *long {
		steps = 100000
	}
	seed := testseed.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 0))
	dir := t.TempDir()
	opts := smallOptions()
	// Small levels and tables spread the data over L1 and L2, so that
	// compactions move tables as well as merge them.
	opts.BaseLevelSize, opts.TargetTableSize = 32<<10, 8<<10
	db, err := Open(dir, opts)
	require.NoError(t, err)
	defer func() { db.Close() }()

	m := model{}
	var snaps []modelSnapshot
	var moves, recycled int64 // trivial moves and recycled logs, over every session
	key := func() []byte { return fmt.Appendf(nil, "key-%04d", rng.IntN(2000)) }
	value := func() []byte {
		if rng.IntN(20) == 0 {
			return []byte{}
		}
		return bytes.Repeat(fmt.Appendf(nil, "v%d.", rng.IntN(1000)), 1+rng.IntN(300))
	}
	for step := range steps {
		msg := fmt.Sprintf("seed %d step %d", seed, step)
		switch op := rng.IntN(100); {
		case op < 40:
			k, v := key(), value()
			require.NoError(t, db.Put(k, v), msg)
			m[string(k)] = string(v)
		case op < 50:
			k := key()
			require.NoError(t, db.Delete(k), msg)
			delete(m, string(k))
		case op < 58:
			b := db.NewBatch()
			for range 1 + rng.IntN(20) {
				k := key()
				if rng.IntN(3) == 0 {
					require.NoError(t, b.Delete(k))
					delete(m, string(k))
				} else {
					v := value()
					require.NoError(t, b.Put(k, v))
					m[string(k)] = string(v)
				}
			}
			require.NoError(t, db.Write(b), msg)
		case op < 75:
			checkGet(t, db.Get, m, key(), msg)
		case op < 82:
			checkScan(t, db.NewIterator, m, key(), key(), msg)
		case op < 85:
			snaps = append(snaps, modelSnapshot{db.NewSnapshot(), maps.Clone(m)})
		case op < 89 && len(snaps) > 0:
			i := rng.IntN(len(snaps))
			s := snaps[i]
			checkGet(t, s.snap.Get, s.state, key(), msg+" (snapshot)")
			checkScan(t, s.snap.NewIterator, s.state, key(), key(), msg+" (snapshot)")
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
			st := db.Stats()
			moves, recycled = moves+st.TrivialMoves, recycled+st.LogsRecycled
			require.NoError(t, db.Close(), msg)
			db, err = Open(dir, opts)
			require.NoError(t, err, msg)
		default:
			checkScan(t, db.NewIterator, m, nil, nil, msg+" (full scan)")
		}
	}
	checkScan(t, db.NewIterator, m, nil, nil, "final full scan")
	st := db.Stats()
	moves, recycled = moves+st.TrivialMoves, recycled+st.LogsRecycled
	t.Logf("stats: %d flushes, %d compactions, levels %v, write amplification %.1f (the last session); %d trivial moves, %d logs recycled",
		st.Flushes, st.Compactions, st.Levels, st.WriteAmplification, moves, recycled)
	require.Positive(t, moves, "compaction moved tables")
	require.Positive(t, recycled, "rotations reused logs")
}

func checkGet(t *testing.T, get func([]byte) ([]byte, error), m model, k []byte, msg string) {
	t.Helper()
	v, err := get(k)
	want, ok := m[string(k)]
	if !ok {
		require.ErrorIs(t, err, ErrNotFound, "%s: get %s", msg, k)
		return
	}
	require.NoError(t, err, "%s: get %s", msg, k)
	require.Equal(t, want, string(v), "%s: get %s", msg, k)
}

func checkScan(t *testing.T, newIter func(lo, hi []byte) (*Iterator, error), m model, lo, hi []byte, msg string) {
	t.Helper()
	if lo != nil && hi != nil && bytes.Compare(lo, hi) > 0 {
		lo, hi = hi, lo
	}
	var want []string
	for k := range m {
		if (lo == nil || k >= string(lo)) && (hi == nil || k < string(hi)) {
			want = append(want, k)
		}
	}
	slices.Sort(want)
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

	// SeekGE lands on the first key at or after the target.
	if len(want) > 0 {
		target := want[len(want)/2]
		require.True(t, it.SeekGE([]byte(target)), msg)
		require.Equal(t, target, string(it.Key()), msg)
	}
}
