package main

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratadb/strata/benchmark/internal/benchdata"
)

// params size a workload; the parent passes the same to every child. The
// child adds where a workload may put a second database.
type params struct {
	keys      int           // keys in the database: written by fills, read by reads
	valueSize int           // value length of the fill, read, scan and mixed workloads (-value-size)
	reads     int           // Gets of readrandom and readzipf
	duration  time.Duration // length of the synced and mixed workloads

	// spare is a directory that does not exist yet, beside the database's
	// on the same filesystem and removed with it, for the checkpoint's
	// copy; open opens the workload's engine, with its settings, on a
	// directory. The child sets both.
	spare string
	open  func(dir string) (Engine, error)
}

// measure is what one timed workload did.
type measure struct {
	ops     int64         // operations (or entries, for scan; commits, for a transaction workload) done
	elapsed time.Duration // wall time of the timed part
	reads   *latencies    // the reads' latencies, where a workload times them
	aborts  int64         // transactions that aborted on a conflict and were retried
}

// workload is one row of the tables.
type workload struct {
	name  string // as written in flags and JSON
	title string // as written in the tables
	unit  string
	// filled workloads run on a database that first holds every key,
	// written unsynced in fillOrder, closed and reopened: that fill is
	// timed apart and never counts in the workload's figure.
	filled bool
	// sync opens the engine for synced writes (after the fill, if any).
	sync bool
	// data is what the database holds when the run closes it, which says
	// the length of the fill's values and what -costs sets the run's disk
	// writes and the database's size against.
	data dataKind
	// needs lists the optional interfaces run asserts e to, which the
	// child checks first.
	needs []capability
	run   func(e Engine, p params) (measure, error)
}

// workloads lists every workload in table order.
var workloads = []workload{
	{"fillseq", "fillseq", "ops/s", false, false, fillOnly, nil, runFillSeq},
	{"fillrandom", "fillrandom", "ops/s", false, false, fillOnly, nil, runFillRandom},
	{"readrandom", "readrandom", "ops/s", true, false, fillOnly, nil, runReadRandom},
	{"readzipf", "readzipf (scrambled)", "ops/s", true, false, fillOnly, nil, runReadZipf},
	{"scan", "scan", "entries/s", true, false, fillOnly, []capability{canScan}, runScan},
	{"scanreverse", "scan backward", "entries/s", true, false, fillOnly, []capability{canScanReverse}, runScanReverse},
	{"checkpoint", "checkpoint", "checkpoints/s", true, false, fillKept, []capability{canCheckpoint}, runCheckpoint},
	{"deleterange", "deleterange all, then scan", "ops/s", true, false, otherData, []capability{canDeleteRange, canScan}, runDeleteRange},
	{"sync1", "synced 1 KB, 1 writer", "ops/s", false, true, otherData, nil, syncedWriters(1)},
	{"sync32", "synced 1 KB, 32 writers", "ops/s", false, true, otherData, nil, syncedWriters(32)},
	{"mixed", "mixed 50/50, 4 goroutines", "ops/s", true, false, fillKept, nil, runMixed},
	{"txn1", "txn read 4, write 4; 1 goroutine", "commits/s", true, false, accountData, []capability{canTransact}, transactions(1, false)},
	{"txn8", "txn read 4, write 4; 8 goroutines", "commits/s", true, false, accountData, []capability{canTransact}, transactions(8, false)},
	{"txn1sync", "txn read 4, write 4, synced; 1 goroutine", "commits/s", true, true, accountData, []capability{canTransact}, transactions(1, false)},
	{"txn8sync", "txn read 4, write 4, synced; 8 goroutines", "commits/s", true, true, accountData, []capability{canTransact}, transactions(8, false)},
	{"txnhot", "txn on 100 hot keys; 8 goroutines", "commits/s", false, false, otherData, []capability{canTransact}, transactions(8, true)},
	{"txnhotsync", "txn synced on 100 hot keys; 8 goroutines", "commits/s", false, true, otherData, []capability{canTransact}, transactions(8, true)},
	{"countermerge", "counter +1 by Merge; 8 goroutines, 100 keys", "increments/s", false, false, otherData, []capability{canMerge}, counters(mergeOne)},
	{"countertxn", "counter +1 in a txn; 8 goroutines, 100 keys", "increments/s", false, false, otherData, []capability{canTransact}, counters(updateOne)},
}

