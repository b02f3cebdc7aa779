package skiplist

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stratadb/strata/internal/testseed"
	"github.com/stretchr/testify/require"
)

// versioned is a value whose fields must agree, so a reader can tell a torn
// value from a whole one.
type versioned struct {
	key, version, check int
}

func newVersioned(key, version int) versioned {
	return versioned{key: key, version: version, check: key*1_000_003 + version*7}
}

func (v versioned) validFor(key int) error {
	if v.key != key || v.check != key*1_000_003+v.version*7 {
		return fmt.Errorf("key %d holds a torn or foreign value %+v", key, v)
	}
	return nil
}

// TestConcurrentReadersDuringWrites runs readers that look up and iterate
// while one writer inserts and upserts, and checks that readers see every
// completed insert, keep seeing every key they have seen, iterate in strictly
// ascending order and never see a torn value or an older version after a
// newer one.
func TestConcurrentReadersDuringWrites(t *testing.T) {
	seed := testseed.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 0))
	const n = 20_000
	// Even keys only, so that odd keys are misses.
	keys := rng.Perm(n)
	for i := range keys {
		keys[i] *= 2
	}
	m := NewOrdered[int, versioned](&Options{Seed: seed})
	// keys[:inserted] have been inserted by Inserts that returned.
	var inserted atomic.Int64
	var writing atomic.Bool
	writing.Store(true)

	var wg sync.WaitGroup
	errs := make([]error, 4)
	for r := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[r] = readUntilDone(m, keys, &inserted, &writing, seed+uint64(r))
		}()
	}

	versions := make([]int, 2*n)
	for i, k := range keys {
		require.True(t, m.Insert(k, newVersioned(k, 0)))
		inserted.Store(int64(i + 1))
		if i%3 == 0 {
			u := keys[rng.IntN(i+1)]
			versions[u]++
			require.False(t, m.Upsert(u, newVersioned(u, versions[u])))
		}
	}
	writing.Store(false)
	wg.Wait()
	for r, err := range errs {
		require.NoError(t, err, "reader %d", r)
	}
	require.Equal(t, n, m.Len())
	for _, k := range keys {
		v, ok := m.Get(k)
		require.True(t, ok)
		require.Equal(t, newVersioned(k, versions[k]), v)
	}
}

// readUntilDone reads m in passes until the writer has finished, then makes
// one more pass, and returns the first inconsistency it finds.
func readUntilDone(m *Map[int, versioned], keys []int, inserted *atomic.Int64, writing *atomic.Bool, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 1))
	lastVersion := map[int]int{}
	seen := make([]bool, 2*len(keys))
	checkValue := func(k int, v versioned) error {
		if err := v.validFor(k); err != nil {
			return err
		}
		if v.version < lastVersion[k] {
			return fmt.Errorf("key %d went back from version %d to %d", k, lastVersion[k], v.version)
		}
		lastVersion[k] = v.version
		return nil
	}
	for pass := 0; ; pass++ {
		last := !writing.Load()
		published := int(inserted.Load())

		// Point reads: every completed insert is visible, misses miss.
		for range 100 {
			k := keys[rng.IntN(max(published, 1))]
			v, ok := m.Get(k)
			if published > 0 && !ok {
				return fmt.Errorf("pass %d: Get(%d) misses a published key", pass, k)
			}
			if ok {
				if err := checkValue(k, v); err != nil {
					return err
				}
			}
			if _, ok := m.Get(k + 1); ok {
				return fmt.Errorf("pass %d: Get(%d) finds a key never inserted", pass, k+1)
			}
		}

		// A full scan: strictly ascending, and a superset of everything
		// published before it started and everything seen before.
		prev, count := -1, 0
		for k, v := range m.All() {
			if k <= prev {
				return fmt.Errorf("pass %d: scan went from %d to %d", pass, prev, k)
			}
			if err := checkValue(k, v); err != nil {
				return err
			}
			seen[k] = true
			prev = k
			count++
		}
		for _, k := range keys[:published] {
			if !seen[k] {
				return fmt.Errorf("pass %d: scan missed published key %d", pass, k)
			}
		}
		for k, was := range seen {
			if was {
				if _, ok := m.Get(k); !ok {
					return fmt.Errorf("pass %d: key %d was seen, then lost", pass, k)
				}
			}
		}
		if count < published {
			return fmt.Errorf("pass %d: scan saw %d keys, %d were published", pass, count, published)
		}

		// A bounded scan from a seek stays in bounds and ascends.
		lo, hi := rng.IntN(2*len(keys)), rng.IntN(2*len(keys))
		it := m.NewIterator(&lo, &hi)
		prev = -1
		for ok := it.SeekGE(rng.IntN(2 * len(keys))); ok; ok = it.Next() {
			k := it.Key()
			if k < lo || k >= hi || k <= prev {
				return fmt.Errorf("pass %d: bounded scan [%d, %d) yielded %d after %d", pass, lo, hi, k, prev)
			}
			prev = k
		}
		if last {
			return nil
		}
	}
}
