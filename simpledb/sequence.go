package simpledb

import (
	"encoding/binary"
	"errors"
	"math"
	"sync"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/internal/base"
)

// DefaultSequenceLease is the lease of a Sequence made with lease 0: ids
// it takes from the database at a time.
const DefaultSequenceLease = 100

// Sequence hands out ids, unique and increasing, from a counter kept under
// one key of the database: what bbolt's NextSequence and Badger's
// GetSequence give. It takes ids from the database a lease at a time, with
// one synced write that stores the first id after the lease, big-endian in
// 8 bytes; Next then hands them out from memory. An id is never handed out
// twice, also across a crash; ids may be skipped: the rest of the lease,
// after a crash, or after a Close without Release. Release stores the next
// id instead, so that a clean shutdown skips none.
//
// The key holds the sequence's state: a write, a deletion or a range
// deletion of it restarts the sequence where that leaves the key. It is
// safe for concurrent use.
type Sequence struct {
	db    *DB
	key   []byte
	lease uint64

	mu       sync.Mutex
	next     uint64 // the next id to hand out
	leased   uint64 // the first id after the lease: what the key holds
	released bool
}

// NewSequence returns the sequence kept under key, which hands out ids a
// lease at a time (0: DefaultSequenceLease). A sequence new to the
// database starts at 0. While one Sequence of key is open, another is
// ErrSequenceInUse: two would hand out the same ids. A value at key that
// is not 8 bytes is ErrSequenceMalformed. A read-only database returns
// ErrReadOnly.
func (d *DB) NewSequence(key []byte, lease uint64) (*Sequence, error) {
	if err := d.checkWritable(); err != nil {
		return nil, err
	}
	if err := base.CheckKey(key); err != nil {
		return nil, err
	}
	if lease == 0 {
		lease = DefaultSequenceLease
	}
	d.seqMu.Lock()
	if d.sequences[string(key)] {
		d.seqMu.Unlock()
		return nil, errs.Errorf("%w: %q", ErrSequenceInUse, key)
	}
	if d.sequences == nil {
		d.sequences = make(map[string]bool)
	}
	d.sequences[string(key)] = true
	d.seqMu.Unlock()

	s := &Sequence{db: d, key: append([]byte(nil), key...), lease: lease}
	v, err := d.Get(key)
	switch {
	case err == nil && len(v) != 8:
		err = errs.Errorf("%w: %q holds %d bytes", ErrSequenceMalformed, key, len(v))
	case err == nil:
		s.next = binary.BigEndian.Uint64(v)
	case errors.Is(err, ErrNotFound):
		err = nil
	}
	if err != nil {
		s.unregister()
		return nil, err
	}
	s.leased = s.next
	return s, nil
}

// Next returns the next id. It writes, synced, only when the lease is used
// up: most calls take a lock and no more. Its errors are Put's, and
// ErrSequenceExhausted after the id below math.MaxUint64; after Release,
// ErrClosed.
func (s *Sequence) Next() (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released {
		return 0, ErrClosed
	}
	if err := s.db.checkOpen(); err != nil {
		return 0, err
	}
	if s.next == s.leased {
		if s.leased == math.MaxUint64 {
			return 0, errs.Errorf("%w: %q", ErrSequenceExhausted, s.key)
		}
		// Synced whatever Options.NoSync says: a lease lost to a crash
		// would hand its ids out again.
		leased := s.leased + min(s.lease, math.MaxUint64-s.leased)
		if err := s.store(leased); err != nil {
			return 0, err
		}
		s.leased = leased
	}
	id := s.next
	s.next++
	return id, nil
}

// Release stores the next id, so that a later Sequence of the key starts
// there and skips none, and frees the key for one. Release the sequence
// before closing the database: otherwise the rest of its lease is skipped.
// A second Release returns ErrClosed.
func (s *Sequence) Release() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released {
		return ErrClosed
	}
	s.released = true
	defer s.unregister()
	if s.next == s.leased {
		return nil // the key holds the next id already
	}
	return s.store(s.next)
}

// store writes next under the key, synced.
func (s *Sequence) store(next uint64) error {
	if err := s.db.Put(s.key, binary.BigEndian.AppendUint64(nil, next), Sync); err != nil {
		return errs.Errorf("simpledb: sequence %q: %w", s.key, err)
	}
	return nil
}

func (s *Sequence) unregister() {
	s.db.seqMu.Lock()
	delete(s.db.sequences, string(s.key))
	s.db.seqMu.Unlock()
}
