package benchmark

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/benchmark/internal/benchdata"
	"github.com/stratadb/strata/simpledb"
	"github.com/stratadb/strata/vfs"
)

// dbValue returns benchdata's value i, n bytes long.
func dbValue(i uint64, n int) []byte {
	return benchdata.AppendValue(make([]byte, 0, n), i, n)
}

// latencies records per-op times and reports percentiles.
type latencies []time.Duration

func (l latencies) report(b *testing.B, prefix string) {
	if len(l) == 0 {
		return
	}
	s := slices.Clone(l)
	slices.Sort(s)
	pct := func(p float64) float64 { return float64(s[int(p*float64(len(s)-1))].Nanoseconds()) / 1e3 }
	b.ReportMetric(pct(0.50), prefix+"p50-µs")
	b.ReportMetric(pct(0.99), prefix+"p99-µs")
}

// dbFill describes how to fill a database: keys order(0) to order(n-1),
// key k spelled by appendKey and with benchdata's value k of valueSize
// bytes, written unsynced in batches of batchSize puts.
type dbFill struct {
	n         int
	appendKey func(dst []byte, k uint64) []byte
	valueSize int
	batchSize int
	order     func(i uint64) uint64 // nil: ascending
}

// write fills db. With batchSize 1 it is db_bench's fill: one Write of a
// one-put batch per key. Keys and values are built in reused buffers (the
// batch copies them), so that a timed fill measures the database, not
// their allocation.
func (f dbFill) write(b *testing.B, db *simpledb.DB) {
	batch := db.NewBatch()
	var key []byte
	value := make([]byte, 0, f.valueSize)
	writeOpts := simpledb.NoSync
	for i := range uint64(f.n) {
		k := i
		if f.order != nil {
			k = f.order(i)
		}
		key = f.appendKey(key[:0], k)
		if err := batch.Put(key, benchdata.AppendValue(value[:0], k, f.valueSize)); err != nil {
			b.Fatal(err)
		}
		if batch.Len() == f.batchSize || i == uint64(f.n)-1 {
			if err := db.Write(batch, writeOpts); err != nil {
				b.Fatal(err)
			}
			batch.Reset()
		}
	}
}

// openDB opens a database in dir.
func openDB(b *testing.B, dir string, opts *simpledb.Options) *simpledb.DB {
	db, err := simpledb.Open(dir, opts)
	if err != nil {
		b.Fatal(err)
	}
	return db
}

// closeUntimed stops the timer and closes db: closing flushes the memstore
// and waits for background work, which no benchmark here measures. Defer it
// after the last metric is reported.
func closeUntimed(b *testing.B, db *simpledb.DB) {
	b.StopTimer()
	if err := db.Close(); err != nil {
		b.Error(err)
	}
}

// openFilled opens a database in a fresh directory and writes latency keys
// 0..n-1 with 1 KiB values, unsynced, in batches of 100.
func openFilled(b *testing.B, opts *simpledb.Options, n int) *simpledb.DB {
	db := openDB(b, benchDir(b), opts)
	dbFill{n: n, appendKey: appendLatencyKey, valueSize: latencyValueSize, batchSize: 100}.write(b, db)
	return db
}

// latencyKey is key i of the latency benchmarks: "key" and i in decimal,
// as go-sstables names them.
func latencyKey(i uint64) []byte { return appendLatencyKey(nil, i) }

func appendLatencyKey(dst []byte, i uint64) []byte {
	return strconv.AppendUint(append(dst, "key"...), i, 10)
}

const latencyValueSize = 1024

// BenchmarkSimpleDBReadLatency is go-sstables' read latency with its loop
// bug fixed: the database really holds n keys, and one op is a Get of a
// random one of them, its value checked.
func BenchmarkSimpleDBReadLatency(b *testing.B) {
	for _, n := range []int{100, 1000, 10000, 100000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			db := openFilled(b, nil, n)
			defer closeUntimed(b, db)
			rng := rand.New(rand.NewPCG(3, uint64(n)))
			lat := make(latencies, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				i := rng.Uint64N(uint64(n))
				start := time.Now()
				v, err := db.Get(latencyKey(i))
				lat = append(lat, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
				checkValue(b, v, i, latencyValueSize)
			}
			lat.report(b, "")
		})
	}
}

