package simpledb

import (
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/internal/filenames"
	"github.com/stratadb/strata/internal/manifest"
	"github.com/stratadb/strata/sstables"
	"github.com/stratadb/strata/vfs"
)

// DB is an embedded key-value database. All its methods are safe for
// concurrent use.
//
// It assembles parts, each of which owns its state (docs/README.md maps
// them): the commit pipeline (commits) and the oracle (oracle) write; the
// version set and the flush scheduler, inside mu, change what the tables
// and memstores hold; the read states (reads) publish it; the table cache
// (tables) and logFiles (logs) open files. DB itself holds what they share
// and the order of their locks: closeMu, the commit pipeline's log lock,
// its publication lock, mu, the pipeline's sync lock, a goroutine holding
// one taking only later ones. The pipeline's queue lock, reads' lock,
// seqMu and the oracle's lock are innermost: nothing is locked under them.
// (Snapshot.mu comes before mu, Sequence.mu before closeMu.) The write
// path holds the log lock while it appends and while a writer stalls, so
// nothing a reader or Stats needs is guarded by it.
type DB struct {
	dir    string
	opts   Options
	fold   func(key, older, newer []byte) ([]byte, error) // Options.Merger's, for the merges below; nil without one
	fs     vfs.FS
	logger *slog.Logger
	// events delivers Options.EventListener's events, from Open to Close;
	// nil without a listener.
	events *eventQueue
	// latencies and the transactions' counts are Metrics' own: the paths
	// they count add to them without a lock.
	latencies    latencies
	txnCommits   atomic.Int64
	txnConflicts atomic.Int64
	lock         io.Closer
	// removeLock: a read-only Open created the LOCK file, and Close
	// removes it, so that the directory is left as it was found.
	removeLock bool
	// cache is the block cache, which the memstores and the open tables'
	// indexes and filters are charged to: its capacity is
	// Options.MemoryBudget.
	cache  *sstables.Cache
	tables *tableCache // the open tables, at most opts.MaxOpenFiles
	logs   logFiles

	// closeMu is held shared by writes, exclusively by Close.
	closeMu sync.RWMutex
	commits *commitPipeline
	oracle  oracle

	// mu guards the parts and fields inside it. It is never held across a
	// log write or a table write, only across a manifest write (an edit
	// must be logged and installed in order) and the file deletions that
	// installing it may cause.
	mu struct {
		sync.Mutex
		versions   versionSet
		memstores  flushScheduler
		compaction compactionState
		failure    failureState
		snapshots  liveSnapshots
		stats      statCounters
		// memCharge is the memstores' charge to the memory budget.
		memCharge int64
	}
	cond   *sync.Cond  // on mu; broadcast whenever flush, compaction or failure state changes
	failed atomic.Bool // mu.failure holds a failure; read without mu on hot paths
	// closed is set (under mu, so waiters on cond see it) by Close; read
	// anywhere. closing is closed then too, for goroutines that sleep.
	closed  atomic.Bool
	closing chan struct{}

	reads readStates

	// resumeMu serializes Resume calls, followMu a follower's catch-ups.
	resumeMu sync.Mutex
	followMu sync.Mutex
	bgWG     sync.WaitGroup // the background goroutines, which Close waits for

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
	logSize, err := d.commits.close()

	d.bgWG.Wait()
	// A follower's CatchUp under way, which reads d.mu.versions.current() and opens
	// tables, ends before they are released; it sees closed and stops.
	d.followMu.Lock()
	d.followMu.Unlock()
	d.mu.Lock()
	recycled := d.mu.versions.takeRecycledLogs()
	d.mu.Unlock()
	for _, l := range recycled {
		d.deleteFile(filenames.LogPath(d.dir, l.Num))
	}
	if err == nil && logSize > 0 {
		// The log is whole and durable: record its length, so that the next
		// Open tells damage to its end from a torn tail.
		d.mu.Lock()
		err = d.mu.versions.writeEdit(&manifest.Edit{Logs: []manifest.LogInfo{{Num: d.mu.memstores.active().logNum, Size: uint64(logSize)}}})
		d.mu.Unlock()
	}
	if rerr := d.releaseAll(); err == nil {
		err = rerr
	}
	d.events.close() // after every file the close deletes
	if err != nil {
		return errs.Errorf("simpledb: close: %w", err)
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
	if !d.closed.Load() && d.mu.failure.err() == nil && d.mu.memstores.active() != nil {
		held = d.mu.memstores.held()
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
	var closeErrs []error
	if d.commits != nil {
		closeErrs = append(closeErrs, d.commits.release())
	}
	// Reads that acquire the state from now on get ErrClosed: once the
	// last reference goes, its tables are closed.
	d.reads.swap(nil)
	closeErrs = append(closeErrs, d.mu.versions.close())
	if d.removeLock {
		d.deleteFile(filepath.Join(d.dir, filenames.LockName)) // while still held, as a failed Open does
	}
	closeErrs = append(closeErrs, d.lock.Close())
	return errors.Join(closeErrs...)
}

func (d *DB) deleteFile(path string) {
	if err := d.fs.Remove(path); err != nil {
		d.logger.Error("simpledb: delete obsolete file", "file", path, "err", err)
		return
	}
	switch kind, num := filenames.Parse(filepath.Base(path)); kind {
	case filenames.Table:
		emit(d.events, d.listener().TableDeleted, FileInfo{Num: num, Path: path})
	case filenames.Log:
		emit(d.events, d.listener().LogDeleted, FileInfo{Num: num, Path: path})
	}
}
