package simpledb

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratadb/strata/internal/filenames"
	"github.com/stratadb/strata/internal/manifest"
	"github.com/stratadb/strata/recordio"
	"github.com/stratadb/strata/sstables"
	"github.com/stratadb/strata/vfs"
)

// DB is an embedded key-value database. All its methods are safe for
// concurrent use.
//
// Its locks are taken in this order, a goroutine holding one taking only
// later ones: closeMu, walMu, pubMu, mu, syncMu. commitMu, rsMu and seqMu
// are innermost: nothing is locked under them. (Snapshot.mu comes before
// mu, Sequence.mu before closeMu; oracle.mu after walMu, innermost too.)
// The write path holds walMu while it appends and while a writer stalls,
// so nothing a reader or Stats needs is guarded by it.
type DB struct {
	dir    string
	opts   Options
	fold   func(key, older, newer []byte) ([]byte, error) // Options.Merger's, for the merges below; nil without one
	fs     vfs.FS
	logger *slog.Logger
	lock   io.Closer
	// cache is the block cache, which the memstores and the open tables'
	// indexes and filters are charged to: its capacity is
	// Options.MemoryBudget. memCharge is the memstores' charge (guarded
	// by mu).
	cache     *sstables.Cache
	memCharge int64
	// removeLock: a read-only Open created the LOCK file, and Close
	// removes it, so that the directory is left as it was found.
	removeLock bool

	tables *tableCache // the open tables, at most opts.MaxOpenFiles

	// mu guards the fields below it. It is never held across a log write or
	// a table write, only across a manifest write (an edit must be logged
	// and installed in order) and the file deletions that installing it
	// may cause.
	mu   sync.Mutex
	cond *sync.Cond // broadcast whenever flush, compaction or error state changes
	mem  *memTable
	imm  []*memTable // full memstores awaiting flush, oldest first; only the flush loop removes one
	// resumeFlush: Resume has the flush loop flush through the database's
	// failure; resumeFlushErr is the flush failure that stopped it.
	resumeFlush    bool
	resumeFlushErr error
	current        *version
	// flushedSeq is the last sequence number the tables hold, which a new
	// manifest records as its LastSeq: every write up to it is in a table,
	// every later one in a log alone, which replay requires to hold only
	// batches above it.
	flushedSeq  uint64
	nextFileNum uint64
	logNum      uint64             // the oldest log still needed
	recycled    []manifest.LogInfo // obsolete logs kept for reuse
	manifest    *recordio.Writer
	manifestNum uint64
	// manifestErr is the manifest's failure: an edit whose write failed
	// may be on disk or not, so no edit follows it; Resume starts a new
	// manifest.
	manifestErr error
	snapshots   map[uint64]int    // sequence number -> live snapshots at it
	compacting  bool              // a compaction runs: at most one at a time
	compactPtr  [NumLevels][]byte // where the next compaction of each level starts
	bgErr       error
	// bgRecoverable: the filesystem caused bgErr, and Resume may clear
	// it; autoResuming: a goroutine retries Resume (out of space).
	bgRecoverable bool
	autoResuming  bool
	// compactPause is the error of a compaction that ran out of space;
	// compactions wait until compactRetry, compactBackoff after it.
	compactPause   error
	compactRetry   time.Time
	compactBackoff time.Duration
	failed         atomic.Bool  // bgErr is set; read without mu on hot paths
	l0Tables       atomic.Int64 // len(current.levels[0]), for the write path
	stats          statCounters
	// closed is set (under mu, so waiters on cond see it) by Close; read
	// anywhere. closing is closed then too, for goroutines that sleep.
	closed  atomic.Bool
	closing chan struct{}
	// oracle checks transactions' commits: see oracle.go.
	oracle oracle

	// resumeMu serializes Resume calls, followMu a follower's catch-ups.
	resumeMu sync.Mutex
	followMu sync.Mutex

	rsMu sync.RWMutex
	rs   *readState

	// The commit pipeline.
	closeMu    sync.RWMutex // held shared by writes, exclusively by Close
	commitMu   sync.Mutex   // guards queue and leading
	queue      []*commitWaiter
	leading    bool
	visibleSeq atomic.Uint64 // every write up to it is applied and readable

	// walMu guards the log writer and what the append stage owns. mem
	// changes only under both walMu and mu, so either suffices to read it.
	walMu     sync.Mutex
	wal       *logWriter
	walFile   vfs.File // the log's file, which the sync stage fsyncs
	plainLogs bool     // the filesystem cannot map logs: see openLogFile
	// walBase maps the logs' logical length, in which the sync stage
	// measures durability, to offsets in the current log: offset =
	// logical length - walBase.
	walBase    int64
	lastSeq    uint64 // the last sequence number assigned
	writeStats writeCounters

	// pubMu guards the groups appended but not yet published, in order,
	// and pubErr: once a group that reached the log fails, every later one
	// fails with it.
	pubMu   sync.Mutex
	pending []*commitGroup
	pubErr  error

	// syncMu guards the sync stage and logErr.
	syncMu   sync.Mutex
	syncCond *sync.Cond
	syncedTo atomic.Uint64 // the logs are durable up to this logical length; written under syncMu, read anywhere
	syncing  bool          // an fsync is running
	// logErr is the log's first failure, of an append or an fsync (set by
	// failLog): nothing is appended or synced after it,
	// and every write past syncedTo fails with it. logFailed is set with
	// it and cleared with it, so that the publisher takes syncMu to read
	// it only once there is one.
	logErr       error
	logFailed    atomic.Bool
	logSyncs     atomic.Int64
	logSyncNanos atomic.Int64
	// gather holds the next fsync back for the synced writers the last
	// one released.
	gather syncGather

	bgWG sync.WaitGroup

	// seqMu guards sequences: the keys of the open Sequences.
	seqMu     sync.Mutex
	sequences map[string]bool
}

