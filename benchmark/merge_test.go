package benchmark

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stratadb/strata/simpledb"
)

// counters is how many counters BenchmarkSimpleDBCounter increments.
const counters = 100

// BenchmarkSimpleDBCounter increments counters, unsynced, three ways: a
// Merge with Uint64AddMerger, which reads nothing and folds into the
// counter's entry in the memstore; a transaction that
// reads, adds and writes back, retrying conflicts; and a Get then a Put,
// which loses increments under concurrency and is there for its cost
// alone, with one goroutine. Each run checks the counters' sum against
// the increments made.
func BenchmarkSimpleDBCounter(b *testing.B) {
	one := binary.LittleEndian.AppendUint64(nil, 1)
	for _, tc := range []struct {
		name       string
		goroutines int
		incr       func(db *simpledb.DB, key []byte, runs *atomic.Int64) error
	}{
		{"merge/goroutines=1", 1, func(db *simpledb.DB, key []byte, _ *atomic.Int64) error {
			return db.Merge(key, one, simpledb.DefaultSync)
		}},
		{"merge/goroutines=8", 8, func(db *simpledb.DB, key []byte, _ *atomic.Int64) error {
			return db.Merge(key, one, simpledb.DefaultSync)
		}},
		{"txn/goroutines=1", 1, txnIncrement},
		{"txn/goroutines=8", 8, txnIncrement},
		{"get-put/goroutines=1", 1, func(db *simpledb.DB, key []byte, _ *atomic.Int64) error {
			v, err := db.Get(key)
			if err == simpledb.ErrNotFound {
				v, err = make([]byte, 8), nil
			}
			if err != nil {
				return err
			}
			return db.Put(key, binary.LittleEndian.AppendUint64(nil, binary.LittleEndian.Uint64(v)+1), simpledb.DefaultSync)
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			db, err := simpledb.Open(benchDir(b), &simpledb.Options{NoSync: true, Merger: simpledb.Uint64AddMerger})
			if err != nil {
				b.Fatal(err)
			}
			defer closeUntimed(b, db)
			var runs, next atomic.Int64
			b.ResetTimer()
			var wg sync.WaitGroup
			for g := range tc.goroutines {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(g), 12))
					for next.Add(1) <= int64(b.N) {
						if err := tc.incr(db, counterKey(rng.IntN(counters)), &runs); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			reportOpsPerSecond(b, b.N, "increments/s")
			// The entries the memstores hold at the end: a merge folds
			// into its counter's entry in the active one.
			b.ReportMetric(float64(db.Stats().MemstoreEntries), "memstore-entries")
			if tc.name[:3] == "txn" {
				b.ReportMetric(float64(runs.Load()-int64(b.N))/float64(b.N), "aborts/op")
			}
			var sum uint64
			for i := range counters {
				v, err := db.Get(counterKey(i))
				if err == simpledb.ErrNotFound {
					continue
				}
				if err != nil {
					b.Fatal(err)
				}
				sum += binary.LittleEndian.Uint64(v)
			}
			if sum != uint64(b.N) {
				b.Fatalf("the counters sum to %d after %d increments", sum, b.N)
			}
		})
	}
}

func counterKey(i int) []byte { return fmt.Appendf(nil, "counter-%03d", i) }

// txnIncrement adds 1 to key in a transaction, counting its runs.
func txnIncrement(db *simpledb.DB, key []byte, runs *atomic.Int64) error {
	return db.Update(1000, func(tx *simpledb.Txn) error {
		runs.Add(1)
		v, err := tx.Get(key)
		if err == simpledb.ErrNotFound {
			v, err = make([]byte, 8), nil
		}
		if err != nil {
			return err
		}
		return tx.Put(key, binary.LittleEndian.AppendUint64(nil, binary.LittleEndian.Uint64(v)+1))
	})
}

// BenchmarkSimpleDBGetMerged reads a counter whose newest versions are
// operands, in the memstore or compacted to one table entry, against one
// written with Put: what a read that folds costs. A snapshot taken before
// each merge keeps the operands entries of their own; folded, the
// operands merged at insert into the value below them.
func BenchmarkSimpleDBGetMerged(b *testing.B) {
	one := binary.LittleEndian.AppendUint64(nil, 1)
	for _, tc := range []struct {
		name     string
		operands int
		unfolded bool // a snapshot between the merges keeps each an entry
		compact  bool
	}{
		{"put", 0, false, false},
		{"operands=100/folded", 100, false, false},
		{"operands=1", 1, true, false},
		{"operands=10", 10, true, false},
		{"operands=100", 100, true, false},
		{"operands=100/compacted", 100, true, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			db, err := simpledb.Open(benchDir(b), &simpledb.Options{NoSync: true, Merger: simpledb.Uint64AddMerger})
			if err != nil {
				b.Fatal(err)
			}
			defer closeUntimed(b, db)
			key := []byte("counter")
			if err := db.Put(key, make([]byte, 8), simpledb.DefaultSync); err != nil {
				b.Fatal(err)
			}
			var snaps []*simpledb.Snapshot
			for range tc.operands {
				if tc.unfolded {
					snaps = append(snaps, db.NewSnapshot())
				}
				if err := db.Merge(key, one, simpledb.DefaultSync); err != nil {
					b.Fatal(err)
				}
			}
			for _, s := range snaps { // the entries stay
				if err := s.Release(); err != nil {
					b.Fatal(err)
				}
			}
			if tc.compact {
				if err := db.Flush(); err != nil {
					b.Fatal(err)
				}
				if err := db.Compact(); err != nil {
					b.Fatal(err)
				}
			}
			var buf []byte
			b.ResetTimer()
			for range b.N {
				if buf, err = db.AppendValue(buf[:0], key); err != nil {
					b.Fatal(err)
				}
				if n := binary.LittleEndian.Uint64(buf); n != uint64(tc.operands) {
					b.Fatalf("the counter reads %d, not %d", n, tc.operands)
				}
			}
		})
	}
}
