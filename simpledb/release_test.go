package simpledb

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/testseed"
	"github.com/stratadb/strata/vfs"
	"github.com/stretchr/testify/require"
)

// TestReadsDuringReleases runs every kind of read against every release of
// memory at once, in a database of a 2 MiB MemoryBudget: flushes release
// memstores (unmapped), compactions close tables and evict their blocks,
// whose cache chunks the next blocks reuse, read states go as each flush
// or compaction installs the next, and a follower's catch-ups replace the
// views its snapshots hold. Readers meanwhile Get, AppendValue and Has,
// walk iterators both ways, read through snapshots held across flushes and
// through transactions, and read the follower's snapshots while they are
// released. Every value must be one written to its key, whole: a read of
// released memory would fault or read another block's bytes. The reads
// take their references under the lock that releases, or while a count is
// above zero, and a reference taken on anything released panics.
func TestReadsDuringReleases(t *testing.T) {
	run := 2 * time.Second
	if testseed.Long() {
		run = 2 * time.Minute
	}
	seed := testseed.Seed(t)
	fsys := vfs.NewMem()
	opts := testOptions(fsys)
	opts.MemoryBudget = 2 << 20
	opts.MaxOpenFiles = MinMaxOpenFiles
	opts.BaseLevelSize, opts.TargetTableSize = 64<<10, 16<<10
	db, err := Open("/db", opts)
	require.NoError(t, err)
	defer db.Close()
	const keys = 2000
	key := func(rng *rand.Rand) []byte { return fmt.Appendf(nil, "key-%04d", rng.IntN(keys)) }
	// A value names its key, so that a read of other bytes is caught.
	value := func(k []byte, rng *rand.Rand) []byte {
		return append(append(bytes.Clone(k), '@'), bytes.Repeat([]byte{byte('a' + rng.IntN(26))}, 20+rng.IntN(400))...)
	}
	checkValue := func(k, v []byte) error {
		if !bytes.HasPrefix(v, append(bytes.Clone(k), '@')) {
			return fmt.Errorf("%s holds %.60q, which was never written to it", k, v)
		}
		for _, c := range v[len(k)+2:] {
			if c != v[len(k)+1] {
				return fmt.Errorf("%s holds %.60q: a value torn or overwritten", k, v)
			}
		}
		return nil
	}
	var stop atomic.Bool
	var reads atomic.Int64
	var wg sync.WaitGroup
	fail := func(format string, args ...any) {
		t.Errorf("seed %d: "+format, append([]any{seed}, args...)...)
		stop.Store(true)
	}
	// The writer: puts, range deletions, a flush every few hundred writes
	// and now and then a compaction.
	wg.Go(func() {
		rng := rand.New(rand.NewPCG(seed, 0))
		for i := 0; !stop.Load(); i++ {
			var err error
			switch {
			case i%300 == 299:
				err = db.Flush()
			case i%3000 == 2999:
				err = db.Compact()
			case rng.IntN(50) == 0:
				lo := key(rng)
				err = db.DeleteRange(lo, append(bytes.Clone(lo), 'x'), NoSync)
			default:
				k := key(rng)
				err = db.Put(k, value(k, rng), NoSync)
			}
			if err != nil {
				fail("write: %v", err)
			}
		}
	})
	read := func(k, v []byte, err error) {
		reads.Add(1)
		switch {
		case err == nil:
			if err := checkValue(k, v); err != nil {
				fail("%v", err)
			}
		case !errors.Is(err, ErrNotFound):
			fail("read %s: %v", k, err)
		}
	}
	walk := func(it *Iterator, fwd bool, steps int) {
		var last []byte
		ok := it.First()
		if !fwd {
			ok = it.Last()
		}
		for ; ok && steps > 0; steps-- {
			k := it.Key()
			if c := bytes.Compare(k, last); last != nil && (fwd && c <= 0 || !fwd && c >= 0) {
				fail("an iterator went from %s to %s (forward: %v)", last, k, fwd)
			}
			last = append(last[:0], k...)
			read(k, it.Value(), nil)
			if fwd {
				ok = it.Next()
			} else {
				ok = it.Prev()
			}
		}
		if err := it.Err(); err != nil {
			fail("iterator: %v", err)
		}
	}
	for r := range 2 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(1+r)))
			var buf []byte
			var snap *Snapshot
			var snapRead map[string]string
			for !stop.Load() {
				k := key(rng)
				switch rng.IntN(8) {
				case 0:
					v, err := db.Get(k)
					read(k, v, err)
				case 1:
					var err error
					buf, err = db.AppendValue(buf[:0], k)
					read(k, buf, err)
				case 2:
					if _, err := db.Has(k); err != nil {
						fail("Has: %v", err)
					}
				case 3:
					it, err := db.NewIterator(k, nil)
					if err != nil {
						fail("NewIterator: %v", err)
						continue
					}
					walk(it, rng.IntN(2) == 0, 50)
					it.Close()
				case 4:
					// A snapshot held across the writer's flushes reads the
					// same every time.
					if snap == nil || rng.IntN(20) == 0 {
						if snap != nil {
							snap.Release()
						}
						snap, snapRead = db.NewSnapshot(), map[string]string{}
					}
					v, err := snap.Get(k)
					read(k, v, err)
					if prev, ok := snapRead[string(k)]; ok && prev != string(v) {
						fail("a snapshot read %s as %.40q, then %.40q", k, prev, v)
					}
					snapRead[string(k)] = string(v)
					it, err := snap.NewIterator(k, nil)
					if err != nil {
						fail("snapshot iterator: %v", err)
						continue
					}
					walk(it, rng.IntN(2) == 0, 20)
					it.Close()
				default:
					tx, err := db.NewTxn(true)
					if err != nil {
						fail("NewTxn: %v", err)
						continue
					}
					v, err := tx.Get(k)
					read(k, v, err)
					tx.Put(k, value(k, rng)) // read under the transaction's own write
					v, err = tx.Get(k)
					read(k, v, err)
					it, err := tx.NewIterator(k, nil)
					if err != nil {
						fail("transaction iterator: %v", err)
					} else {
						walk(it, rng.IntN(2) == 0, 20)
						it.Close()
					}
					tx.Discard()
				}
			}
			if snap != nil {
				snap.Release()
			}
		})
	}
	// The follower: catch-ups replace the view its snapshots hold, and
	// each snapshot is released while its readers read it.
	wg.Go(func() {
		rng := rand.New(rand.NewPCG(seed, 10))
		f, err := Open("/db", followOptions(fsys))
		for errors.Is(err, ErrOutpaced) {
			f, err = Open("/db", followOptions(fsys))
		}
		if err != nil {
			fail("open a follower: %v", err)
			return
		}
		defer f.Close()
		for !stop.Load() {
			snap := f.NewSnapshot()
			var readers sync.WaitGroup
			for r := range 2 {
				rng := rand.New(rand.NewPCG(rng.Uint64(), uint64(r)))
				readers.Go(func() {
					for i := 0; ; i++ {
						k := key(rng)
						var err error
						if i%5 == 4 {
							var it *Iterator
							if it, err = snap.NewIterator(k, nil); err == nil {
								walk(it, i%2 == 0, 10)
								it.Close()
							}
						} else {
							var v []byte
							v, err = snap.Get(k)
							if errors.Is(err, ErrClosed) {
								return
							}
							read(k, v, err)
						}
						if errors.Is(err, ErrClosed) {
							return
						}
					}
				})
			}
			if err := f.CatchUp(); err != nil && !errors.Is(err, ErrOutpaced) {
				fail("CatchUp: %v", err)
			}
			v, err := f.Get([]byte("key-0000"))
			read([]byte("key-0000"), v, err)
			snap.Release()
			readers.Wait()
		}
	})
	time.Sleep(run)
	stop.Store(true)
	wg.Wait()
	st := db.Stats()
	t.Logf("%d reads checked; %d flushes, %d compactions, block cache: %d hits, %d misses",
		reads.Load(), st.Flushes, st.Compactions, st.BlockCacheHits, st.BlockCacheMisses)
	require.Positive(t, st.Flushes)
	require.Positive(t, st.Compactions)
}