func (d *DB) checkOpen() error {
	if d.closed.Load() {
		return ErrClosed
	}
	return nil
}

// checkWritable returns ErrClosed once the database is closed, and
// ErrReadOnly if it was opened read-only.
func (d *DB) checkWritable() error {
	if err := d.checkOpen(); err != nil {
		return err
	}
	if d.opts.ReadOnly {
		return ErrReadOnly
	}
	return nil
}

// Close stops background work, makes every acknowledged write durable and
// releases the database's files and lock. Iterators still open keep
// working until they are closed: each holds the tables it reads. Reads
// through a snapshot, like every other call, return ErrClosed; releasing
// it is still allowed.
//
// Close first writes what the memstores hold to tables, as Flush does,
// when they hold closeFlushBytes (4 MiB) or more, so that the next Open
// has no long log to replay: it moves that work, which Open would do
// anyway (replay, then a table of what it replayed), to Close, and saves
// the replay. If that flush fails, the writes stay in the log, durable
// all the same, for the next Open to replay.
//
// If the log has failed (an append to it or its fsync), Close returns that
// failure, matching ErrBackground and ErrWriteOutcomeUnknown, and does not
// fsync the log again: what the log holds since its last good fsync may be
// lost already, and a retry that succeeds would not prove otherwise. It
// releases everything all the same.
func (d *DB) Close() error {
	d.flushAtClose()
	// Writes already under way finish first; then the log is synced and
	// closed.
	d.closeMu.Lock()
	d.mu.Lock()
	if d.closed.Load() {
		d.mu.Unlock()
		d.closeMu.Unlock()
		return ErrClosed
	}
	d.closed.Store(true)
	close(d.closing)
	d.cond.Broadcast()
	d.mu.Unlock()
	d.closeMu.Unlock()
	d.gather.stop()
	d.syncMu.Lock()
	err := d.logErr
	d.syncMu.Unlock()
	var logSize int64
	switch {
	case err == nil && d.wal == nil:
		// A rotation closed the log and failed to start the next.
		err = d.backgroundError()
	case err != nil:
		// The log's writer would flush and fsync it on Close, so its file
		// is closed instead. The error is moot: the log failed already (and
		// a rotation whose fsync failed closed the file). (A Resume that
		// failed may have given the file up already.)
		if d.walFile != nil {
			d.walFile.Close()
		}
		d.wal = nil
	case d.wal != nil:
		logSize = d.wal.Size()
		err = d.wal.Close()
		d.wal = nil
	}

	d.bgWG.Wait()
	// A follower's CatchUp under way, which reads d.current and opens
	// tables, ends before they are released; it sees closed and stops.
	d.followMu.Lock()
	d.followMu.Unlock()
	d.deleteRecycledLogs()
	if err == nil && logSize > 0 {
		// The log is whole and durable: record its length, so that the next
		// Open tells damage to its end from a torn tail.
		d.mu.Lock()
		err = d.writeEdit(&manifest.Edit{Logs: []manifest.LogInfo{{Num: d.mem.logNum, Size: uint64(logSize)}}})
		d.mu.Unlock()
	}
	if rerr := d.releaseAll(); err == nil {
		err = rerr
	}
	if err != nil {
		return fmt.Errorf("simpledb: close: %w", err)
	}
	return nil
}

// closeFlushBytes is how much the memstores must hold for Close to flush
// them: a log of less replays in a few tens of milliseconds (Pebble's
// whole memtable is 4 MB by default).
const closeFlushBytes = 4 << 20

// flushAtClose flushes the memstores of a healthy, writable database that
// holds closeFlushBytes of writes or more; see Close.
func (d *DB) flushAtClose() {
	if d.opts.ReadOnly || d.opts.Follow {
		return
	}
	d.mu.Lock()
	var held int64
	if !d.closed.Load() && d.bgErr == nil && d.mem != nil {
		held = d.mem.m.SizeBytes()
		for _, mt := range d.imm {
			held += mt.m.SizeBytes()
		}
	}
	d.mu.Unlock()
	if held < closeFlushBytes {
		return
	}
	if err := d.Flush(); err != nil {
		d.logger.Warn("simpledb: close: flush failed; the log keeps the writes for the next Open", "err", err)
	}
}

// releaseAll drops the database's references and closes its files.
func (d *DB) releaseAll() error {
	var errs []error
	if d.wal != nil {
		errs = append(errs, d.wal.Close())
	}
	if d.manifest != nil {
		errs = append(errs, d.manifest.Close())
	}
	// Reads that acquire the state from now on get ErrClosed: once the
	// last reference goes, its tables are closed.
	d.swapReadState(nil)
	if d.current != nil {
		d.current.unref(d)
	}
	if d.removeLock {
		d.deleteFile(filepath.Join(d.dir, filenames.LockName)) // while still held, as a failed Open does
	}
	errs = append(errs, d.lock.Close())
	return errors.Join(errs...)
}

func (d *DB) deleteFile(path string) {
	if err := d.fs.Remove(path); err != nil {
		d.logger.Error("simpledb: delete obsolete file", "file", path, "err", err)
	}
}