// dataKind is what a workload's database holds when the run closes it.
type dataKind int

const (
	// otherData: what the workload itself wrote (synced writes, hot
	// accounts, counters) or nothing (deleterange): no figure is set
	// against it.
	otherData dataKind = iota
	// fillOnly: every key with its value of -value-size, which is all the
	// run wrote, fill included: its disk writes over the keys' and values'
	// bytes are bytes written per user byte, the database's size over them
	// its space amplification.
	fillOnly
	// fillKept: the same keys and values, but the run wrote more than them
	// (the mixed workload rewrites values, the checkpoint copies the
	// database): space amplification only.
	fillKept
	// accountData: every key with its account, accountSize bytes: the
	// transaction workloads' fill. Space amplification only.
	accountData
)

// valueSize returns the value length of w's fill, or of fillseq's and
// fillrandom's writes: accountSize for accounts, else p.valueSize.
func (w workload) valueSize(p params) int {
	if w.data == accountData {
		return accountSize
	}
	return p.valueSize
}

// userBytes returns the bytes of keys and values that w's database holds
// when the run closes it, 0 for a workload whose database holds something
// else, and whether they are all the run wrote.
func (w workload) userBytes(p params) (live float64, onlyWrites bool) {
	if w.data == otherData {
		return 0, false
	}
	return float64(p.keys) * float64(keySize+w.valueSize(p)), w.data == fillOnly
}

// findWorkload returns the workload with the given name.
func findWorkload(name string) (workload, error) {
	for _, w := range workloads {
		if w.name == name {
			return w, nil
		}
	}
	return workload{}, fmt.Errorf("peers: no workload %q", name)
}

// fill writes key order.at(i) (or i, with a nil order) for i in 0..n-1,
// each with its value of valueSize bytes, from one goroutine.
func fill(e Engine, n int, order *permutation, valueSize int) error {
	key := make([]byte, 0, keySize)
	value := make([]byte, 0, valueSize)
	for i := range uint64(n) {
		k := i
		if order != nil {
			k = order.at(i)
		}
		if err := e.Put(appendKey(key[:0], k), appendValue(value[:0], k, valueSize)); err != nil {
			return fmt.Errorf("put key %d: %w", k, err)
		}
	}
	return nil
}

// timed runs f and returns its wall time.
func timed(f func() error) (time.Duration, error) {
	start := time.Now()
	err := f()
	return time.Since(start), err
}

func runFillSeq(e Engine, p params) (measure, error) {
	d, err := timed(func() error { return fill(e, p.keys, nil, p.valueSize) })
	return measure{ops: int64(p.keys), elapsed: d}, err
}

func runFillRandom(e Engine, p params) (measure, error) {
	order := fillOrder(p.keys)
	d, err := timed(func() error { return fill(e, p.keys, order, p.valueSize) })
	return measure{ops: int64(p.keys), elapsed: d}, err
}

// readKeys Gets p.reads keys drawn by next, checking every value.
func readKeys(e Engine, p params, next func() uint64) (measure, error) {
	var c checker
	key := make([]byte, 0, keySize)
	d, err := timed(func() error {
		for range p.reads {
			k := next()
			err := e.Get(appendKey(key[:0], k), func(v []byte) error { return c.check(v, k, p.valueSize) })
			if err != nil {
				return fmt.Errorf("get key %d: %w", k, err)
			}
		}
		return nil
	})
	return measure{ops: int64(p.reads), elapsed: d}, err
}

