package simpledb

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// EventListener receives what the database does in the background, as it
// happens: flushes, compactions, write stalls, failures and recoveries.
// Every field is optional; a nil one skips its event.
//
// The database calls them one at a time, in the order the events
// happened, from a goroutine of its own and outside its locks: a listener
// may call the database (Stats, say), and a slow one delays the events
// after it, never a write, as events wait in memory for it. Close returns
// once every event before it has been delivered. A listener that panics
// has the panic recovered and logged (Options.Logger); the database and
// the events after it are unaffected.
type EventListener struct {
	// FlushBegin and FlushEnd frame the flush of a memstore to an L0 table.
	FlushBegin, FlushEnd func(FlushInfo)
	// CompactionBegin and CompactionEnd frame a compaction, or the move of
	// a table to the next level.
	CompactionBegin, CompactionEnd func(CompactionInfo)
	// WriteStallBegin and WriteStallEnd frame a time writes waited for a
	// flush or a compaction (WriteStallInfo.Cause says which).
	WriteStallBegin, WriteStallEnd func(WriteStallInfo)
	// BackgroundError reports a failure that stopped writes (see
	// ErrBackground), and Resumed the end of one without a reopen (see
	// Resume).
	BackgroundError func(BackgroundErrorInfo)
	Resumed         func(ResumeInfo)
	// TableCreated reports a table a flush or a compaction installed, and
	// TableDeleted a table file deleted, obsolete (or an orphan at Open).
	TableCreated func(TableInfo)
	TableDeleted func(FileInfo)
	// BlobFileCreated reports a blob file a flush or a compaction
	// installed, beside a table whose large values it holds, and
	// BlobFileDeleted one deleted once no table named it.
	BlobFileCreated func(BlobFileInfo)
	BlobFileDeleted func(FileInfo)
	// LogCreated reports a write-ahead log started, in a new file or in
	// an obsolete log's (LogInfo.Recycled), and LogDeleted a log file
	// deleted, obsolete.
	LogCreated func(LogInfo)
	LogDeleted func(FileInfo)
	// ManifestCreated reports a new manifest, at Open or at Resume after
	// the last one failed.
	ManifestCreated func(FileInfo)
	// DiskSlow reports an fsync of the log that took longer than
	// Options.DiskSlowThreshold.
	DiskSlow func(DiskSlowInfo)
	// CaughtUp reports a follower's catch-up (see Options.Follow): the
	// sequence numbers it moved between.
	CaughtUp func(CatchUpInfo)
}

// FlushInfo describes a flush. A FlushBegin and its FlushEnd share JobID.
type FlushInfo struct {
	JobID int
	// MemstoreBytes and Entries are the memstore's size and its entries
	// (every version, deletions included).
	MemstoreBytes int64
	Entries       int
	// Table is the L0 table written and TableBytes its size, at the end;
	// 0 when the memstore held nothing to write.
	Table      uint64
	TableBytes int64
	// Duration is the flush's time, at the end; Err its failure.
	Duration time.Duration
	Err      error
}

// CompactionInfo describes a compaction. A CompactionBegin and its
// CompactionEnd share JobID.
type CompactionInfo struct {
	JobID int
	// Level is the level compacted: Inputs[0] are its tables, Inputs[1]
	// those of Level+1 they overlap, and Outputs, at the end, the tables
	// written to Level+1.
	Level   int
	Inputs  [2][]uint64
	Outputs []uint64
	// Move: the one input table moved to Level+1 by a manifest edit,
	// reading and writing none of its bytes.
	Move bool
	// BytesRead and BytesWritten are the table bytes read and written, at
	// the end; Duration the time it took, Err its failure.
	BytesRead, BytesWritten int64
	Duration                time.Duration
	Err                     error
}

// WriteStallInfo describes a write stall.
type WriteStallInfo struct {
	// Cause is StallMemstores or StallL0.
	Cause string
	// Duration is how long writes waited, at the end.
	Duration time.Duration
}

// The causes of a write stall.
const (
	// StallMemstores: the active memstore is full and
	// Options.MaxImmutableMemstores more await their flush.
	StallMemstores = "memstores"
	// StallL0: L0 holds Options.L0StopWritesThreshold tables, which a
	// compaction must take first.
	StallL0 = "l0 tables"
)

