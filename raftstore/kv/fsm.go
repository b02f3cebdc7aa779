package kv

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"github.com/stratadb/strata/internal/errs"

	"github.com/hashicorp/raft"
	"github.com/stratadb/strata/raftstore/internal/marked"
	"github.com/stratadb/strata/simpledb"
)

// Keys of the FSM's database: the map's keys after prefixData, the applied
// index and the marker under prefixMeta.
const (
	prefixData = 'd'
	prefixMeta = 'm'
)

var (
	appliedKey = []byte{prefixMeta, 'a', 'p', 'p', 'l', 'i', 'e', 'd'}
	fsmMarker  = marked.Marker{Key: []byte{prefixMeta, 'f', 'o', 'r', 'm', 'a', 't'}, Magic: "strata-raftkv", Version: 1}
	dataLower  = []byte{prefixData}
	dataUpper  = []byte{prefixData + 1}
)

func dataKey(key []byte) []byte {
	k := make([]byte, 1+len(key))
	k[0] = prefixData
	copy(k[1:], key)
	return k
}

// FSMOptions configure an FSM. The zero value (or nil) gives the defaults.
type FSMOptions struct {
	// DB configures the Strata database under the FSM, passed to
	// simpledb.Open as it is. Applied batches are written unsynced whatever
	// DB.NoSync says: the raft log is the durable record (see doc.go).
	DB simpledb.Options
	// RestoreBatchSize bounds the bytes of one batch Restore writes.
	// Default: 4 MiB.
	RestoreBatchSize int
}

// FSM is the replicated map's raft.FSM (and raft.BatchingFSM) on a Strata
// database. Raft calls Apply, ApplyBatch, Snapshot and Restore from one
// goroutine; Get, AppliedIndex and WaitApplied are safe from any.
type FSM struct {
	db   *simpledb.DB
	opts FSMOptions

	// applied is the index of the last entry applied, and written with it.
	applied atomic.Uint64
	// failed holds the error of a failed write: see ErrFailed.
	failed atomic.Pointer[error]

	// mu and waiters wake WaitApplied as applied moves.
	mu      sync.Mutex
	waiters map[chan struct{}]uint64
}

var (
	_ raft.FSM         = (*FSM)(nil)
	_ raft.BatchingFSM = (*FSM)(nil)
)

// OpenFSM opens the FSM's database in dir, creating it if dir is missing or
// empty. A directory that holds anything else is refused with nothing
// written: simpledb.ErrNotDB for files that are no database, ErrNotFSM for
// a database that is not an FSM's.
func OpenFSM(dir string, opts *FSMOptions) (*FSM, error) {
	var o FSMOptions
	if opts != nil {
		o = *opts
	}
	if o.RestoreBatchSize <= 0 {
		o.RestoreBatchSize = 4 << 20
	}
	db, err := marked.Open(dir, o.DB, fsmMarker)
	switch {
	case errors.Is(err, marked.ErrForeign), errors.Is(err, marked.ErrVersion):
		return nil, errs.Errorf("kv: open %s: %v: %w", dir, err, ErrNotFSM)
	case err != nil:
		return nil, errs.Errorf("kv: open %s: %w", dir, err)
	}
	f := &FSM{db: db, opts: o, waiters: map[chan struct{}]uint64{}}
	v, err := db.Get(appliedKey)
	switch {
	case errors.Is(err, simpledb.ErrNotFound):
	case err != nil:
		db.Close()
		return nil, errs.Errorf("kv: open %s: %w", dir, err)
	case len(v) != 8:
		db.Close()
		return nil, errs.Errorf("kv: open %s: applied index of %d bytes: %w", dir, len(v), ErrNotFSM)
	default:
		f.applied.Store(binary.BigEndian.Uint64(v))
	}
	return f, nil
}

// Close closes the database.
func (f *FSM) Close() error { return f.db.Close() }

// DB returns the database under the FSM, for statistics and tools.
func (f *FSM) DB() *simpledb.DB { return f.db }

// Apply applies one committed entry: ApplyBatch of one.
func (f *FSM) Apply(l *raft.Log) interface{} {
	return f.ApplyBatch([]*raft.Log{l})[0]
}

