// Command scale loads a Strata database with ascending 8-byte keys and
// reads them back three ways, printing one table per configuration:
//
//	Benchmark: large
//	Keys: 1000000, Value size: 1000 bytes, Total data: 1008.0 MB
//	sequential_write   1000000 ops in 6.70s (149290 ops/sec, 6.70 µs/op, 150.5 MB/s)
//	sequential_read      10000 ops in ...
//	random_read          10000 ops in ...
//	zipfian_read         10000 ops in ...
//	L0 SSTables: 5
//	L1 SSTables: 1
//
// Writes are unsynced Puts in key order; sequential_write includes the final
// flush. Reads are the first N keys, uniformly random keys, and a scrambled
// Zipfian (constant 0.99, as YCSB defines it). Every read is checked against
// the value written. Each configuration reports the process's peak resident
// memory.
//
//	go run ./benchmark/scale                  # tiny to large
//	go run ./benchmark/scale -config huge     # 10M keys, 10 GB
//	go run ./benchmark/scale -config all
package main

import (
	"bufio"
	"encoding/binary"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/stratadb/strata/simpledb"
)

type config struct {
	name      string
	keys      uint64
	valueSize int
	reads     int
}

var configs = []config{
	{"tiny", 1_000, 100, 10_000},
	{"small", 100_000, 100, 10_000},
	{"medium", 1_000_000, 100, 10_000},
	{"large", 1_000_000, 1000, 10_000},
	{"large_heavy_reads", 1_000_000, 1000, 100_000},
	{"large_heavy_reads_and_writes", 1_000_000, 8000, 100_000},
	{"huge", 10_000_000, 1000, 10_000},
}

func main() {
	which := flag.String("config", "default", "configurations to run: default (tiny to large), all, or a comma-separated list of names")
	dirFlag := flag.String("dir", "", "directory for the databases (default: a temporary directory)")
	flag.Parse()

	var run []config
	switch *which {
	case "default":
		run = configs[:4]
	case "all":
		run = configs
	default:
		for _, name := range strings.Split(*which, ",") {
			found := false
			for _, c := range configs {
				if c.name == name {
					run, found = append(run, c), true
				}
			}
			if !found {
				log.Fatalf("unknown configuration %q", name)
			}
		}
	}
	for _, c := range run {
		if err := bench(c, *dirFlag); err != nil {
			log.Fatalf("%s: %v", c.name, err)
		}
	}
}

// valuePool is seeded random bytes that values are cut from.
var valuePool = func() []byte {
	rng := rand.New(rand.NewPCG(42, 42))
	b := make([]byte, 1<<20)
	for i := 0; i < len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], rng.Uint64())
	}
	return b
}()

func key(i uint64) []byte { return binary.BigEndian.AppendUint64(nil, i) }

// value is key i's value: i, then pool bytes at an offset that depends on i.
func value(dst []byte, i uint64, n int) []byte {
	dst = binary.BigEndian.AppendUint64(dst[:0], i)
	off := int(i*7919) % (len(valuePool) - n)
	return append(dst, valuePool[off:off+n-8]...)
}

func bench(c config, parent string) error {
	dir, err := os.MkdirTemp(parent, "strata-scale-"+c.name)
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	db, err := simpledb.Open(dir, nil)
	if err != nil {
		return err
	}
	defer db.Close()

	rowBytes := 8 + c.valueSize
	fmt.Printf("Benchmark: %s\n", c.name)
	fmt.Printf("Keys: %d, Value size: %d bytes, Total data: %.1f MB\n", c.keys, c.valueSize, float64(c.keys)*float64(rowBytes)/1e6)

	unsynced := &simpledb.WriteOptions{Sync: false}
	batch := db.NewBatch()
	buf := make([]byte, 0, c.valueSize)
	start := time.Now()
	for i := range c.keys {
		batch.Reset()
		if err := batch.Put(key(i), value(buf, i, c.valueSize)); err != nil {
			return err
		}
		if err := db.WriteWithOptions(batch, unsynced); err != nil {
			return err
		}
	}
	if err := db.Flush(); err != nil {
		return err
	}
	report("sequential_write", c.keys, time.Since(start), rowBytes)

	check := func(i uint64) error {
		v, err := db.Get(key(i))
		if err != nil {
			return fmt.Errorf("get key %d: %w", i, err)
		}
		if len(v) != c.valueSize || binary.BigEndian.Uint64(v) != i || string(v) != string(value(buf, i, c.valueSize)) {
			return fmt.Errorf("key %d: wrong value", i)
		}
		return nil
	}
	reads := uint64(c.reads)
	for _, pattern := range []struct {
		name string
		next func(j uint64) uint64
	}{
		{"sequential_read", func(j uint64) uint64 { return j % c.keys }},
		{"random_read", uniform(c.keys)},
		{"zipfian_read", zipfianKeys(c.keys)},
	} {
		start := time.Now()
		for j := range reads {
			if err := check(pattern.next(j)); err != nil {
				return fmt.Errorf("%s: %w", pattern.name, err)
			}
		}
		report(pattern.name, reads, time.Since(start), rowBytes)
	}

	st := db.Stats()
	for level, l := range st.Levels {
		if l.Tables > 0 {
			fmt.Printf("L%d SSTables: %d\n", level, l.Tables)
		}
	}
	fmt.Printf("Peak RSS: %.1f MB (write amplification %.1f, %d flushes, %d compactions, %d stalls)\n\n",
		peakRSS()/1e6, st.WriteAmplification, st.Flushes, st.Compactions, st.Stalls)
	return nil
}

func uniform(n uint64) func(uint64) uint64 {
	rng := rand.New(rand.NewPCG(7, 7))
	return func(uint64) uint64 { return rng.Uint64N(n) }
}

func zipfianKeys(n uint64) func(uint64) uint64 {
	z := newScrambledZipfian(rand.New(rand.NewPCG(8, 8)), n)
	return func(uint64) uint64 { return z.next() }
}

func report(name string, ops uint64, d time.Duration, rowBytes int) {
	s := d.Seconds()
	fmt.Printf("%-18s %8d ops in %.2fs (%.0f ops/sec, %.2f µs/op, %.1f MB/s)\n",
		name, ops, s, float64(ops)/s, s*1e6/float64(ops), float64(ops)*float64(rowBytes)/s/1e6)
}

// peakRSS returns the process's peak resident set size in bytes (VmHWM),
// or 0 where /proc is missing.
func peakRSS() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			var kb float64
			fmt.Sscanf(strings.TrimSpace(rest), "%f", &kb)
			return kb * 1024
		}
	}
	return 0
}