// BenchmarkSimpleDBWriteLatency: the database holds n keys and one op is a
// synced Put overwriting a random one of them.
func BenchmarkSimpleDBWriteLatency(b *testing.B) {
	for _, n := range []int{100, 1000, 10000, 100000, 1000000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			db := openFilled(b, nil, n)
			defer closeUntimed(b, db)
			rng := rand.New(rand.NewPCG(4, uint64(n)))
			lat := make(latencies, 0, b.N)
			b.SetBytes(latencyValueSize)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				i := rng.Uint64N(uint64(n))
				k, v := latencyKey(i), dbValue(i, latencyValueSize)
				start := time.Now()
				err := db.Put(k, v, simpledb.DefaultSync)
				lat = append(lat, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
			}
			lat.report(b, "")
		})
	}
}

// runWriters runs b.N ops split over n goroutines.
func runWriters(b *testing.B, n int, op func(g int, i uint64)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for g := range n {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				op(g, uint64(i))
			}
		})
	}
	wg.Wait()
}

// BenchmarkSimpleDBSyncedWrites: writers goroutines each Put 1 KiB values,
// synced; group commit lets concurrent writers share fsyncs.
func BenchmarkSimpleDBSyncedWrites(b *testing.B) {
	for _, writers := range []int{1, 4, 16, 32, 64} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			db := openFilled(b, nil, 0)
			defer closeUntimed(b, db)
			b.SetBytes(latencyValueSize)
			b.ReportAllocs()
			b.ResetTimer()
			runWriters(b, writers, func(_ int, i uint64) {
				if err := db.Put(latencyKey(i), dbValue(i, latencyValueSize), simpledb.DefaultSync); err != nil {
					b.Error(err)
				}
			})
			reportOpsPerSecond(b, b.N, "ops/s")
			st := db.Stats()
			b.ReportMetric(float64(st.Writes)/float64(max(st.LogSyncs, 1)), "writes/sync")
			b.ReportMetric(float64(st.LogSyncTime.Microseconds())/float64(max(st.LogSyncs, 1)), "µs/sync")
		})
	}
}