// ApplyBatch applies committed entries as one unsynced Strata batch, which
// also records the last one's index as applied. Each entry's response is
// nil, or an error for a command that does not decode (ErrBadCommand,
// which changes nothing on any node) or for a write that failed
// (ErrFailed). Entries at or below the applied index recorded in the
// database are skipped: raft replays its log from its last snapshot when a
// node restarts, and the database may already hold them.
func (f *FSM) ApplyBatch(logs []*raft.Log) []interface{} {
	resp := make([]interface{}, len(logs))
	if errp := f.failed.Load(); errp != nil {
		for i := range resp {
			resp[i] = *errp
		}
		return resp
	}
	applied := f.applied.Load()
	b := f.db.NewBatch()
	last := applied
	for i, l := range logs {
		if l.Index <= applied {
			continue
		}
		last = l.Index
		if l.Type != raft.LogCommand {
			continue // a configuration change: nothing to write but the index
		}
		c, err := DecodeCommand(l.Data)
		if err != nil {
			resp[i] = errs.Errorf("kv: entry %d: %w", l.Index, err)
			continue
		}
		switch c.Op {
		case OpPut:
			err = b.Put(dataKey(c.Key), c.Value)
		case OpDelete:
			err = b.Delete(dataKey(c.Key))
		}
		if err != nil { // a key or value over simpledb's limits
			resp[i] = errs.Errorf("kv: entry %d: %v: %w", l.Index, err, ErrBadCommand)
		}
	}
	if last == applied {
		return resp
	}
	b.Put(appliedKey, binary.BigEndian.AppendUint64(nil, last))
	if err := f.db.Write(b, simpledb.NoSync); err != nil {
		err = errs.Errorf("kv: apply %d..%d: %v: %w", logs[0].Index, last, err, ErrFailed)
		f.failed.Store(&err)
		for i := range resp {
			resp[i] = err
		}
		return resp
	}
	f.setApplied(last)
	return resp
}

func (f *FSM) setApplied(index uint64) {
	f.applied.Store(index)
	f.mu.Lock()
	for ch, want := range f.waiters {
		if index >= want {
			close(ch)
			delete(f.waiters, ch)
		}
	}
	f.mu.Unlock()
}

// AppliedIndex returns the index of the last entry applied.
func (f *FSM) AppliedIndex() uint64 { return f.applied.Load() }

// WaitApplied waits until the entry at index is applied, or ctx is done.
func (f *FSM) WaitApplied(ctx context.Context, index uint64) error {
	if f.applied.Load() >= index {
		return nil
	}
	ch := make(chan struct{})
	f.mu.Lock()
	if f.applied.Load() >= index {
		f.mu.Unlock()
		return nil
	}
	f.waiters[ch] = index
	f.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		f.mu.Lock()
		delete(f.waiters, ch)
		f.mu.Unlock()
		return errs.Errorf("kv: waiting for entry %d to be applied (applied %d): %w", index, f.applied.Load(), ctx.Err())
	}
}

// Get returns the value of key in this node's copy of the map, as applied
// so far: a stale read, unless the caller made sure of more (Node.Get).
// The value is the caller's.
func (f *FSM) Get(key []byte) ([]byte, error) {
	if errp := f.failed.Load(); errp != nil {
		return nil, *errp
	}
	v, err := f.db.Get(dataKey(key))
	if errors.Is(err, simpledb.ErrNotFound) {
		return nil, ErrNotFound
	}
	return v, err
}

// Snapshot takes a Strata snapshot of the map and the applied index; the
// returned FSMSnapshot streams it while applies go on.
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	if errp := f.failed.Load(); errp != nil {
		return nil, *errp
	}
	return &fsmSnapshot{snap: f.db.NewSnapshot(), applied: f.applied.Load()}, nil
}

// Restore replaces the map with a snapshot's: one range deletion of every
// key, then the snapshot's keys in batches of RestoreBatchSize, then its
// applied index. Until that last batch the recorded applied index is 0,
// so a crash in between leaves a database that raft restores again.
func (f *FSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	if err := f.restore(rc); err != nil {
		return errs.Errorf("kv: restore: %w", err)
	}
	return nil
}

func (f *FSM) restore(r io.Reader) error {
	sr, applied, err := newSnapshotReader(r)
	if err != nil {
		return err
	}
	b := f.db.NewBatch()
	b.DeleteRange(dataLower, dataUpper)
	b.Put(appliedKey, binary.BigEndian.AppendUint64(nil, 0))
	if err := f.db.Write(b, simpledb.NoSync); err != nil {
		return err
	}
	f.applied.Store(0)
	b.Reset()
	size := 0
	for {
		k, v, ok, err := sr.next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if err := b.Put(dataKey(k), v); err != nil {
			return err
		}
		if size += len(k) + len(v) + 16; size >= f.opts.RestoreBatchSize {
			if err := f.db.Write(b, simpledb.NoSync); err != nil {
				return err
			}
			b.Reset()
			size = 0
		}
	}
	b.Put(appliedKey, binary.BigEndian.AppendUint64(nil, applied))
	if err := f.db.Write(b, simpledb.NoSync); err != nil {
		return err
	}
	f.failed.Store(nil)
	f.setApplied(applied)
	return nil
}
