package benchmark

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stratadb/strata/simpledb"
)

// BenchmarkSimpleDBIndexedBatch: one op adds a 1,000-write batch of random
// fill keys (100-byte values), plain and indexed, which is what the index
// costs a write; "get" reads a random key of an indexed batch of 1,000
// writes over the filled database, half of them the batch's.
func BenchmarkSimpleDBIndexedBatch(b *testing.B) {
	const writes = 1000
	db := filledDB(b)
	defer closeUntimed(b, db)
	rng := rand.New(rand.NewPCG(9, 9))
	keys := make([][]byte, writes)
	for i := range keys {
		keys[i] = fillKey(rng.Uint64N(fillKeys))
	}
	value := dbValue(0, fillValueSize)
	for _, tc := range []struct {
		name  string
		batch func() *simpledb.Batch
	}{{"plain", db.NewBatch}, {"indexed", db.NewIndexedBatch}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				batch := tc.batch()
				for _, k := range keys {
					if err := batch.Put(k, value); err != nil {
						b.Fatal(err)
					}
				}
			}
			reportOpsPerSecond(b, b.N*writes, "writes/s")
		})
	}
	b.Run("get", func(b *testing.B) {
		batch := db.NewIndexedBatch()
		for _, k := range keys {
			if err := batch.Put(k, value); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			k := keys[i%writes]
			if i%2 == 1 {
				k = fillKey(rng.Uint64N(fillKeys))
			}
			if _, err := batch.Get(k); err != nil {
				b.Fatal(err)
			}
		}
		reportOpsPerSecond(b, b.N, "ops/s")
	})
}

// BenchmarkSimpleDBTxnUpdate: one op is an Update transaction that reads a
// random fill key and writes it back (unsynced; the same value, as the
// shared filled database must keep it for the benchmarks after), by 1 and 8
// goroutines at once, against the same read-and-write without a
// transaction (Get, then Put): what the snapshot, the read set and the
// commit check cost. conflicts counts the retries.
func BenchmarkSimpleDBTxnUpdate(b *testing.B) {
	db := filledDB(b)
	defer closeUntimed(b, db)
	for _, tc := range []struct {
		name string
		txn  bool
	}{{"get-put", false}, {"txn", true}} {
		for _, goroutines := range []int{1, 8} {
			b.Run(fmt.Sprintf("%s/goroutines=%d", tc.name, goroutines), func(b *testing.B) {
				var runs atomic.Int64
				var next atomic.Int64
				b.ResetTimer()
				var wg sync.WaitGroup
				for g := range goroutines {
					wg.Go(func() {
						rng := rand.New(rand.NewPCG(uint64(g), 11))
						for next.Add(1) <= int64(b.N) {
							i := rng.Uint64N(fillKeys)
							k, value := fillKey(i), dbValue(i, fillValueSize)
							var err error
							check := func(v []byte) error {
								if !bytes.Equal(v, value) {
									return fmt.Errorf("key %d: wrong value", i)
								}
								return nil
							}
							if tc.txn {
								err = db.Update(10, func(tx *simpledb.Txn) error {
									runs.Add(1)
									v, err := tx.Get(k)
									if err == nil {
										err = check(v)
									}
									if err != nil {
										return err
									}
									return tx.Put(k, value)
								})
							} else {
								var v []byte
								if v, err = db.Get(k); err == nil {
									if err = check(v); err == nil {
										err = db.Put(k, value, simpledb.DefaultSync)
									}
								}
							}
							if err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				b.StopTimer()
				reportOpsPerSecond(b, b.N, "ops/s")
				if tc.txn {
					b.ReportMetric(float64(runs.Load()-int64(b.N)), "conflicts")
				}
			})
		}
	}
}
