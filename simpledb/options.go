package simpledb

import (
	"log/slog"
	"time"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/manifest"
	"github.com/stratadb/strata/memstore"
	"github.com/stratadb/strata/sstables"
	"github.com/stratadb/strata/vfs"
)

const (
	// MaxKeySize is the longest key, 64 KiB.
	MaxKeySize = base.MaxKeySize
	// MaxValueSize is the longest value, 64 MiB.
	MaxValueSize = 64 << 20
	// MaxBatchSize bounds a batch's encoded size, 512 MiB.
	MaxBatchSize = 512 << 20
	// MinMemstoreSize is the smallest MemstoreSize, 256 KiB: a memstore
	// takes memory in 64 KiB chunks for its keys and values, so a smaller
	// one would be full after one write, and every write would make a
	// table.
	MinMemstoreSize = 256 << 10
	// MinMaxOpenFiles is the smallest MaxOpenFiles, 64, LevelDB's and
	// Pebble's floor too. Reads pin the tables they read: an iterator one
	// table per level below L0 and every L0 table in its range, up to
	// L0StopWritesThreshold (12 by default), a compaction its L0 inputs and
	// one table per deeper level; 64 holds those of a few iterators and a
	// compaction at once with room for the hot tables of point reads, so
	// that a small bound does not turn every read into a reopen.
	MinMaxOpenFiles = 64
)

// NumLevels is the number of levels, L0 and L1 to L6: the length of
// Stats.Levels.
const NumLevels = manifest.NumLevels

