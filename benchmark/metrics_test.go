package benchmark

import (
	"testing"

	"github.com/stratadb/strata/simpledb"
)

// BenchmarkSimpleDBMetrics measures DB.Metrics, and with String its table,
// on a database of 100,000 keys over several levels: what a dashboard
// polling every second pays.
func BenchmarkSimpleDBMetrics(b *testing.B) {
	db := openFilled(b, &simpledb.Options{MemstoreSize: simpledb.MinMemstoreSize}, 100_000)
	defer closeUntimed(b, db)
	b.Run("Metrics", func(b *testing.B) {
		for b.Loop() {
			db.Metrics()
		}
	})
	b.Run("String", func(b *testing.B) {
		for b.Loop() {
			_ = db.Metrics().String()
		}
	})
}