// BackgroundErrorInfo describes a failure that stopped writes.
type BackgroundErrorInfo struct {
	Err error
	// Resumable: Resume may clear it (the database resumes by itself when
	// OutOfSpace, once space is back); else only a reopen does.
	Resumable, OutOfSpace bool
}

// TableInfo describes a table installed.
type TableInfo struct {
	// JobID is the flush's or compaction's that wrote it.
	JobID int
	Num   uint64
	Level int
	Bytes int64
}

// BlobFileInfo describes a blob file installed.
type BlobFileInfo struct {
	// JobID is the flush's or compaction's that wrote it.
	JobID int
	Num   uint64
	// Values counts the values it holds, and Bytes its size.
	Values uint64
	Bytes  int64
}

// FileInfo names a file: its number and its path.
type FileInfo struct {
	Num  uint64
	Path string
}

// LogInfo describes a log started.
type LogInfo struct {
	Num  uint64
	Path string
	// Recycled is the number of the obsolete log whose file it reuses, 0
	// for a new file (see Options.RecycledLogs).
	Recycled uint64
}

// DiskSlowInfo describes a slow fsync.
type DiskSlowInfo struct {
	Path     string
	Duration time.Duration
}

// CatchUpInfo describes a follower's catch-up.
type CatchUpInfo struct {
	// FromSeq and ToSeq are the last sequence numbers it read before and
	// after.
	FromSeq, ToSeq uint64
	Duration       time.Duration
}

// ResumeInfo describes the end of a background error without a reopen.
type ResumeInfo struct {
	// Err is the failure the database resumed from.
	Err error
}

// noListener is the listener of a database without one.
var noListener EventListener

// listener returns the database's listener, an empty one if none.
func (d *DB) listener() *EventListener { return d.events.listener() }

// listener returns the queue's listener, an empty one for a nil queue.
func (q *eventQueue) listener() *EventListener {
	if q == nil {
		return &noListener
	}
	return q.l
}

// eventQueue delivers a listener's events in order, from a goroutine of
// its own, so that the database emits them under its locks without
// waiting for the listener. The queue is unbounded: events are few (a
// flush is megabytes of writes), and dropping one would unpair a Begin.
type eventQueue struct {
	l      *EventListener
	logger *slog.Logger
	jobs   atomic.Int64 // the last JobID

	mu      sync.Mutex
	pending []func()
	closed  bool
	wake    chan struct{} // 1 slot: pending has grown
	done    chan struct{} // closed when run returns
}

// newEventQueue returns the queue of l, running, or nil for a nil l: a
// nil queue emits nothing.
func newEventQueue(l *EventListener, logger *slog.Logger) *eventQueue {
	if l == nil {
		return nil
	}
	q := &eventQueue{l: l, logger: logger, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go q.run()
	return q
}

// job returns a new JobID.
func (q *eventQueue) job() int {
	if q == nil {
		return 0
	}
	return int(q.jobs.Add(1))
}

// emit queues call, a call of one listener function, if the queue runs.
func emit[T any](q *eventQueue, f func(T), info T) {
	if q == nil || f == nil {
		return
	}
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	q.pending = append(q.pending, func() { f(info) })
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *eventQueue) run() {
	defer close(q.done)
	for {
		<-q.wake
		q.mu.Lock()
		batch, closed := q.pending, q.closed
		q.pending = nil
		q.mu.Unlock()
		for _, call := range batch {
			q.deliver(call)
		}
		if closed {
			return
		}
	}
}

// deliver calls a listener, recovering its panic.
func (q *eventQueue) deliver(call func()) {
	defer func() {
		if r := recover(); r != nil {
			q.logger.Error("simpledb: event listener panicked", "panic", fmt.Sprint(r))
		}
	}()
	call()
}

// close delivers the events queued and stops the queue: later events are
// dropped.
func (q *eventQueue) close() {
	if q == nil {
		return
	}
	q.mu.Lock()
	q.closed = true // a second close waits as the first
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	<-q.done
}
