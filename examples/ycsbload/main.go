// Command ycsbload is a YCSB-style load and run against simpledb, small
// enough to run in seconds: it loads 20,000 records of ten 100-byte fields
// (1 KB, as YCSB's default record), then runs 20,000 operations of workload
// A (half reads, half updates) from 8 goroutines, and prints the
// throughput of each phase. benchmark/ycsb runs the real YCSB client.
package main

import (
	"bytes"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratadb/strata/simpledb"
)

const (
	records = 20000
	ops     = 20000
	workers = 8
	fields  = 10
	fieldSz = 100
)

func key(i int) []byte { return fmt.Appendf(nil, "user%08d", i) }

// record is row i at version v: ten fields, each naming its row and version.
func record(i, v int) []byte {
	var b bytes.Buffer
	for f := range fields {
		field := fmt.Sprintf("field%d=%d.%d:", f, i, v)
		b.WriteString(field)
		b.Write(bytes.Repeat([]byte{'x'}, fieldSz-len(field)))
	}
	return b.Bytes()
}

func main() {
	dir, err := os.MkdirTemp("", "strata-ycsbload-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := simpledb.Open(dir, &simpledb.Options{NoSync: true})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	start := time.Now()
	for i := range records {
		if err := db.Put(key(i), record(i, 0), simpledb.DefaultSync); err != nil {
			log.Fatal(err)
		}
	}
	report("load", records, time.Since(start))

	var done, reads, updates atomic.Int64
	var wg sync.WaitGroup
	start = time.Now()
	for w := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 42))
			for done.Add(1) <= ops {
				i := rng.IntN(records)
				if rng.IntN(2) == 0 {
					v, err := db.Get(key(i))
					if err != nil || len(v) != fields*fieldSz || !bytes.HasPrefix(v, fmt.Appendf(nil, "field0=%d.", i)) {
						log.Fatalf("read of record %d: %v", i, err)
					}
					reads.Add(1)
				} else {
					if err := db.Put(key(i), record(i, w+1), simpledb.DefaultSync); err != nil {
						log.Fatal(err)
					}
					updates.Add(1)
				}
			}
		})
	}
	wg.Wait()
	report(fmt.Sprintf("run (%d reads, %d updates, %d goroutines)", reads.Load(), updates.Load(), workers), ops, time.Since(start))
	st := db.Stats()
	fmt.Printf("levels: L0 %d tables, L1 %d; memstore %d KB\n", st.Levels[0].Tables, st.Levels[1].Tables, st.MemstoreBytes>>10)
}

func report(phase string, n int, d time.Duration) {
	fmt.Printf("%-45s %6d ops in %6.3fs: %8.0f ops/s\n", phase, n, d.Seconds(), float64(n)/d.Seconds())
}
