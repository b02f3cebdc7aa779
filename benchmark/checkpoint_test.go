package benchmark

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/stratadb/strata/simpledb"
)

// The checkpoint benchmark copies the scale tool's large database: 1M
// ascending 8-byte keys with 1000-byte values, 1 GB, built once per
// process and reopened by each sub-benchmark.
const (
	checkpointKeys      = 1_000_000
	checkpointValueSize = 1000
)

var (
	checkpointOnce sync.Once
	checkpointSrc  string
)

// appendScaleKey spells key k as the scale tool does: big-endian, 8 bytes.
func appendScaleKey(dst []byte, k uint64) []byte { return binary.BigEndian.AppendUint64(dst, k) }

// checkpointSource returns the directory of the database to checkpoint,
// building it the first time.
func checkpointSource(b *testing.B) string {
	checkpointOnce.Do(func() {
		checkpointSrc = filepath.Join(sharedDir, "checkpoint-source")
		db := openDB(b, checkpointSrc, unsynced)
		dbFill{n: checkpointKeys, appendKey: appendScaleKey, valueSize: checkpointValueSize, batchSize: 100}.write(b, db)
		if err := db.Flush(); err != nil {
			b.Fatal(err)
		}
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
	})
	return checkpointSrc
}

// BenchmarkSimpleDBCheckpoint: one op is a Checkpoint of the 1 GB database
// into a new directory on the same filesystem, so its tables are
// hard-linked. "flushed" has every write in tables, as the scale tool
// leaves it; "memstore-32MB" has 32K more writes of 1 KB (overwrites of
// the first keys with their own values) in the memstore, which the
// checkpoint writes out as a table. The first checkpoint of each run is
// opened read-only and read back, untimed.
func BenchmarkSimpleDBCheckpoint(b *testing.B) {
	for _, tc := range []struct {
		name     string
		memstore int // writes left in the memstore
	}{
		{"flushed", 0},
		{"memstore-32MB", 32 << 10},
	} {
		b.Run(tc.name, func(b *testing.B) {
			db := openDB(b, checkpointSource(b), unsynced)
			defer closeUntimed(b, db)
			if err := db.Flush(); err != nil {
				b.Fatal(err)
			}
			dbFill{n: tc.memstore, appendKey: appendScaleKey, valueSize: checkpointValueSize, batchSize: 100}.write(b, db)
			st := db.Stats()
			var size int64
			for _, l := range st.Levels {
				size += l.Bytes
			}
			parent := benchDir(b)
			b.ResetTimer()
			for i := range b.N {
				dir := filepath.Join(parent, strconv.Itoa(i))
				if err := db.Checkpoint(dir); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if i == 0 {
					checkCheckpoint(b, dir)
				}
				if err := os.RemoveAll(dir); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.StopTimer()
			b.ReportMetric(float64(size)/1e6, "table-MB")
			b.ReportMetric(float64(st.MemstoreBytes)/1e6, "memstore-MB")
		})
	}
}

// checkCheckpoint opens a checkpoint of the benchmark's database read-only
// and checks its first and last keys.
func checkCheckpoint(b *testing.B, dir string) {
	db, err := simpledb.Open(dir, &simpledb.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	for _, k := range []uint64{0, checkpointKeys - 1} {
		v, err := db.Get(appendScaleKey(nil, k))
		if err != nil {
			b.Fatal(err)
		}
		checkValue(b, v, k, checkpointValueSize)
	}
}
