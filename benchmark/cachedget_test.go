package benchmark

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stratadb/strata/simpledb"
)

// cachedBudget is BenchmarkSimpleDBCachedGet's memory budget: enough that
// every block of the filled database's 1M keys (about 110 MiB of tables)
// stays in the block cache beside the memstores.
const cachedBudget = 384 << 20

// BenchmarkSimpleDBCachedGet is a point read at the speed of memory: the
// 1M fill keys of 100-byte values, reopened with a budget whose cache
// holds all their blocks, each key read once before the timer so that
// every block is cached; one op is a Get of a random key, its value
// checked, timed alone (p50-µs and p99-µs: the engine call) and with the
// loop (ns/op); misses/op counts the block cache's misses, which should
// be none.
func BenchmarkSimpleDBCachedGet(b *testing.B) {
	if err := filledDB(b).Close(); err != nil { // reopened below with the budget
		b.Fatal(err)
	}
	db := openDB(b, filledDir, &simpledb.Options{NoSync: true, MemoryBudget: cachedBudget})
	defer closeUntimed(b, db)
	// The fill's last tables reach their level in a compaction the open
	// starts: done first, so that no table the warm-up cached is replaced.
	if err := db.Compact(); err != nil {
		b.Fatal(err)
	}
	key := make([]byte, 0, 16)
	for i := range uint64(fillKeys) {
		key = appendFillKey(key[:0], i)
		if _, err := db.Get(key); err != nil {
			b.Fatal(err)
		}
	}
	before := db.Stats()
	rng := rand.New(rand.NewPCG(8, 8))
	// b.Loop runs the setup above once, however many rounds size b.N:
	// each would reopen the database and read its 1M keys again.
	lat := make(latencies, 0, 1<<22)
	b.ReportAllocs()
	for b.Loop() {
		i := rng.Uint64N(fillKeys)
		key = appendFillKey(key[:0], i)
		start := time.Now()
		v, err := db.Get(key)
		if len(lat) < cap(lat) {
			lat = append(lat, time.Since(start))
		}
		if err != nil {
			b.Fatal(err)
		}
		checkValue(b, v, i, fillValueSize)
	}
	lat.report(b, "")
	// Every block cached: a miss here means the budget did not hold them.
	b.ReportMetric(float64(db.Stats().BlockCacheMisses-before.BlockCacheMisses)/float64(b.N), "misses/op")
}
