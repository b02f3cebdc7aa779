package benchmark

import (
	"math/rand/v2"
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
