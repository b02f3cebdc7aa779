package simpledb

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/testseed"
	"github.com/stretchr/testify/require"
)

// randomValue returns incompressible bytes that begin with the key and a
// version, so a read can tell which write it sees.
func randomValue(rng *rand.Rand, key []byte, version uint64, n int) []byte {
	v := append(bytes.Clone(key), '@')
	v = binary.BigEndian.AppendUint64(v, version)
	for len(v) < n {
		v = binary.LittleEndian.AppendUint64(v, rng.Uint64())
	}
	return v
}

// Enough incompressible data to push tables down several levels through
// background flushes and compactions, with overwrites and deletes; every
// key then reads back as last written, before and after a reopen.
func TestDataFlowsThroughLevels(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(testseed.Seed(t), 0))
	dir := t.TempDir()
	db, err := Open(dir, smallOptions())
	require.NoError(t, err)
	m := model{}
	const keys = 4000
	for i := range 30000 {
		k := fmt.Appendf(nil, "k%06d", rng.IntN(keys))
		if rng.IntN(8) == 0 {
			require.NoError(t, db.Delete(k, DefaultSync))
			delete(m, string(k))
			continue
		}
		v := randomValue(rng, k, uint64(i), 100+rng.IntN(400))
		require.NoError(t, db.Put(k, v, NoSync))
		m[string(k)] = string(v)
	}
	st := db.Stats()
	t.Logf("levels %v, flushes %d, compactions %d, trivial moves %d, stalls %d, write amplification %.1f",
		st.Levels, st.Flushes, st.Compactions, st.TrivialMoves, st.Stalls, st.WriteAmplification)
	require.Greater(t, st.Compactions, int64(3))
	deep := 0
	for level := 2; level < NumLevels; level++ {
		deep += st.Levels[level].Tables
	}
	require.Positive(t, deep, "data should reach L2 or below")

	verify := func(db *DB) {
		for i := range keys {
			checkGet(t, db, m, fmt.Appendf(nil, "k%06d", i), "after the load")
		}
		checkScan(t, bytes.Compare, db.NewIterator, m, nil, nil, "full scan")
	}
	verify(db)
	require.NoError(t, db.Close())
	db, err = Open(dir, smallOptions())
	require.NoError(t, err)
	verify(db)
	require.NoError(t, db.Compact())
	verify(db)
	require.NoError(t, db.Close())
}

func batchOf(k, v []byte) *Batch {
	var b Batch
	b.Put(k, v)
	return &b
}

// Many goroutines write, read and scan while flushes and compactions run
// (run with -race). Each writer owns its keys and writes them with rising
// versions; every read must see a version no older than one that reader
// saw before, and never a value that was not written.
func TestConcurrentReadersAndWriters(t *testing.T) {
	t.Parallel()
	seed := testseed.Seed(t)
	db, err := Open(t.TempDir(), smallOptions())
	require.NoError(t, err)
	defer db.Close()
	const writers, readers, keysPerWriter = 4, 4, 50
	var stop atomic.Bool
	var wg sync.WaitGroup
	versionOf := func(k, v []byte) uint64 {
		if len(v) < len(k)+9 || !bytes.Equal(v[:len(k)], k) || v[len(k)] != '@' {
			t.Errorf("key %s holds a value that was never written: %q", k, v[:min(len(v), 40)])
			return 0
		}
		return binary.BigEndian.Uint64(v[len(k)+1:])
	}
	for w := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			for version := uint64(1); !stop.Load(); version++ {
				k := fmt.Appendf(nil, "w%d-%03d", w, rng.IntN(keysPerWriter))
				if err := db.Put(k, randomValue(rng, k, version, 200+rng.IntN(800)), DefaultSync); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for r := range readers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(100+r)))
			seen := map[string]uint64{}
			for !stop.Load() {
				k := fmt.Appendf(nil, "w%d-%03d", rng.IntN(writers), rng.IntN(keysPerWriter))
				if rng.IntN(4) == 0 {
					it, err := db.NewIterator(k, nil)
					if err != nil {
						t.Error(err)
						return
					}
					n := 0
					for ok := it.First(); ok && n < 20; ok = it.Next() {
						versionOf(it.Key(), it.Value())
						n++
					}
					if err := it.Err(); err != nil {
						t.Error(err)
					}
					it.Close()
					continue
				}
				v, err := db.Get(k)
				if err == ErrNotFound {
					if seen[string(k)] > 0 {
						t.Errorf("%s vanished after version %d", k, seen[string(k)])
					}
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				ver := versionOf(k, v)
				if ver < seen[string(k)] {
					t.Errorf("%s went back from version %d to %d", k, seen[string(k)], ver)
				}
				seen[string(k)] = ver
			}
		})
	}
	wg.Go(func() {
		defer stop.Store(true)
		for round := range int64(4) {
			for db.Stats().Writes < (round+1)*1000 {
				time.Sleep(5 * time.Millisecond)
				if t.Failed() {
					return
				}
			}
			if err := db.Flush(); err != nil {
				t.Error(err)
			}
			if round%2 == 1 {
				if err := db.Compact(); err != nil {
					t.Error(err)
				}
			}
		}
	})
	wg.Wait()
	st := db.Stats()
	t.Logf("writes %d, flushes %d, compactions %d, levels %v", st.Writes, st.Flushes, st.Compactions, st.Levels)
}
