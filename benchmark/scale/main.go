// Command scale loads a Strata database with ascending 8-byte keys and
// reads them back three ways, printing one table per configuration:
//
//	Benchmark: large
//	Keys: 1000000, Value size: 1000 bytes, Total data: 1008.0 MB
//	sequential_write   1000000 ops in 6.70s (149290 ops/sec, 6.70 µs/op, 150.5 MB/s)
//	sequential_read      10000 ops in ...
//	random_read          10000 ops in ...
//	zipfian_read         10000 ops in ...
//	checkpoint           1018.4 MB in 0.009s
//	L0 SSTables: 5
//	L1 SSTables: 1
//
// Writes are unsynced Puts in key order; sequential_write includes the final
// flush. Reads are the first N keys, uniformly random keys, and a scrambled
// Zipfian (constant 0.99, as YCSB defines it). Every read is checked against
// the value written. checkpoint is a DB.Checkpoint of the loaded database
// into a directory beside it (tables hard-linked), its size the tables';
// the checkpoint is then opened read-only and its first and last keys
// checked, untimed. Each configuration reports its peak resident memory:
// before each one, freed memory goes back to the operating system and the
// peak is reset to the current size (Linux's /proc/self/clear_refs; where
// that is missing the figure is the whole run's peak so far, and says so).
// Values are benchdata's, the same as the benchmark tables write.
//
//	go run ./benchmark/scale                  # tiny to large
//	go run ./benchmark/scale -config huge     # 10M keys, 10 GB
//	go run ./benchmark/scale -config all
package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/stratadb/strata/benchmark/internal/benchdata"
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
		debug.FreeOSMemory()
		peakReset := resetPeakRSS()
		if err := bench(c, *dirFlag, peakReset); err != nil {
			log.Fatalf("%s: %v", c.name, err)
		}
	}
}

func key(i uint64) []byte { return binary.BigEndian.AppendUint64(nil, i) }

// value is key i's value, benchdata's value i, built in dst's space.
func value(dst []byte, i uint64, n int) []byte {
	return benchdata.AppendValue(dst[:0], i, n)
}

func bench(c config, parent string, peakReset bool) error {
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

	unsynced := simpledb.NoSync
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
		if !bytes.Equal(v, value(buf, i, c.valueSize)) {
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

	if err := timeCheckpoint(db, parent, c); err != nil {
		return err
	}

	st := db.Stats()
	for level, l := range st.Levels {
		if l.Tables > 0 {
			fmt.Printf("L%d SSTables: %d\n", level, l.Tables)
		}
	}
	scope := ""
	if !peakReset {
		scope = " (of the whole run so far: the peak could not be reset)"
	}
	fmt.Printf("Peak RSS: %.1f MB%s (write amplification %.1f, %d flushes, %d compactions, %d stalls)\n\n",
		peakRSS()/1e6, scope, st.WriteAmplification, st.Flushes, st.Compactions, st.Stalls)
	return nil
}

// timeCheckpoint times a Checkpoint of the loaded database into a new
// directory beside it, where its tables are hard-linked, and checks the
// checkpoint's first and last keys.
func timeCheckpoint(db *simpledb.DB, parent string, c config) error {
	tmp, err := os.MkdirTemp(parent, "strata-scale-checkpoint-"+c.name)
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "db")
	start := time.Now()
	if err := db.Checkpoint(dir); err != nil {
		return err
	}
	took := time.Since(start)
	var size int64
	for _, l := range db.Stats().Levels {
		size += l.Bytes
	}
	fmt.Printf("%-18s %8.1f MB in %.3fs\n", "checkpoint", float64(size)/1e6, took.Seconds())

	ckpt, err := simpledb.Open(dir, &simpledb.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer ckpt.Close()
	buf := make([]byte, 0, c.valueSize)
	for _, i := range []uint64{0, c.keys - 1} {
		v, err := ckpt.Get(key(i))
		if err != nil {
			return fmt.Errorf("checkpoint: get key %d: %w", i, err)
		}
		if !bytes.Equal(v, value(buf, i, c.valueSize)) {
			return fmt.Errorf("checkpoint: key %d: wrong value", i)
		}
	}
	return nil
}

func uniform(n uint64) func(uint64) uint64 {
	rng := rand.New(rand.NewPCG(7, 7))
	return func(uint64) uint64 { return rng.Uint64N(n) }
}

func zipfianKeys(n uint64) func(uint64) uint64 {
	z := benchdata.NewScrambledZipfian(rand.New(rand.NewPCG(8, 8)), n)
	return func(uint64) uint64 { return z.Next() }
}

func report(name string, ops uint64, d time.Duration, rowBytes int) {
	s := d.Seconds()
	fmt.Printf("%-18s %8d ops in %.2fs (%.0f ops/sec, %.2f µs/op, %.1f MB/s)\n",
		name, ops, s, float64(ops)/s, s*1e6/float64(ops), float64(ops)*float64(rowBytes)/s/1e6)
}

// resetPeakRSS resets the process's peak resident set size (VmHWM) to its
// current size, by writing 5 to /proc/self/clear_refs (Linux 4.0 and
// later). It reports whether it could.
func resetPeakRSS() bool {
	f, err := os.OpenFile("/proc/self/clear_refs", os.O_WRONLY, 0)
	if err != nil {
		return false
	}
	_, err = f.WriteString("5")
	return f.Close() == nil && err == nil
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