// Options configure a database. The zero value (or nil) gives the defaults,
// each documented on its field: a numeric field that is zero takes its
// default. A negative value turns off what can be turned off
// (RecycledLogs, BloomBitsPerKey); in any other field Open
// refuses it with ErrInvalidOption.
type Options struct {
	// FS is the filesystem. Default: vfs.Default.
	FS vfs.FS
	// MemoryBudget bounds the memory the database holds for data: its
	// memstores, the block cache, and the indexes and bloom filters of the
	// tables open (those found at Open, and those written since once a
	// read has needed them). The memstores, at all a writable database
	// may hold, and the tables' indexes and filters are charged to it, and
	// the block cache holds what they leave, shrinking, by evictions, as
	// the tables grow:
	//
	//	memstores = (1 + MaxImmutableMemstores) × MemstoreSize
	//	cache     = MemoryBudget - memstores - indexes and filters
	//
	// With the defaults the memstores take two thirds of the budget.
	// Where the charges exceed it (memstores set larger, or more indexes
	// and filters than the rest holds: they take about 1.4% of the data
	// for 16-byte keys and 100-byte values with the default block size
	// and filters), the cache is empty and the database holds what is
	// charged. Memstores and cached blocks live outside the Go heap; the
	// memory that is not data (buffers of reads and writes, iterators, the
	// Go heap's headroom, the program) comes on top: docs/10-memory.md
	// gives the measured figures. Default: 48 MiB.
	MemoryBudget int64
	// MemstoreSize is how large the active memstore grows before it is
	// turned into a table in the background. Values below MinMemstoreSize
	// are raised to it. Default: a third of MemoryBudget (16 MiB).
	MemstoreSize int64
	// MaxImmutableMemstores bounds the full memstores waiting for their
	// flush; writers stall beyond it, so memory stays bounded. Default: 1.
	MaxImmutableMemstores int
	// RecycledLogs bounds the obsolete logs kept for reuse: a log whose
	// memstore is flushed is kept, and the next rotation renames its file
	// and writes over it instead of creating one, so that fsyncs of the log
	// find its blocks written already and commit no allocation or size
	// change. A negative value turns recycling off: obsolete logs are
	// deleted.
	// Default: MaxImmutableMemstores, as many as the flushes between two
	// rotations can make obsolete, so that none need be deleted, while the
	// log files never outnumber those a database without recycling holds
	// at its peak (the active log and one per immutable memstore).
	RecycledLogs int
	// NoSync makes writes unsynced by default: acknowledged once in the
	// operating system, durable only after a later synced write, Flush or
	// Close. A write's WriteOptions, Sync or NoSync, override it. Default:
	// false (synced).
	NoSync bool
	// L0CompactionTrigger is the number of L0 tables that starts a
	// compaction into L1. Default: 4.
	L0CompactionTrigger int
	// L0StopWritesThreshold is the number of L0 tables at which writers
	// stall until compaction catches up. It is raised to at least
	// L0CompactionTrigger+1, so that writers never stall before a
	// compaction is due; with DisableAutoCompaction it does not apply.
	// Default: 12.
	L0StopWritesThreshold int
	// BaseLevelSize is L1's target size. Default: 4 × MemstoreSize.
	BaseLevelSize int64
	// LevelSizeRatio is each level's target size over the previous one's:
	// 2 or more (1 would not grow the levels). Default: 10.
	LevelSizeRatio int
	// TargetTableSize is the size at which compaction starts a new output
	// table. Default: 64 MiB.
	TargetTableSize int64
	// BlockSize is the tables' data block size: small blocks make point
	// reads of uncached data cheap, at the price of a larger index (about 14
	// bytes per block, in memory). Default: sstables.DefaultBlockSize, 4 KiB.
	BlockSize int
	// Comparator orders keys. The manifest records its name, and Open
	// refuses a database written in another order with
	// ErrComparatorMismatch. Keys that it finds equal must be equal bytes:
	// it orders distinct keys, never merges them. Default:
	// sstables.Bytewise.
	Comparator *sstables.Comparator
	// Merger folds the operands Merge writes (see Merger). The manifest
	// records its name once a database is opened with one, and Open then
	// refuses another, or none, with ErrMergerMismatch. Default: nil, and
	// Merge returns ErrNoMerger.
	Merger *Merger
	// Compression compresses table blocks; the logs and the manifest are
	// never compressed. Default: snappy.
	Compression sstables.Compression
	// BlobThreshold is the size from which a value is kept apart from the
	// tables, in a blob file written beside the table its flush writes:
	// compactions then move the table's 10-byte reference to it, not the
	// value, and reclaim the space of values overwritten or deleted by
	// rewriting the live ones of a blob file that holds mostly garbage
	// (docs/12-large-values.md). A read of such a value costs one more
	// read, of the blob file, through the block cache; a scan reads only
	// the values it asks for. A negative value keeps every value in the
	// tables. Default: sstables.DefaultBlobThreshold, 512 bytes.
	BlobThreshold int
	// BlobRewriteRatio is the share of a blob file's bytes that must be
	// garbage, values overwritten or deleted, before compactions copy its
	// live values to new blob files, so that it can be deleted; when no
	// level needs a compaction, the background compaction rewrites tables
	// that name such a file for that alone. Space taken by blob files
	// stays within about 1/(1-BlobRewriteRatio) of the live values'. It
	// must lie in [0, 1]; 1 rewrites nothing (a file goes once nothing
	// names it). Default: 0.25.
	BlobRewriteRatio float64
	// BloomBitsPerKey sizes each table's bloom filter; a negative value
	// turns filters off. Default: sstables.DefaultBloomBitsPerKey, 10 (about
	// 1% false positives).
	BloomBitsPerKey int
	// MaxOpenFiles bounds the table files the database holds open. Tables
	// beyond it are closed, least recently used first, and reopened (and
	// checked, as Open checks them) when a read needs them; the block cache
	// keeps their blocks across a reopen. A table is never closed while a
	// Get, an iterator or a compaction reads it, so the bound is exceeded
	// while more tables than it are pinned at once: an iterator pins one
	// table per level below L0 and every L0 table in its range from its
	// first move until Close, a compaction its L0 inputs and one table per
	// deeper level (with MmapTables, all its inputs). Stats.OpenTables
	// reports the count. The database's other files count separately: its
	// LOCK, the manifest, the log being written, tables and blob files
	// being written (one or two per flush or compaction running), each
	// blob file while it lives (see BlobThreshold: one per flush of large
	// values, until compactions empty it), and briefly a directory being
	// synced or a log Open replays. Values below MinMaxOpenFiles are raised
	// to it. Default: 1000.
	MaxOpenFiles int
	// MmapTables maps tables into memory for point reads instead of
	// reading them with pread. Reads of uncached blocks get faster, but
	// every page touched counts towards the process's resident memory (the
	// kernel maps neighbouring cached pages along), so random reads over a
	// large database grow RSS towards its size. Default: false.
	MmapTables bool
	// Logger receives background events (flushes and compactions at Debug,
	// failures at Error). Default: slog.Default().
	Logger *slog.Logger
	// EventListener receives the database's background events, typed, as
	// they happen (see EventListener). Default: nil, none.
	EventListener *EventListener
	// DiskSlowThreshold is how long an fsync of the log may take before
	// EventListener.DiskSlow reports it. Default: 1 s.
	DiskSlowThreshold time.Duration
	// DisableAutoCompaction stops background compaction; Compact still
	// works. For tests and tools. Default: false.
	DisableAutoCompaction bool
	// ReadOnly opens an existing database without changing its directory:
	// the logs are replayed into memory, not into a table; no log, manifest
	// or CURRENT is written, nothing is deleted, and nothing runs in the
	// background. Reads, iterators, snapshots, Stats and Checkpoint work;
	// writes, Flush and Compact return ErrReadOnly. The directory's lock is
	// taken as by any Open. Default: false.
	ReadOnly bool
	// Follow opens the database as a follower: read-only, without the
	// directory's lock, beside an Open (in this process or another) that
	// may be writing it. Reads see the database as of Open, then as of
	// each CatchUp, which reads the writer's manifest and logs again. A
	// follower writes nothing, and the writer never waits for it. It
	// keeps every table of its view open, whatever MaxOpenFiles says, so
	// that a table the writer deletes stays readable until the view
	// moves on; its snapshots hold their view. It may see writes the
	// writer has appended to its log but not yet acknowledged. Implies
	// ReadOnly. Default: false.
	Follow bool
	// ErrorIfNotExists makes Open fail with ErrNotDB, creating nothing,
	// where the directory holds no database, as a read-only Open does: for
	// tools that must never create one by mistake. Default: false, Open
	// creates the database (and its directory).
	ErrorIfNotExists bool
}