// BenchmarkSimpleDBLogRecycling measures writes into recycled logs (the
// default: a rotation renames an obsolete log and writes over it) against
// writes into new ones (RecycledLogs: -1), in alternating turns of the same
// work on two open databases (see pair), with logs mapped (the default on
// Linux) and written with write(2) (a filesystem that cannot map them).
// Synced 1 KiB puts by 1 and by 32 writers, through 1 MiB memstores so
// that logs rotate every thousand writes, measure what recycling is for:
// an fdatasync of blocks written before commits no allocation or size
// change. The unsynced fill (16-byte keys, 100-byte values, 4 MiB
// memstores) checks what it costs fills. Before the turns each database
// rotates through a few logs, so that the recycled one has logs to reuse.
// x-baseline is recycled over new; recycled counts the rotations that
// reused a log during the turns; µs/sync and baseline-µs/sync are the mean
// time of the sync stage's fsyncs in the turns.
func BenchmarkSimpleDBLogRecycling(b *testing.B) {
	synced := func(writers int) func(b *testing.B, db *simpledb.DB, from, n int) {
		return func(b *testing.B, db *simpledb.DB, from, n int) {
			var next atomic.Int64
			var wg sync.WaitGroup
			for range writers {
				wg.Go(func() {
					for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
						k := uint64(from) + uint64(i)
						if err := db.Put(latencyKey(k), dbValue(k, latencyValueSize), simpledb.DefaultSync); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
		}
	}
	fill := func(b *testing.B, db *simpledb.DB, from, n int) {
		order := func(i uint64) uint64 { return uint64(from) + i }
		dbFill{n: n, appendKey: appendFillKey, valueSize: fillValueSize, batchSize: 1, order: order}.write(b, db)
	}
	for _, fs := range []struct {
		name string
		fs   vfs.FS
	}{{"mapped", vfs.Default}, {"write", plainFS{vfs.Default}}} {
		for _, bc := range []struct {
			name       string
			memstore   int64
			bytesPerOp int64
			turn       int // ops per turn
			write      func(b *testing.B, db *simpledb.DB, from, n int)
		}{
			{"synced/writers=1", 1 << 20, latencyValueSize, 500, synced(1)},
			{"synced/writers=32", 1 << 20, latencyValueSize, 4000, synced(32)},
			{"unsynced-fill", 4 << 20, 16 + fillValueSize, 100_000, fill},
		} {
			b.Run(fs.name+"/"+bc.name, func(b *testing.B) {
				open := func(recycled int) *simpledb.DB {
					db := openDB(b, benchDir(b), &simpledb.Options{FS: fs.fs, MemstoreSize: bc.memstore, RecycledLogs: recycled})
					// Three memstores' worth, unsynced: two rotations,
					// whose flushes leave logs to reuse.
					dbFill{n: int(3 * bc.memstore / latencyValueSize), appendKey: appendLatencyKey, valueSize: latencyValueSize, batchSize: 1}.write(b, db)
					return db
				}
				recycled, fresh := open(0), open(-1)
				defer closeUntimed(b, fresh)
				defer closeUntimed(b, recycled)
				before := [2]simpledb.Stats{recycled.Stats(), fresh.Stats()}
				p := newPair(b, bc.bytesPerOp)
				b.ResetTimer()
				for turn, done := 0, 0; done < b.N; turn, done = turn+1, done+bc.turn {
					n := min(bc.turn, b.N-done)
					// Each goes first every other turn: the second may pay
					// for the first's writeback.
					if turn%2 == 0 {
						p.candidate(func() { bc.write(b, recycled, done, n) })
						p.baseline(func() { bc.write(b, fresh, done, n) })
					} else {
						p.baseline(func() { bc.write(b, fresh, done, n) })
						p.candidate(func() { bc.write(b, recycled, done, n) })
					}
				}
				b.StopTimer()
				p.report()
				b.ReportMetric(float64(b.N)/p.ours.Seconds(), "ops/s")
				b.ReportMetric(float64(b.N)/p.base.Seconds(), "baseline-ops/s")
				syncTime := func(before, after simpledb.Stats) float64 {
					return float64((after.LogSyncTime - before.LogSyncTime).Microseconds()) / float64(max(after.LogSyncs-before.LogSyncs, 1))
				}
				after := [2]simpledb.Stats{recycled.Stats(), fresh.Stats()}
				b.ReportMetric(syncTime(before[0], after[0]), "µs/sync")
				b.ReportMetric(syncTime(before[1], after[1]), "baseline-µs/sync")
				b.ReportMetric(float64(after[0].LogsRecycled-before[0].LogsRecycled), "recycled")
				if after[1].LogsRecycled != 0 {
					b.Fatal("the baseline recycled logs")
				}
			})
		}
	}
}

// BenchmarkSimpleDBLogFileSync times what a synced log write costs the
// filesystem, below the database: write 1 KiB, or 64 KiB (a raft
// StoreLogs of 64 entries of 1 KiB), and fdatasync, into a log's file as a
// synced database opens it, with write(2) or through a mapping (and mapped
// as an unsynced database maps it), in a new file or in a reused one (an
// earlier file of the same kind, renamed and written over). Files hold a
// thousand writes, then the next is opened outside the timer. On Linux it
// reports the bytes the device wrote per write too.
func BenchmarkSimpleDBLogFileSync(b *testing.B) {
	const perFile = 1000
	mapped := vfs.Default.(vfs.MappedCreator)
	syncedLog := vfs.MappedOptions{Chunk: 1 << 20, SyncOften: true} // as a synced database maps its logs
	unsyncedLog := vfs.MappedOptions{Chunk: 1 << 20}
	for _, fc := range []struct {
		name  string
		open  func(name string) (vfs.File, error)
		reuse func(old, name string) (vfs.File, error)
	}{
		{"write/new", vfs.Default.Create, nil},
		{"write/reused", vfs.Default.Create, vfs.Default.ReuseForWrite},
		{"mapped/new", func(name string) (vfs.File, error) { return mapped.CreateMapped(name, syncedLog) }, nil},
		{"mapped/reused", func(name string) (vfs.File, error) { return mapped.CreateMapped(name, syncedLog) },
			func(old, name string) (vfs.File, error) { return mapped.ReuseMapped(old, name, syncedLog) }},
		// As an unsynced database maps its logs: pages faulted in for
		// writing, each sync writes the whole chunk mapped ahead out.
		{"mapped-populate-write/new", func(name string) (vfs.File, error) { return mapped.CreateMapped(name, unsyncedLog) }, nil},
		{"mapped-populate-write/reused", func(name string) (vfs.File, error) { return mapped.CreateMapped(name, unsyncedLog) },
			func(old, name string) (vfs.File, error) { return mapped.ReuseMapped(old, name, unsyncedLog) }},
	} {
		for _, size := range []int{latencyValueSize, 64 << 10} {
			b.Run(fmt.Sprintf("size=%d/%s", size, fc.name), func(b *testing.B) {
				dir := benchDir(b)
				record := bytes.Repeat(dbValue(0, latencyValueSize), size/latencyValueSize)
				var f vfs.File
				var name string // f's
				check := func(err error) {
					if err != nil {
						b.Fatal(err)
					}
				}
				fill := func() {
					for range perFile {
						_, err := f.Write(record)
						check(err)
					}
				}
				// next closes f and opens the i-th file in its place.
				next := func(i int) {
					prev := name
					if f != nil {
						check(f.Close())
					}
					name = filepath.Join(dir, fmt.Sprintf("%06d.log", i))
					var err error
					if fc.reuse != nil && prev != "" {
						f, err = fc.reuse(prev, name)
					} else {
						f, err = fc.open(name)
						if prev != "" {
							check(os.Remove(prev))
						}
					}
					check(err)
				}
				next(0)
				if fc.reuse != nil {
					fill() // a file to reuse
					check(f.Sync())
					next(1)
				}
				lat := make(latencies, 0, b.N)
				b.SetBytes(int64(size))
				written := deviceWritten(dir)
				var before int64
				if written != nil {
					before = written()
				}
				b.ResetTimer()
				for i := range b.N {
					if i > 0 && i%perFile == 0 {
						b.StopTimer()
						next(2 + i/perFile)
						b.StartTimer()
					}
					start := time.Now()
					_, err := f.Write(record)
					check(err)
					check(f.Sync())
					lat = append(lat, time.Since(start))
				}
				b.StopTimer()
				if written != nil {
					// What the device wrote per synced write, other work on
					// the machine included: the file's data, its metadata,
					// the journal.
					b.ReportMetric(float64(written()-before)/float64(b.N), "device-B/op")
				}
				check(f.Close())
				lat.report(b, "")
			})
		}
	}
}

// BenchmarkSimpleDBReadsDuringCompaction: one reader Gets random existing
// keys while one writer adds 128 MiB through 4 MiB memstores and 2 MiB
// tables, so the reads run across dozens of flushes and compactions. It
// reports the reads' p50 and p99; the target is p99 at most 10 times p50.
func BenchmarkSimpleDBReadsDuringCompaction(b *testing.B) {
	const base = 20000
	for range b.N {
		b.StopTimer()
		db := openFilled(b, &simpledb.Options{MemstoreSize: 4 << 20, TargetTableSize: 2 << 20, BaseLevelSize: 8 << 20}, base)
		b.StartTimer()
		var done atomic.Bool
		var lat latencies
		var wg sync.WaitGroup
		wg.Go(func() {
			defer done.Store(true)
			batch := db.NewBatch()
			for i := uint64(base); i < base+128<<10; i++ {
				batch.Put(latencyKey(i), dbValue(i, latencyValueSize))
				if batch.Len() == 10 {
					if err := db.Write(batch, simpledb.NoSync); err != nil {
						b.Error(err)
						return
					}
					batch.Reset()
				}
			}
		})
		rng := rand.New(rand.NewPCG(5, 5))
		for !done.Load() {
			i := rng.Uint64N(base)
			start := time.Now()
			v, err := db.Get(latencyKey(i))
			lat = append(lat, time.Since(start))
			if err != nil {
				b.Fatal(err)
			}
			checkValue(b, v, i, latencyValueSize)
		}
		wg.Wait()
		st := db.Stats()
		b.StopTimer()
		db.Close()
		lat.report(b, "read-")
		b.ReportMetric(float64(len(lat)), "reads")
		b.ReportMetric(float64(st.Flushes), "flushes")
		b.ReportMetric(float64(st.Compactions), "compactions")
		b.ReportMetric(float64(st.Stalls), "stalls")
		b.StartTimer()
	}
}

// The fill benchmarks use LevelDB's db_bench shape: 1M keys of 16 bytes,
// 100-byte values, unsynced writes. One op fills the whole database.
const (
	fillKeys      = 1_000_000
	fillValueSize = 100
)

// fillKey is key i of the fill benchmarks: "fillkey." and i as a
// big-endian uint64, 16 bytes.
func fillKey(i uint64) []byte { return appendFillKey(make([]byte, 0, 16), i) }

func appendFillKey(dst []byte, i uint64) []byte {
	return binary.BigEndian.AppendUint64(append(dst, "fillkey."...), i)
}

var (
	filledOnce sync.Once
	filledDir  string
)

// unsynced is the fill benchmarks' database: writes reach the operating
// system, not the disk, before they return.
var unsynced = &simpledb.Options{NoSync: true}

// benchFill times filling a fresh database with the 1M fill keys in the
// given order; opening and closing it are outside the timer.
func benchFill(b *testing.B, order func(i uint64) uint64) {
	benchFillWith(b, unsynced, order)
}

// benchFillWith is benchFill on a database with opts.
func benchFillWith(b *testing.B, opts *simpledb.Options, order func(i uint64) uint64) {
	b.SetBytes(fillKeys * (16 + fillValueSize))
	fill := dbFill{n: fillKeys, appendKey: appendFillKey, valueSize: fillValueSize, batchSize: 1, order: order}
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		db := openDB(b, benchDir(b), opts)
		b.StartTimer()
		fill.write(b, db)
		closeUntimed(b, db)
		b.StartTimer()
	}
	reportOpsPerSecond(b, b.N*fillKeys, "ops/s")
}

// BenchmarkSimpleDBFillSeq writes 1M keys in ascending order.
func BenchmarkSimpleDBFillSeq(b *testing.B) {
	benchFill(b, nil)
}

// BenchmarkSimpleDBLogAppend is FillSeq with its logs written two ways:
// copied into a mapping of space allocated ahead (vfs.MappedCreator, the
// default where the filesystem has it), and with one write(2) per
// unsynced write (a filesystem without it). The measurement behind
// simpledb's choice: see its doc.go.
func BenchmarkSimpleDBLogAppend(b *testing.B) {
	for _, fs := range []struct {
		name string
		fs   vfs.FS
	}{{"mapped", vfs.Default}, {"write", plainFS{vfs.Default}}} {
		b.Run(fs.name, func(b *testing.B) {
			benchFillWith(b, &simpledb.Options{NoSync: true, FS: fs.fs}, nil)
		})
	}
}

// plainFS hides a filesystem's vfs.MappedCreator.
type plainFS struct{ vfs.FS }

// BenchmarkSimpleDBFillRandom writes 1M keys in a seeded random order.
func BenchmarkSimpleDBFillRandom(b *testing.B) {
	perm := rand.New(rand.NewPCG(6, 6)).Perm(fillKeys)
	benchFill(b, func(i uint64) uint64 { return uint64(perm[i]) })
}

// filledDB returns a database of the 1M fill keys, built once per process
// and reopened (so reads come from tables, not the memstore's log).
func filledDB(b *testing.B) *simpledb.DB {
	filledOnce.Do(func() {
		filledDir = filepath.Join(sharedDir, "filled")
		db := openDB(b, filledDir, unsynced)
		perm := rand.New(rand.NewPCG(7, 7)).Perm(fillKeys)
		order := func(i uint64) uint64 { return uint64(perm[i]) }
		dbFill{n: fillKeys, appendKey: appendFillKey, valueSize: fillValueSize, batchSize: 100, order: order}.write(b, db)
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
	})
	return openDB(b, filledDir, unsynced)
}

// BenchmarkSimpleDBReadRandom: one op is a Get of a random one of the 1M
// keys of the reopened filled database, its value checked.
func BenchmarkSimpleDBReadRandom(b *testing.B) {
	db := filledDB(b)
	defer closeUntimed(b, db)
	readRandom(b, db)
}

// readRandom times b.N Gets of random fill keys of db, checking each value.
func readRandom(b *testing.B, db *simpledb.DB) {
	rng := rand.New(rand.NewPCG(8, 8))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		i := rng.Uint64N(fillKeys)
		v, err := db.Get(fillKey(i))
		if err != nil {
			b.Fatal(err)
		}
		checkValue(b, v, i, fillValueSize)
	}
	b.StopTimer()
	reportOpsPerSecond(b, b.N, "ops/s")
}

// BenchmarkSimpleDBGetAppendValue reads random keys of the filled database
// three ways: Get (a new copy of each value), AppendValue into one reused
// buffer, and Has (no value). The key buffer is reused throughout, so the
// allocations reported are the read's own.
func BenchmarkSimpleDBGetAppendValue(b *testing.B) {
	db := filledDB(b)
	defer closeUntimed(b, db)
	for _, read := range []struct {
		name string
		read func(buf, key []byte) ([]byte, error)
	}{
		{"Get", func(_, key []byte) ([]byte, error) { return db.Get(key) }},
		{"AppendValue", func(buf, key []byte) ([]byte, error) { return db.AppendValue(buf[:0], key) }},
		{"Has", func(buf, key []byte) ([]byte, error) {
			ok, err := db.Has(key)
			if err == nil && !ok {
				err = simpledb.ErrNotFound
			}
			return buf, err
		}},
	} {
		b.Run(read.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(8, 8))
			key, buf := make([]byte, 0, 16), make([]byte, 0, fillValueSize)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				i := rng.Uint64N(fillKeys)
				key = appendFillKey(key[:0], i)
				v, err := read.read(buf, key)
				if err != nil {
					b.Fatal(err)
				}
				if read.name != "Has" {
					checkValue(b, v, i, fillValueSize)
				}
			}
			reportOpsPerSecond(b, b.N, "ops/s")
		})
	}
}

