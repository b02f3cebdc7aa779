package raftstore

import (
	"encoding/binary"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/stratadb/strata/internal/errs"

	"github.com/hashicorp/raft"
	"github.com/stratadb/strata/raftstore/internal/marked"
	"github.com/stratadb/strata/simpledb"
	"github.com/stratadb/strata/sstables"
)

// Store is a raft.LogStore, raft.StableStore and raft.MonotonicLogStore on
// one Strata database. All its methods are safe for concurrent use: writes
// (StoreLogs, DeleteRange, Set, SetUint64) are serialised, reads proceed
// alongside them.
type Store struct {
	db *simpledb.DB

	// mu serialises the log's writes, so that first and last change only
	// together with what the database holds.
	mu sync.Mutex
	// first and last are the indexes of the first and last entry held, both
	// zero when the log is empty. Written under mu, read without it.
	first, last atomic.Uint64
	// batch is StoreLogs' batch, reused from call to call (but not after
	// a batch of more than keptBatch bytes), guarded by mu: growing a
	// fresh 64 KiB batch cost about a tenth of a synced StoreLogs of 64
	// entries of 1 KiB.
	batch *simpledb.Batch
}

// keptBatch bounds the batch StoreLogs keeps for the next call.
const keptBatch = 1 << 20

var (
	_ raft.LogStore          = (*Store)(nil)
	_ raft.StableStore       = (*Store)(nil)
	_ raft.MonotonicLogStore = (*Store)(nil)
)

// Open opens the store in dir, creating it (and the database) if dir is
// missing or empty. A nil opts gives the defaults.
//
// A directory that holds anything else is refused before anything is
// written to it: files that are no Strata database (simpledb.ErrNotDB), a
// Strata database without the store's marker (ErrNotRaftStore), a store of
// an unknown format (ErrFormatVersion). To prove that, an existing database
// is first opened read-only, which replays its logs once more than the
// open that follows.
func Open(dir string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.DB.Comparator != nil && o.DB.Comparator.Name != sstables.Bytewise.Name {
		return nil, errs.Errorf("raftstore: open %s: comparator %q: %w", dir, o.DB.Comparator.Name, ErrKeyOrder)
	}
	db, err := marked.Open(dir, o.DB, marked.Marker{Key: formatKey, Magic: formatMagic, Version: storeFormat})
	switch {
	case errors.Is(err, marked.ErrForeign):
		return nil, errs.Errorf("raftstore: open %s: %w", dir, ErrNotRaftStore)
	case errors.Is(err, marked.ErrVersion):
		return nil, errs.Errorf("raftstore: open %s: %v: %w", dir, err, ErrFormatVersion)
	case err != nil:
		return nil, errs.Errorf("raftstore: open %s: %w", dir, err)
	}
	s := &Store{db: db}
	if err := s.load(); err != nil {
		db.Close()
		return nil, errs.Errorf("raftstore: open %s: %w", dir, err)
	}
	return s, nil
}

// load finds the first and last index: one seek to each end of the log's
// keys.
func (s *Store) load() error {
	it, err := s.db.NewIterator(logLower, logUpper)
	if err != nil {
		return err
	}
	defer it.Close()
	if !it.First() {
		return it.Err()
	}
	first, err := logKeyIndex(it.Key())
	if err != nil {
		return err
	}
	if !it.Last() {
		if err := it.Err(); err != nil {
			return err
		}
		return errs.Errorf("raftstore: log key %d vanished: %w", first, ErrCorruptEntry)
	}
	last, err := logKeyIndex(it.Key())
	if err != nil {
		return err
	}
	s.first.Store(first)
	s.last.Store(last)
	return nil
}

// Close closes the database. Every write that returned nil is durable
// (with DB.NoSync, Close makes it so).
func (s *Store) Close() error {
	return s.db.Close()
}

// DB returns the database under the store, for statistics and tools. Writing
// to it behind the store's back breaks the store.
func (s *Store) DB() *simpledb.DB { return s.db }

// IsMonotonic implements raft.MonotonicLogStore: it reports true, because
// the store holds one run of consecutive indexes and refuses gaps
// (ErrLogGap). Raft then deletes the whole log after installing or
// restoring a snapshot, rather than leaving a gap behind it, which costs
// the store one range deletion.
func (s *Store) IsMonotonic() bool { return true }

// FirstIndex returns the index of the first entry held, 0 if none. It reads
// no disk: the store keeps its bounds in memory.
func (s *Store) FirstIndex() (uint64, error) { return s.first.Load(), nil }

// LastIndex returns the index of the last entry held, 0 if none.
func (s *Store) LastIndex() (uint64, error) { return s.last.Load(), nil }

// GetLog reads the entry at index into log, or returns ErrLogNotFound
// (raft.ErrLogNotFound, unwrapped). log's Data and Extensions are the
// caller's own.
func (s *Store) GetLog(index uint64, log *raft.Log) error {
	var k [logKeyLen]byte
	v, err := s.db.Get(logKey(k[:], index))
	if errors.Is(err, simpledb.ErrNotFound) {
		return ErrLogNotFound
	}
	if err != nil {
		return errs.Errorf("raftstore: get log %d: %w", index, err)
	}
	return decodeEntry(index, v, log)
}

// StoreLog stores one entry, as StoreLogs does.
func (s *Store) StoreLog(log *raft.Log) error {
	return s.StoreLogs([]*raft.Log{log})
}