func runReadRandom(e Engine, p params) (measure, error) {
	rng := rand.New(rand.NewPCG(seedReads, seedReads))
	return readKeys(e, p, func() uint64 { return rng.Uint64N(uint64(p.keys)) })
}

func runReadZipf(e Engine, p params) (measure, error) {
	z := benchdata.NewScrambledZipfian(rand.New(rand.NewPCG(seedReads, seedReads)), uint64(p.keys))
	return readKeys(e, p, z.Next)
}

// runScan iterates over the whole database once, checking that entry i is
// key i with its value and that there are p.keys entries. e is a scanner.
func runScan(e Engine, p params) (measure, error) {
	return checkScan("scan", e.(scanner).Scan, p, false)
}

// runScanReverse iterates over the whole database once from the last key
// down, checking that entry i is key p.keys-1-i with its value and that
// there are p.keys entries. e is a reverseScanner.
func runScanReverse(e Engine, p params) (measure, error) {
	return checkScan("scan backward", e.(reverseScanner).ScanReverse, p, true)
}

// checkScan times scan over the filled database, checking that it visits
// every key with its value, once, in ascending order or, if descending, in
// descending order.
func checkScan(name string, scan func(visit func(key, value []byte) error) error, p params, descending bool) (measure, error) {
	var c checker
	var n uint64
	want := make([]byte, 0, keySize)
	d, err := timed(func() error {
		return scan(func(key, value []byte) error {
			if n == uint64(p.keys) {
				return fmt.Errorf("%s: more than %d entries", name, p.keys)
			}
			k := n
			if descending {
				k = uint64(p.keys) - 1 - n
			}
			if want = appendKey(want[:0], k); !bytes.Equal(key, want) {
				return fmt.Errorf("%s: entry %d has key %q, want %q", name, n, key, want)
			}
			if err := c.check(value, k, p.valueSize); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			n++
			return nil
		})
	})
	if err == nil && n != uint64(p.keys) {
		err = fmt.Errorf("%s: %d entries, want %d", name, n, p.keys)
	}
	return measure{ops: int64(n), elapsed: d}, err
}

// checkpointSamples is how many random keys the checkpoint workload reads
// back from the copy, besides the first and the last.
const checkpointSamples = 1000

// runCheckpoint times one checkpoint of the filled database into p.spare.
// Then, untimed, it opens the copy and checks the first key, the last and
// checkpointSamples random ones, with their values. e is a checkpointer.
func runCheckpoint(e Engine, p params) (measure, error) {
	d, err := timed(func() error { return e.(checkpointer).Checkpoint(p.spare) })
	if err != nil {
		return measure{}, fmt.Errorf("checkpoint: %w", err)
	}
	copied, err := p.open(p.spare)
	if err != nil {
		return measure{}, fmt.Errorf("open checkpoint: %w", err)
	}
	rng := rand.New(rand.NewPCG(seedReads, seedReads))
	sample := []uint64{0, uint64(p.keys) - 1}
	for range checkpointSamples {
		sample = append(sample, rng.Uint64N(uint64(p.keys)))
	}
	var c checker
	key := make([]byte, 0, keySize)
	for _, k := range sample {
		err = copied.Get(appendKey(key[:0], k), func(v []byte) error { return c.check(v, k, p.valueSize) })
		if err != nil {
			err = fmt.Errorf("checkpoint: get key %d: %w", k, err)
			break
		}
	}
	if closeErr := copied.Close(); err == nil && closeErr != nil {
		err = fmt.Errorf("close checkpoint: %w", closeErr)
	}
	return measure{ops: 1, elapsed: d}, err
}