// validate refuses the values no field takes: negative ones where a
// negative value turns nothing off.
func (o *Options) validate() error {
	if o == nil {
		return nil
	}
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"MemoryBudget", o.MemoryBudget}, {"MemstoreSize", o.MemstoreSize}, {"MaxImmutableMemstores", int64(o.MaxImmutableMemstores)},
		{"L0CompactionTrigger", int64(o.L0CompactionTrigger)}, {"L0StopWritesThreshold", int64(o.L0StopWritesThreshold)},
		{"BaseLevelSize", o.BaseLevelSize}, {"LevelSizeRatio", int64(o.LevelSizeRatio)},
		{"TargetTableSize", o.TargetTableSize}, {"BlockSize", int64(o.BlockSize)}, {"MaxOpenFiles", int64(o.MaxOpenFiles)},
		{"DiskSlowThreshold", int64(o.DiskSlowThreshold)},
	} {
		if f.v < 0 {
			return errs.Errorf("%w: %s is %d", ErrInvalidOption, f.name, f.v)
		}
	}
	if o.BlobRewriteRatio < 0 || o.BlobRewriteRatio > 1 {
		return errs.Errorf("%w: BlobRewriteRatio is %v, outside [0, 1]", ErrInvalidOption, o.BlobRewriteRatio)
	}
	if o.LevelSizeRatio == 1 {
		return errs.Errorf("%w: LevelSizeRatio is 1, which would not grow the levels", ErrInvalidOption)
	}
	if m := o.Merger; m != nil && (m.Name == "" || m.Merge == nil) {
		return errs.Errorf("%w: a Merger needs a Name and a Merge function", ErrInvalidOption)
	}
	return nil
}

