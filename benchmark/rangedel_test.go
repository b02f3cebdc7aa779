package benchmark

import (
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stratadb/strata/simpledb"
)

// rangeDelCount is how many range tombstones the range-deletion read
// benchmark's database holds, and rangeDelStride the keys between them:
// tombstone j deletes fill key j*rangeDelStride alone.
const (
	rangeDelCount  = 1000
	rangeDelStride = fillKeys / rangeDelCount
)

var (
	rangeDelOnce sync.Once
	rangeDelDir  string
)

// rangeDelDB returns the filled database with rangeDelCount live range
// tombstones, spread over its keys, in an L0 table that every point read
// consults (no compaction runs: the one table does not trigger one). It is
// built once per process, from a copy of the filled database.
func rangeDelDB(b *testing.B) *simpledb.DB {
	rangeDelOnce.Do(func() {
		if err := filledDB(b).Close(); err != nil {
			b.Fatal(err)
		}
		rangeDelDir = filepath.Join(sharedDir, "filled-rangedel")
		if err := copyDir(filledDir, rangeDelDir); err != nil {
			b.Fatal(err)
		}
		db := openDB(b, rangeDelDir, unsynced)
		for j := range uint64(rangeDelCount) {
			k := j * rangeDelStride
			if err := db.DeleteRange(fillKey(k), fillKey(k+1), simpledb.DefaultSync); err != nil {
				b.Fatal(err)
			}
		}
		if err := db.Flush(); err != nil {
			b.Fatal(err)
		}
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
	})
	return openDB(b, rangeDelDir, unsynced)
}

// copyDir copies the regular files of a database directory, but its lock.
func copyDir(from, to string) error {
	if err := os.MkdirAll(to, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || e.Name() == "LOCK" {
			continue
		}
		if err := copyFile(filepath.Join(from, e.Name()), filepath.Join(to, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		return err
	}
	_, err = io.Copy(dst, src)
	return errors.Join(err, dst.Close())
}

// BenchmarkSimpleDBReadRandomRangeDels is ReadRandom on the filled
// database with 1,000 live range tombstones (rangeDelDB), in alternating
// turns with ReadRandom on the same data without them, the baseline (see
// pair). One op is 1,000 Gets of random keys, the same keys on both sides,
// every value checked (a key a tombstone deletes must be ErrNotFound); the
// two go first in turn.
// x-baseline is the speed with tombstones over the speed without: the
// cost ratio the range tombstones add to a point read is its inverse
// (target: at most 1.2, x-baseline at least 0.83).
func BenchmarkSimpleDBReadRandomRangeDels(b *testing.B) {
	withDels := rangeDelDB(b)
	defer closeUntimed(b, withDels)
	without := filledDB(b)
	defer closeUntimed(b, without)
	const gets = 1000
	reads := func(db *simpledb.DB, seed uint64, deleted bool) {
		rng := rand.New(rand.NewPCG(9, seed))
		for range gets {
			i := rng.Uint64N(fillKeys)
			v, err := db.Get(fillKey(i))
			if deleted && i%rangeDelStride == 0 {
				if !errors.Is(err, simpledb.ErrNotFound) {
					b.Fatalf("key %d: deleted by a range, read %v", i, err)
				}
				continue
			}
			if err != nil {
				b.Fatal(err)
			}
			checkValue(b, v, i, fillValueSize)
		}
	}
	p := newPair(b, 0)
	b.ResetTimer()
	for i := range uint64(b.N) {
		// Each goes first in turn: the second reads what the first just
		// warmed up in the processor's caches.
		if i%2 == 0 {
			p.candidate(func() { reads(withDels, i, true) })
			p.baseline(func() { reads(without, i, false) })
		} else {
			p.baseline(func() { reads(without, i, false) })
			p.candidate(func() { reads(withDels, i, true) })
		}
	}
	p.report()
	p.reportRate(gets, "ops/s")
}

var (
	deleteRangeSrcOnce sync.Once
	deleteRangeSrc     string
)

// deleteRangeSource returns the directory of the database that
// BenchmarkSimpleDBDeleteRangeScan checkpoints: the 1M fill keys in
// ascending order, flushed, built once per process.
func deleteRangeSource(b *testing.B) string {
	deleteRangeSrcOnce.Do(func() {
		deleteRangeSrc = filepath.Join(sharedDir, "deleterange-source")
		db := openDB(b, deleteRangeSrc, unsynced)
		dbFill{n: fillKeys, appendKey: appendFillKey, valueSize: fillValueSize, batchSize: 100}.write(b, db)
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
	})
	return deleteRangeSrc
}

// BenchmarkSimpleDBDeleteRangeScan deletes every key of a database of the
// 1M fill keys with one DeleteRange and scans it, which must find no key.
// One op is the whole iteration: a checkpoint of the filled database
// (hard links), opening it, the deletion, the scan, closing and removing
// it; the parts the benchmark is about come as metrics: the deletion costs
// one write (deleterange-µs), and the scan (scan-µs) moves each older
// level past the tombstone with one seek rather than step over the
// entries it hides. Timing the whole op keeps b.N from multiplying a setup
// that the timer does not see (a fresh fill each, which once filled the
// disk), and each op removes what it made, so the disk it takes is one
// checkpoint's.
func BenchmarkSimpleDBDeleteRangeScan(b *testing.B) {
	src := openDB(b, deleteRangeSource(b), &simpledb.Options{ReadOnly: true})
	defer closeUntimed(b, src)
	parent := benchDir(b)
	lo, hi := fillKey(0), binary.BigEndian.AppendUint64([]byte("fillkey."), fillKeys)
	var deleting, scanning time.Duration
	b.ResetTimer()
	for i := range b.N {
		dir := filepath.Join(parent, strconv.Itoa(i))
		if err := src.Checkpoint(dir); err != nil {
			b.Fatal(err)
		}
		db := openDB(b, dir, unsynced)
		start := time.Now()
		if err := db.DeleteRange(lo, hi, simpledb.DefaultSync); err != nil {
			b.Fatal(err)
		}
		deleting += time.Since(start)
		start = time.Now()
		it, err := db.NewIterator(nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		if it.First() {
			b.Fatalf("key %q survived the range deletion", it.Key())
		}
		if err := it.Err(); err != nil {
			b.Fatal(err)
		}
		if err := it.Close(); err != nil {
			b.Fatal(err)
		}
		scanning += time.Since(start)
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
		if err := os.RemoveAll(dir); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(deleting.Microseconds())/float64(b.N), "deleterange-µs")
	b.ReportMetric(float64(scanning.Microseconds())/float64(b.N), "scan-µs")
}
