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
// It also reports the process's peak open file descriptors and the peak of
// Stats.OpenTables, both sampled every 10 ms, and the tables reads
// reopened. -max-open-files sets Options.MaxOpenFiles; -reopen closes the
// loaded database and opens it again before the reads, so that they read a
// database opened under that bound, as a restarted process would.
//
//	go run ./benchmark/scale                  # tiny to large
//	go run ./benchmark/scale -config huge     # 10M keys, 10 GB
//	go run ./benchmark/scale -config all
//	go run ./benchmark/scale -config huge -max-open-files 64 -reopen
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
	"sync"
	"sync/atomic"
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
	maxOpenFiles := flag.Int("max-open-files", 0, "Options.MaxOpenFiles (0: the default, 1000)")
	reopen := flag.Bool("reopen", false, "close and reopen the database between the load and the reads")
	keep := flag.Bool("keep", false, "keep each database after its run, and print its directory (to inspect it, with cmd/strata say)")
	flag.Parse()

	var selected []config
	switch *which {
	case "default":
		selected = configs[:4]
	case "all":
		selected = configs
	default:
		for _, name := range strings.Split(*which, ",") {
			found := false
			for _, c := range configs {
				if c.name == name {
					selected, found = append(selected, c), true
				}
			}
			if !found {
				log.Fatalf("unknown configuration %q", name)
			}
		}
	}
	for _, c := range selected {
		debug.FreeOSMemory()
		peakReset := resetPeakRSS()
		run := run{config: c, opts: &simpledb.Options{MaxOpenFiles: *maxOpenFiles}, reopen: *reopen, keep: *keep}
		if err := run.bench(*dirFlag, peakReset); err != nil {
			log.Fatalf("%s: %v", c.name, err)
		}
	}
}

func key(i uint64) []byte { return binary.BigEndian.AppendUint64(nil, i) }

// value is key i's value, benchdata's value i, built in dst's space.
func value(dst []byte, i uint64, n int) []byte {
	return benchdata.AppendValue(dst[:0], i, n)
}

// run is one configuration's run, with the database's options.
type run struct {
	config
	opts   *simpledb.Options
	reopen bool
	keep   bool
}

func (r run) bench(parent string, peakReset bool) error {
	c := r.config
	dir, err := os.MkdirTemp(parent, "strata-scale-"+c.name)
	if err != nil {
		return err
	}
	if r.keep {
		defer fmt.Printf("kept %s\n", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	db, err := simpledb.Open(dir, r.opts)
	if err != nil {
		return err
	}
	defer func() { db.Close() }()
	files := sampleOpenFiles(func() int { return db.Stats().OpenTables })

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
		if err := db.Write(batch, unsynced); err != nil {
			return err
		}
	}
	if err := db.Flush(); err != nil {
		return err
	}
	report("sequential_write", c.keys, time.Since(start), rowBytes)
	if r.reopen {
		files.stop()
		if err := db.Close(); err != nil {
			return err
		}
		start := time.Now()
		if db, err = simpledb.Open(dir, r.opts); err != nil {
			return err
		}
		fmt.Printf("reopened in %.2fs\n", time.Since(start).Seconds())
		files = sampleOpenFiles(func() int { return db.Stats().OpenTables })
	}

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

	files.stop()
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
	phase := ""
	if r.reopen {
		phase = " since the reopen"
	}
	fmt.Printf("Open files%s: peak %d descriptors (the process's), peak %d tables (MaxOpenFiles %s), %d tables reopened by reads\n",
		phase, files.peakFDs.Load(), files.peakTables.Load(), maxOpenFilesName(r.opts.MaxOpenFiles), st.TableReopens)
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

func maxOpenFilesName(n int) string {
	if n == 0 {
		return "default"
	}
	return fmt.Sprint(n)
}

// fileSampler records the most file descriptors the process had open, and
// the most tables the database had open, sampled every 10 ms until stop.
type fileSampler struct {
	peakFDs, peakTables atomic.Int64
	done                chan struct{}
	wg                  sync.WaitGroup
}

func sampleOpenFiles(openTables func() int) *fileSampler {
	s := &fileSampler{done: make(chan struct{})}
	sample := func() {
		// ReadDir's own descriptor of the directory is counted too.
		if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
			storeMax(&s.peakFDs, int64(len(fds)))
		}
		storeMax(&s.peakTables, int64(openTables()))
	}
	sample()
	s.wg.Go(func() {
		defer sample()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-s.done:
				return
			case <-tick.C:
				sample()
			}
		}
	})
	return s
}

// stop ends the sampling, after a last sample.
func (s *fileSampler) stop() {
	close(s.done)
	s.wg.Wait()
}

func storeMax(v *atomic.Int64, n int64) {
	for old := v.Load(); n > old && !v.CompareAndSwap(old, n); old = v.Load() {
	}
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