// manyTablesDir holds the 1M fill keys, in a seeded random order, compacted
// into 256 KiB tables: hundreds of them, for the table cache. Built once
// per process.
var (
	manyTablesOnce sync.Once
	manyTablesDir  string
)

const manyTablesSize = 256 << 10

func manyTablesDB(b *testing.B, maxOpenFiles int) *simpledb.DB {
	manyTablesOnce.Do(func() {
		manyTablesDir = filepath.Join(sharedDir, "many-tables")
		db := openDB(b, manyTablesDir, &simpledb.Options{NoSync: true, TargetTableSize: manyTablesSize, DisableAutoCompaction: true})
		perm := rand.New(rand.NewPCG(7, 7)).Perm(fillKeys)
		order := func(i uint64) uint64 { return uint64(perm[i]) }
		dbFill{n: fillKeys, appendKey: appendFillKey, valueSize: fillValueSize, batchSize: 100, order: order}.write(b, db)
		if err := db.Compact(); err != nil {
			b.Fatal(err)
		}
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
	})
	return openDB(b, manyTablesDir, &simpledb.Options{NoSync: true, TargetTableSize: manyTablesSize, MaxOpenFiles: maxOpenFiles})
}

// BenchmarkSimpleDBReadRandomMaxOpenFiles: one op is a Get of a random one
// of the 1M fill keys, its value checked, in a database of hundreds of
// tables opened with MaxOpenFiles at its minimum, 64, and at its default,
// 1000, which holds them all open. With 64, most Gets reopen a table
// (reopens/op); the block cache keeps its blocks across reopens.
func BenchmarkSimpleDBReadRandomMaxOpenFiles(b *testing.B) {
	for _, maxOpen := range []int{simpledb.MinMaxOpenFiles, 1000} {
		b.Run(fmt.Sprintf("max-open-files=%d", maxOpen), func(b *testing.B) {
			db := manyTablesDB(b, maxOpen)
			defer closeUntimed(b, db)
			before := db.Stats()
			readRandom(b, db)
			st := db.Stats()
			b.ReportMetric(float64(st.Levels[1].Tables+st.Levels[2].Tables), "tables")
			b.ReportMetric(float64(st.OpenTables), "open-tables")
			b.ReportMetric(float64(st.TableReopens-before.TableReopens)/float64(b.N), "reopens/op")
		})
	}
}