// runDeleteRange deletes every key of the filled database, [key 0, key
// p.keys), with one range deletion, then scans the whole database, which
// must be empty. One op is both, timed together: a range deletion is cheap
// to write and costs its readers, who must skip what it covers. e is a
// rangeDeleter and a scanner.
func runDeleteRange(e Engine, p params) (measure, error) {
	start, end := appendKey(nil, 0), appendKey(nil, uint64(p.keys))
	d, err := timed(func() error {
		if err := e.(rangeDeleter).DeleteRange(start, end); err != nil {
			return fmt.Errorf("delete range: %w", err)
		}
		return e.(scanner).Scan(func(key, _ []byte) error {
			return fmt.Errorf("deleterange: key %q left after deleting every key", key)
		})
	})
	return measure{ops: 1, elapsed: d}, err
}

// parallel runs op on each of workers goroutines, over and over until
// duration has passed or an op fails; op gets its goroutine's number and
// how many ops that goroutine has done. It returns the ops done and the
// wall time, from the start until the last goroutine stopped.
func parallel(workers int, duration time.Duration, op func(g int, i uint64) error) (int64, time.Duration, error) {
	var (
		stop  atomic.Bool
		total atomic.Int64
		errs  = make([]error, workers)
		wg    sync.WaitGroup
	)
	start := time.Now()
	timer := time.AfterFunc(duration, func() { stop.Store(true) })
	defer timer.Stop()
	for g := range workers {
		wg.Go(func() {
			var i uint64
			for ; !stop.Load(); i++ {
				if err := op(g, i); err != nil {
					errs[g] = err
					stop.Store(true)
					break
				}
			}
			total.Add(int64(i))
		})
	}
	wg.Wait()
	return total.Load(), time.Since(start), errors.Join(errs...)
}

// syncedWriters returns the synced-write workload with the given number of
// writers: each writes 1 KB values to keys of its own (writer g's i-th key
// is i*writers+g) into an empty database for the workload's duration.
func syncedWriters(writers int) func(Engine, params) (measure, error) {
	return func(e Engine, p params) (measure, error) {
		keys := make([][]byte, writers)
		values := make([][]byte, writers)
		ops, d, err := parallel(writers, p.duration, func(g int, i uint64) error {
			k := i*uint64(writers) + uint64(g)
			keys[g] = appendKey(keys[g][:0], k)
			values[g] = appendValue(values[g][:0], k, syncValueSize)
			return e.Put(keys[g], values[g])
		})
		return measure{ops: ops, elapsed: d}, err
	}
}

// mixedWorkers is the mixed workload's goroutine count.
const mixedWorkers = 4

// runMixed runs 4 goroutines on the filled database for the workload's
// duration; each op is, with even odds, a Get of a uniformly random key,
// timed and checked, or an unsynced Put of a uniformly random key with its
// same value (so reads can still check every byte).
func runMixed(e Engine, p params) (measure, error) {
	type worker struct {
		rng        *rand.Rand
		key, value []byte
		c          checker
		lat        latencies
	}
	ws := make([]*worker, mixedWorkers)
	for g := range ws {
		ws[g] = &worker{rng: rand.New(rand.NewPCG(seedMixed, uint64(g)))}
	}
	ops, d, err := parallel(mixedWorkers, p.duration, func(g int, _ uint64) error {
		w := ws[g]
		r := w.rng.Uint64()
		k := (r >> 1) % uint64(p.keys)
		w.key = appendKey(w.key[:0], k)
		if r&1 == 0 {
			w.value = appendValue(w.value[:0], k, p.valueSize)
			return e.Put(w.key, w.value)
		}
		start := time.Now()
		err := e.Get(w.key, func(v []byte) error { return w.c.check(v, k, p.valueSize) })
		w.lat.add(time.Since(start))
		if err != nil {
			return fmt.Errorf("get key %d: %w", k, err)
		}
		return nil
	})
	lats := &latencies{}
	for _, w := range ws {
		lats.merge(&w.lat)
	}
	return measure{ops: ops, elapsed: d, reads: lats}, err
}
