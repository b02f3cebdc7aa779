package benchmark

import (
	"testing"

	"github.com/stratadb/strata/simpledb"
)

// BenchmarkSimpleDBFollower follows the checkpoint benchmark's 1 GB
// database while it is open for writing: "open" is a follower's Open and
// Close (the manifest, every table opened, the logs replayed); "catchup"
// a CatchUp with nothing changed since the last, which reads the
// manifest and the logs again but keeps the tables it holds. Each runs
// with every write in tables ("flushed") and with 32 MB of writes in the
// writer's log ("memstore-32MB"), which each replays into a memstore.
func BenchmarkSimpleDBFollower(b *testing.B) {
	for _, tc := range []struct {
		name     string
		memstore int // writes left in the log
	}{
		{"flushed", 0},
		{"memstore-32MB", 32 << 10},
	} {
		b.Run(tc.name, func(b *testing.B) {
			dir := checkpointSource(b)
			db := openDB(b, dir, unsynced)
			defer closeUntimed(b, db)
			if err := db.Flush(); err != nil {
				b.Fatal(err)
			}
			dbFill{n: tc.memstore, appendKey: appendScaleKey, valueSize: checkpointValueSize, batchSize: 100}.write(b, db)
			follow := &simpledb.Options{Follow: true}
			b.Run("open", func(b *testing.B) {
				for range b.N {
					f := openDB(b, dir, follow)
					if err := f.Close(); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("catchup", func(b *testing.B) {
				f := openDB(b, dir, follow)
				defer f.Close()
				b.ResetTimer()
				for range b.N {
					if err := f.CatchUp(); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				v, err := f.Get(appendScaleKey(nil, checkpointKeys-1))
				if err != nil {
					b.Fatal(err)
				}
				checkValue(b, v, checkpointKeys-1, checkpointValueSize)
			})
		})
	}
}