func (o *Options) withDefaults() Options {
	var r Options
	if o != nil {
		r = *o
	}
	r.FS = vfs.OrDefault(r.FS)
	if r.MemoryBudget <= 0 {
		r.MemoryBudget = 48 << 20
	}
	if r.MemstoreSize <= 0 {
		r.MemstoreSize = r.MemoryBudget / 3
	}
	r.MemstoreSize = max(r.MemstoreSize, MinMemstoreSize)
	if r.MaxImmutableMemstores <= 0 {
		r.MaxImmutableMemstores = 1
	}
	if r.DiskSlowThreshold == 0 {
		r.DiskSlowThreshold = time.Second
	}
	if r.BlobRewriteRatio == 0 {
		r.BlobRewriteRatio = 0.25
	}
	switch {
	case r.BlobThreshold == 0:
		r.BlobThreshold = sstables.DefaultBlobThreshold
	case r.BlobThreshold < 0:
		r.BlobThreshold = -1 // every value in the tables
	}
	switch {
	case r.RecycledLogs == 0:
		r.RecycledLogs = r.MaxImmutableMemstores
	case r.RecycledLogs < 0:
		r.RecycledLogs = 0
	}
	if r.L0CompactionTrigger <= 0 {
		r.L0CompactionTrigger = 4
	}
	if r.L0StopWritesThreshold <= 0 {
		r.L0StopWritesThreshold = 12
	}
	r.L0StopWritesThreshold = max(r.L0StopWritesThreshold, r.L0CompactionTrigger+1)
	if r.BaseLevelSize <= 0 {
		r.BaseLevelSize = 4 * r.MemstoreSize
	}
	if r.LevelSizeRatio <= 0 {
		r.LevelSizeRatio = 10
	}
	if r.TargetTableSize <= 0 {
		r.TargetTableSize = 64 << 20
	}
	if r.Comparator == nil {
		r.Comparator = sstables.Bytewise
	}
	if r.MaxOpenFiles <= 0 {
		r.MaxOpenFiles = 1000
	}
	r.MaxOpenFiles = max(r.MaxOpenFiles, MinMaxOpenFiles)
	if r.Logger == nil {
		r.Logger = slog.Default()
	}
	return r
}

// WriteOptions choose, for one write, what Options choose for all of them:
// a set of flags, passed to Put, Delete, DeleteRange and Write. The zero
// value, DefaultSync, keeps the database's defaults. Sync and NoSync
// exclude each other: both together, or any bit not defined here, is
// ErrInvalidOption, and the write is refused.
type WriteOptions uint8

const (
	// DefaultSync syncs the write unless Options.NoSync is set.
	DefaultSync WriteOptions = 0
	// Sync makes the write durable before it returns, whatever
	// Options.NoSync says. Concurrent synced writes share one fsync.
	Sync WriteOptions = 1 << 0
	// NoSync returns once the write is in the operating system, whatever
	// Options.NoSync says: it survives a crash of the process but not of
	// the machine, and becomes durable with a later synced write, Flush or
	// Close that succeeds (one that fails reports ErrWriteOutcomeUnknown:
	// see Close).
	NoSync WriteOptions = 1 << 1
)

// sync reports whether a write with these options is synced in a database
// whose Options.NoSync is noSync.
func (o WriteOptions) sync(noSync bool) (bool, error) {
	switch o {
	case DefaultSync:
		return !noSync, nil
	case Sync:
		return true, nil
	case NoSync:
		return false, nil
	case Sync | NoSync:
		return false, errs.Errorf("%w: WriteOptions Sync and NoSync together", ErrInvalidOption)
	}
	return false, errs.Errorf("%w: WriteOptions %#x, bits %#x undefined", ErrInvalidOption, uint8(o), uint8(o&^(Sync|NoSync)))
}

// tableBytesPerSync is how often a table being written starts its
// writeback, as Pebble's BytesPerSync does. Otherwise a flush leaves 64 MiB
// dirty until its table's fsync, and a log fsync meanwhile commits the
// journal behind it. Measured with 32 synced writers and flushes running,
// without and with it in 6 alternating pairs: a small gain, within this
// machine's noise (medians 73.8K and 76.3K ops/s, better in 5 pairs of 6;
// 281-344 and 274-327 µs per log fsync); fills were not slowed (FillSeq
// 124-174 and 148-179 MB/s).
const tableBytesPerSync = 512 << 10

// newMemstore returns an empty memstore in the database's key order, off
// the Go heap: the garbage collector paces itself by the heap it finds
// live, and memstores, the largest part of it, would let it grow to twice
// what they hold before a collection. Its memory is released when the last
// read state holding it goes (see memTable.refs), or, for one that never
// joined a read state (a log replayed at Open), once it is unreachable.
func (o *Options) newMemstore() *memstore.Memstore {
	return memstore.New(&memstore.Options{Comparator: o.Comparator, OffHeap: true})
}

// tableWriterOptions are the options for the tables the database writes,
// each with a new identity.
func (o *Options) tableWriterOptions() *sstables.WriterOptions {
	return &sstables.WriterOptions{
		ID:              base.NewFileID(0),
		FS:              o.FS,
		Comparator:      o.Comparator,
		BlockSize:       o.BlockSize,
		Compression:     o.Compression,
		BloomBitsPerKey: o.BloomBitsPerKey,
		BytesPerSync:    tableBytesPerSync,
	}
}