// StoreLogs stores entries as one batch, synced unless Options.DB.NoSync:
// all of them survive a crash, or none. Their indexes must be consecutive
// and, unless the log is empty, continue or overlap the run it holds
// (entries at indexes it holds are replaced); otherwise ErrLogGap, and
// ErrInvalidLog for a nil entry or index 0. On error nothing is written.
func (s *Store) StoreLogs(logs []*raft.Log) error {
	if len(logs) == 0 {
		return nil
	}
	for i, l := range logs {
		if l == nil || l.Index == 0 {
			return errs.Errorf("raftstore: store logs: entry %d is nil or has index 0: %w", i, ErrInvalidLog)
		}
		if i > 0 && l.Index != logs[i-1].Index+1 {
			return errs.Errorf("raftstore: store logs: index %d follows %d: %w", l.Index, logs[i-1].Index, ErrLogGap)
		}
	}
	lo, hi := logs[0].Index, logs[len(logs)-1].Index

	s.mu.Lock()
	defer s.mu.Unlock()
	first, last := s.first.Load(), s.last.Load()
	if last != 0 && (lo > last+1 || hi+1 < first) {
		return errs.Errorf("raftstore: store logs %d..%d beside %d..%d: %w", lo, hi, first, last, ErrLogGap)
	}
	b := s.batch
	if b == nil {
		b = s.db.NewBatch()
		s.batch = b
	}
	b.Reset()
	var k [logKeyLen]byte
	size := 0
	for _, l := range logs {
		n := entryLen(l)
		size += n
		// Encoded in place in the batch: a copy less of every entry.
		if err := b.PutFunc(logKey(k[:], l.Index), n, func(dst []byte) []byte { return appendEntry(dst, l) }); err != nil {
			return errs.Errorf("raftstore: store log %d: %w", l.Index, err)
		}
	}
	if size > keptBatch {
		s.batch = nil
	}
	if err := s.db.Write(b, simpledb.DefaultSync); err != nil {
		return errs.Errorf("raftstore: store logs %d..%d: %w", lo, hi, err)
	}
	if last == 0 {
		first, last = lo, hi
	} else {
		first, last = min(first, lo), max(last, hi)
	}
	s.first.Store(first)
	s.last.Store(last)
	return nil
}

// DeleteRange deletes the entries from minIdx to maxIdx, inclusive, as one range
// deletion, whatever their number: the prefix that log compaction drops, the
// suffix that a conflicting leader replaces, or all of them. A range that
// would leave entries on both sides of it is ErrLogGap, and deletes nothing;
// one that holds no entry is a no-op.
func (s *Store) DeleteRange(minIdx, maxIdx uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	first, last := s.first.Load(), s.last.Load()
	if last == 0 || minIdx > maxIdx || maxIdx < first || minIdx > last {
		return nil
	}
	lo, hi := max(minIdx, first), min(maxIdx, last)
	if lo > first && hi < last {
		return errs.Errorf("raftstore: delete range %d..%d inside %d..%d: %w", minIdx, maxIdx, first, last, ErrLogGap)
	}
	start := logKey(make([]byte, logKeyLen), lo)
	end := logUpper
	if hi < ^uint64(0) {
		end = logKey(make([]byte, logKeyLen), hi+1)
	}
	b := s.db.NewBatch()
	if err := b.DeleteRange(start, end); err != nil {
		return errs.Errorf("raftstore: delete range %d..%d: %w", minIdx, maxIdx, err)
	}
	if err := s.db.Write(b, simpledb.DefaultSync); err != nil {
		return errs.Errorf("raftstore: delete range %d..%d: %w", minIdx, maxIdx, err)
	}
	switch {
	case lo == first && hi == last:
		first, last = 0, 0
	case lo == first:
		first = hi + 1
	default:
		last = lo - 1
	}
	s.first.Store(first)
	s.last.Store(last)
	return nil
}

// Set stores val under key in the stable store, durably (unless
// Options.DB.NoSync). An empty val is stored and read back as empty.
func (s *Store) Set(key, val []byte) error {
	b := s.db.NewBatch()
	if err := b.Put(stableKey(key), val); err != nil {
		return errs.Errorf("raftstore: set %q: %w", key, err)
	}
	if err := s.db.Write(b, simpledb.DefaultSync); err != nil {
		return errs.Errorf("raftstore: set %q: %w", key, err)
	}
	return nil
}

// Get returns the value of key in the stable store, or nil and
// ErrKeyNotFound if it was never set, as raft expects (and raft.InmemStore
// does).
func (s *Store) Get(key []byte) ([]byte, error) {
	v, err := s.db.Get(stableKey(key))
	if errors.Is(err, simpledb.ErrNotFound) {
		return nil, ErrKeyNotFound
	}
	if err != nil {
		return nil, errs.Errorf("raftstore: get %q: %w", key, err)
	}
	return v, nil
}

// SetUint64 stores val under key as 8 big-endian bytes.
func (s *Store) SetUint64(key []byte, val uint64) error {
	return s.Set(key, binary.BigEndian.AppendUint64(nil, val))
}

// GetUint64 returns the value SetUint64 stored under key, or 0 and a nil
// error if key was never set, as raft expects (and raft.InmemStore does). A
// value that is not 8 bytes (one Set stored) is ErrCorruptEntry.
func (s *Store) GetUint64(key []byte) (uint64, error) {
	v, err := s.Get(key)
	if err == ErrKeyNotFound {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if len(v) != 8 {
		return 0, errs.Errorf("raftstore: get uint64 %q: %d bytes: %w", key, len(v), ErrCorruptEntry)
	}
	return binary.BigEndian.Uint64(v), nil
}