// BenchmarkSimpleDBScan: one op scans the whole filled database, checking
// every value.
func BenchmarkSimpleDBScan(b *testing.B) {
	db := filledDB(b)
	defer closeUntimed(b, db)
	b.SetBytes(fillKeys * (16 + fillValueSize))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		scanFilled(b, db, false)
	}
	reportOpsPerSecond(b, b.N*fillKeys, "entries/s")
}

// BenchmarkSimpleDBScanBackward: one op scans the whole filled database
// from the last key down, checking every value, in alternating turns with
// a forward scan, the baseline (see pair): x-baseline is the backward
// scan's speed over the forward one's (target ≥ 0.7).
func BenchmarkSimpleDBScanBackward(b *testing.B) {
	db := filledDB(b)
	defer closeUntimed(b, db)
	p := newPair(b, fillKeys*(16+fillValueSize))
	for range b.N {
		p.candidate(func() { scanFilled(b, db, true) })
		p.baseline(func() { scanFilled(b, db, false) })
	}
	p.report()
	p.reportRate(fillKeys, "entries/s")
}

// scanFilled scans the whole filled database, forward or backward, and
// checks every key and value.
func scanFilled(b *testing.B, db *simpledb.DB, backward bool) {
	it, err := db.NewIterator(nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer it.Close()
	entries, want, step := it.All(), uint64(0), uint64(1)
	if backward {
		entries, want, step = it.Backward(), fillKeys-1, ^uint64(0) // -1
	}
	n := 0
	for k, v := range entries {
		i := binary.BigEndian.Uint64(k[8:])
		if i != want {
			b.Fatalf("scan (backward %v): key %d where %d was due", backward, i, want)
		}
		checkValue(b, v, i, fillValueSize)
		want += step
		n++
	}
	if err := it.Err(); err != nil {
		b.Fatal(err)
	}
	if n != fillKeys {
		b.Fatalf("scanned %d keys", n)
	}
}

// BenchmarkSimpleDBMixed: 4 goroutines, each op a Get or an unsynced
// overwrite (half each) of a random key of the filled database.
func BenchmarkSimpleDBMixed(b *testing.B) {
	db := filledDB(b)
	defer closeUntimed(b, db)
	const workers = 4
	lats := make([]latencies, workers)
	b.ReportAllocs()
	b.ResetTimer()
	runWriters(b, workers, func(g int, i uint64) {
		k := (i*0x9E3779B97F4A7C15 + uint64(g)) % fillKeys
		if i%2 == 0 {
			t := time.Now()
			v, err := db.Get(fillKey(k))
			lats[g] = append(lats[g], time.Since(t))
			if err != nil {
				b.Error(err)
				return
			}
			if !benchdata.IsValue(v, k, fillValueSize) {
				b.Errorf("key %d: wrong value", k)
			}
			return
		}
		if err := db.Put(fillKey(k), dbValue(k, fillValueSize), simpledb.DefaultSync); err != nil {
			b.Error(err)
		}
	})
	reportOpsPerSecond(b, b.N, "ops/s")
	slices.Concat(lats...).report(b, "read-")
}
