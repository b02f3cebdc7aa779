package simpledb

import (
	"maps"
	"slices"
	"sync"

	"github.com/stratadb/strata/internal/base"
)

// Snapshot is a point-in-time view: reads through it see the database as
// it was when the snapshot was taken, whatever is written after. A live
// snapshot keeps compaction from discarding the versions it sees, so
// release it when done. It is safe for concurrent use. Once the database
// is closed its reads return ErrClosed; iterators made from it before keep
// working until closed.
type Snapshot struct {
	db  *DB
	seq uint64
	// rs is a follower's view, which the snapshot holds: the writer's
	// compactions do not know of the snapshot, and a CatchUp may install
	// tables without the versions it sees. Its reference is dropped by
	// Release under mu, and reads take theirs under mu (acquire).
	rs *readState

	mu       sync.Mutex
	released bool
}

// NewSnapshot takes a snapshot of the current state. On a closed database
// the snapshot is born released: its reads return ErrClosed.
func (d *DB) NewSnapshot() *Snapshot {
	s := &Snapshot{db: d}
	d.commits.beginSnapshot()
	defer func() { d.commits.endSnapshot(s.seq) }() // after DB.mu's release: it is last in, first out
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed.Load() {
		s.released = true
		return s
	}
	if d.opts.Follow {
		rs, err := d.reads.acquire()
		if err != nil {
			s.released = true
			return s
		}
		s.rs = rs
	}
	s.seq = d.commits.visible() // after the view: see readState.get
	d.mu.snapshots.add(s.seq)
	return s
}

// Get reads key as of the snapshot, as DB.Get does.
func (s *Snapshot) Get(key []byte) ([]byte, error) {
	return s.readUnder(nil, key, nil, readCopy)
}

// AppendValue appends the value of key as of the snapshot to dst, as
// DB.AppendValue does.
func (s *Snapshot) AppendValue(dst, key []byte) ([]byte, error) {
	return s.readUnder(nil, key, dst, readAppend)
}

// Has reports whether key had a value as of the snapshot, as DB.Has does.
func (s *Snapshot) Has(key []byte) (bool, error) {
	return found(s.readUnder(nil, key, nil, readNone))
}

// readUnder reads key as of the snapshot, under the writes an indexed
// batch's index holds if it is not nil.
func (s *Snapshot) readUnder(index *batchIndex, key, dst []byte, mode readMode) ([]byte, error) {
	rs, err := s.acquire()
	if err != nil {
		return dst, err
	}
	defer rs.unref()
	if err := base.CheckKey(key); err != nil {
		return dst, err
	}
	return s.db.get(rs, index, key, s.seq, dst, mode)
}

// NewIterator returns an iterator over [lower, upper) as of the snapshot,
// with DB.NewIterator's bounds: nil is open, an empty slice a bound.
func (s *Snapshot) NewIterator(lower, upper []byte) (*Iterator, error) {
	rs, err := s.acquire()
	if err != nil {
		return nil, err
	}
	return s.db.newIterator(rs, lower, upper, s.seq, nil), nil
}

// acquire returns the read state the snapshot reads, with a reference the
// caller must drop, or ErrClosed once the snapshot is released or the
// database closed. It holds s.mu, under which Release drops the
// snapshot's own reference on a follower's view: a reference is taken
// only while that one is held, never on a view already released.
func (s *Snapshot) acquire() (*readState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released {
		return nil, ErrClosed
	}
	if err := s.db.checkOpen(); err != nil {
		return nil, err
	}
	if s.rs == nil {
		return s.db.reads.acquire()
	}
	s.rs.ref()
	return s.rs, nil
}

// NewPrefixIterator returns an iterator over the keys that start with
// prefix as of the snapshot, as DB.NewPrefixIterator does: a database in
// another key order than bytewise refuses with ErrPrefixOrder.
func (s *Snapshot) NewPrefixIterator(prefix []byte) (*Iterator, error) {
	if err := s.db.opts.checkPrefixOrder(); err != nil {
		return nil, err
	}
	return s.NewIterator(prefix, PrefixUpperBound(prefix))
}

// Release frees the snapshot. Later calls return ErrClosed.
func (s *Snapshot) Release() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released {
		return ErrClosed
	}
	s.released = true
	d := s.db
	if s.rs != nil {
		s.rs.unref()
	}
	d.mu.Lock()
	d.mu.snapshots.remove(s.seq)
	d.mu.Unlock()
	return nil
}

// liveSnapshots counts the live snapshots at each sequence number, for
// flushes and compactions, which keep every version one of them sees.
// Guarded by DB.mu.
type liveSnapshots map[uint64]int

func (ls liveSnapshots) add(seq uint64) { ls[seq]++ }

func (ls liveSnapshots) remove(seq uint64) {
	if ls[seq]--; ls[seq] <= 0 {
		delete(ls, seq)
	}
}

// seqs returns the live snapshots' sequence numbers, ascending.
func (ls liveSnapshots) seqs() []uint64 {
	return slices.Sorted(maps.Keys(ls))
}
