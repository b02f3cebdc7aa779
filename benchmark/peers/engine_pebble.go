package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/stratadb/strata/sstables"
)

// pebbleEngine is Pebble v2. Every Set passes pebble.Sync or pebble.NoSync.
// Its merge operator adds counters (uint64Adder); it has no transactions,
// only indexed batches, which read their own writes but detect no
// conflict.
type pebbleEngine struct {
	db     *pebble.DB
	write  *pebble.WriteOptions
	stalls *stallClock
}

// stallClock adds up the stalls Pebble's event listener announces.
type stallClock struct {
	mu    sync.Mutex
	since time.Time // the running stall's start; zero if none
	total time.Duration
}

func (c *stallClock) begin(pebble.WriteStallBeginInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.since = time.Now()
}

func (c *stallClock) end() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.since.IsZero() {
		c.total += time.Since(c.since)
		c.since = time.Time{}
	}
}

func (e *pebbleEngine) StallTime() time.Duration {
	e.stalls.mu.Lock()
	defer e.stalls.mu.Unlock()
	return e.stalls.total
}

func openPebble(dir string, s settings) (Engine, error) {
	return openPebbleWith(&pebble.Options{}, dir, s)
}

// blobThreshold is the value length from which pebble-blobs keeps a value
// in a blob file: Strata's default BlobThreshold, 512 bytes, so that both
// separate the same values.
const blobThreshold = sstables.DefaultBlobThreshold

// openPebbleBlobs opens Pebble with its value separation: a flush or a
// compaction writes values of blobThreshold bytes and more to blob files
// beside its tables, which later compactions carry as references, as
// Strata's do. Pebble v2.1.7 separates only at FormatValueSeparation (its
// newest format major version) and in columnar tables (TableFormatPebblev7;
// EnableColumnarBlocks, on by default): Pebble at its defaults stays at its
// oldest supported format, FormatFlushableIngest, whose tables are
// row-oriented (TableFormatPebblev2), so the two differ in their table
// format as well.
func openPebbleBlobs(dir string, s settings) (Engine, error) {
	opts := &pebble.Options{FormatMajorVersion: pebble.FormatValueSeparation}
	opts.Experimental.ValueSeparationPolicy = func() pebble.ValueSeparationPolicy {
		return pebble.ValueSeparationPolicy{
			Enabled:     true,
			MinimumSize: blobThreshold,
			// The rest as Pebble's own benchmark tool (cmd/pebble) sets
			// them: an output table refers to at most 10 blob files that
			// may overlap, and no blob file is rewritten to reclaim its
			// garbage (TargetGarbageRatio 1; the fill, read and scan
			// workloads make none).
			MaxBlobReferenceDepth: 10,
			RewriteMinimumAge:     5 * time.Minute,
			TargetGarbageRatio:    1.0,
		}
	}
	return openPebbleWith(opts, dir, s)
}

// openPebbleWith opens Pebble with opts, the runner's logger, merge
// operator and stall clock, and the workload's settings.
func openPebbleWith(opts *pebble.Options, dir string, s settings) (Engine, error) {
	stalls := &stallClock{}
	opts.Logger, opts.Merger = pebbleLogger{}, uint64Adder
	opts.EventListener = &pebble.EventListener{WriteStallBegin: stalls.begin, WriteStallEnd: stalls.end}
	if s.cacheBytes > 0 {
		opts.CacheSize = s.cacheBytes
	}
	if s.memtableBytes > 0 {
		opts.MemTableSize = uint64(s.memtableBytes)
	}
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, err
	}
	write := pebble.NoSync
	if s.sync {
		write = pebble.Sync
	}
	return &pebbleEngine{db: db, write: write, stalls: stalls}, nil
}

func (e *pebbleEngine) Put(key, value []byte) error { return e.db.Set(key, value, e.write) }

func (e *pebbleEngine) Get(key []byte, visit func([]byte) error) error {
	v, closer, err := e.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return errNotFound
	}
	if err != nil {
		return err
	}
	err = visit(v)
	return errors.Join(err, closer.Close())
}

func (e *pebbleEngine) Scan(visit func(key, value []byte) error) error {
	it, err := e.db.NewIter(nil)
	if err != nil {
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err == nil {
			err = visit(it.Key(), v)
		}
		if err != nil {
			it.Close()
			return err
		}
	}
	return errors.Join(it.Error(), it.Close())
}

func (e *pebbleEngine) ScanReverse(visit func(key, value []byte) error) error {
	it, err := e.db.NewIter(nil)
	if err != nil {
		return err
	}
	for ok := it.Last(); ok; ok = it.Prev() {
		v, err := it.ValueAndErr()
		if err == nil {
			err = visit(it.Key(), v)
		}
		if err != nil {
			it.Close()
			return err
		}
	}
	return errors.Join(it.Error(), it.Close())
}

// Merge writes operand as a merge operand, which uint64Adder adds to what
// the key holds when a read or a compaction meets it.
func (e *pebbleEngine) Merge(key, operand []byte) error {
	return e.db.Merge(key, operand, e.write)
}

// DeleteRange writes one range tombstone.
func (e *pebbleEngine) DeleteRange(start, end []byte) error {
	return e.db.DeleteRange(start, end, e.write)
}

// Checkpoint links the tables and copies the WAL, MANIFEST and OPTIONS
// files, with Pebble's default options: no WithFlushedWAL (every write
// here comes before the reopen, so nothing is waiting in the WAL's buffer)
// and no WithRestrictToSpans.
func (e *pebbleEngine) Checkpoint(dir string) error { return e.db.Checkpoint(dir) }

func (e *pebbleEngine) Close() error { return e.db.Close() }

// pebbleLogger drops Pebble's informational messages (WAL replay, one line
// per log at every open) and keeps its errors.
type pebbleLogger struct{}

func (pebbleLogger) Infof(string, ...any)              {}
func (pebbleLogger) Errorf(format string, args ...any) { log.Printf(format, args...) }
func (pebbleLogger) Fatalf(format string, args ...any) { log.Fatalf(format, args...) }

// uint64Adder is Pebble's merge operator for the counter workloads: values
// and operands are 8-byte little-endian uint64s, and merging adds them, as
// Strata's simpledb.Uint64AddMerger does. Pebble stores its name, and
// opens a database only with the merger that made it; every Pebble run
// opens with this one.
var uint64Adder = &pebble.Merger{
	Name: "strata-peers.uint64add",
	Merge: func(_, value []byte) (pebble.ValueMerger, error) {
		var s uint64Sum
		return &s, s.add(value)
	},
}

// uint64Sum is one merge of uint64Adder: the sum of the operands so far.
// Addition commutes, so newer and older operands add alike.
type uint64Sum uint64

func (s *uint64Sum) add(operand []byte) error {
	if len(operand) != 8 {
		return fmt.Errorf("peers: merge operand of %d bytes, want 8", len(operand))
	}
	*s += uint64Sum(binary.LittleEndian.Uint64(operand))
	return nil
}

func (s *uint64Sum) MergeNewer(operand []byte) error { return s.add(operand) }
func (s *uint64Sum) MergeOlder(operand []byte) error { return s.add(operand) }

func (s *uint64Sum) Finish(bool) ([]byte, io.Closer, error) {
	return binary.LittleEndian.AppendUint64(nil, uint64(*s)), nil, nil
}
