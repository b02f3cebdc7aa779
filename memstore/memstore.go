package memstore

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/stratadb/strata/internal/base"
)

// Kind says what an entry holds: a value (KindSet) or a tombstone
// (KindDelete).
type Kind = base.Kind

const (
	// KindSet marks a value, possibly empty.
	KindSet = base.KindSet
	// KindDelete marks a tombstone.
	KindDelete = base.KindDelete
)

// MaxSeq is the largest sequence number.
const MaxSeq = base.MaxSeq

const (
	// MaxKeySize is the largest key, in bytes: 64 KiB, the limit of every
	// layer.
	MaxKeySize = base.MaxKeySize
	// MaxValueSize is the largest value, in bytes.
	MaxValueSize = 256 << 20
)

var (
	// ErrEmptyKey is returned for a write with a nil or empty key. It is
	// the same value as sstables.ErrEmptyKey and simpledb.ErrEmptyKey.
	ErrEmptyKey = base.ErrEmptyKey
	// ErrKeyTooLarge is returned for a write with a key over MaxKeySize.
	ErrKeyTooLarge = base.ErrKeyTooLarge
	// ErrValueTooLarge is returned for a write with a value over
	// MaxValueSize.
	ErrValueTooLarge = errors.New("memstore: value too large")
	// ErrSeqNotIncreasing is returned by Apply for a sequence number that
	// is not above LastSeq, 0 included.
	ErrSeqNotIncreasing = errors.New("memstore: sequence number not increasing")
	// ErrSeqTooLarge is returned by Apply for a sequence number above
	// MaxSeq, and by Put and Delete once LastSeq is MaxSeq: the sequence
	// numbers are exhausted.
	ErrSeqTooLarge = errors.New("memstore: sequence number above MaxSeq")
	// ErrInvalidKind is returned by Apply for a kind other than KindSet and
	// KindDelete. It is the same value as sstables.ErrBadKind.
	ErrInvalidKind = base.ErrBadKind
)

// Memstore is an in-memory, multi-version sorted store of keys and values:
// the write buffer of an LSM tree. Writes are safe for concurrent use and
// serialised internally; reads never wait for them. See the package comment.
type Memstore struct {
	// mu serialises writers: it guards the list's writer side.
	mu      sync.Mutex
	list    list
	lastSeq atomic.Uint64
}

// New returns an empty memstore. A nil opts selects the defaults.
func New(opts *Options) *Memstore {
	var o Options
	if opts != nil {
		o = *opts
	}
	m := &Memstore{}
	m.list.init(o.Seed, o.Comparator)
	return m
}

// Put sets key to value at sequence number LastSeq()+1. It copies key and
// value. A nil or empty value is stored as an empty value, distinct from a
// deletion.
func (m *Memstore) Put(key, value []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.writeLocked(m.lastSeq.Load()+1, KindSet, key, value)
}

// Delete writes a tombstone for key at sequence number LastSeq()+1.
func (m *Memstore) Delete(key []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.writeLocked(m.lastSeq.Load()+1, KindDelete, key, nil)
}

// Apply writes an entry of the given kind at the caller's sequence number
// seq, which must be above LastSeq() and at most MaxSeq: it is how a
// database replays and applies batches whose sequence numbers it assigned.
// It copies key and value; for KindDelete, value is ignored.
func (m *Memstore) Apply(seq uint64, kind Kind, key, value []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.writeLocked(seq, kind, key, value)
}

// writeLocked checks a write and adds its entry at seq. Every write goes
// through it, so there is one place that checks sequence numbers. The
// caller holds mu, so that LastSeq() cannot change between the caller's
// choice of seq and the check.
func (m *Memstore) writeLocked(seq uint64, kind Kind, key, value []byte) error {
	if err := validate(kind, key, value); err != nil {
		return err
	}
	if kind == KindDelete {
		value = nil
	}
	last := m.lastSeq.Load()
	switch {
	case seq <= last:
		return fmt.Errorf("%w: sequence number %d, last %d", ErrSeqNotIncreasing, seq, last)
	case seq > MaxSeq:
		return fmt.Errorf("%w: sequence number %d, MaxSeq %d", ErrSeqTooLarge, seq, MaxSeq)
	}
	m.list.insert(key, value, base.MakeTrailer(seq, kind))
	// Publish the sequence number after the entry, so that a reader that
	// sees LastSeq() finds every entry up to it.
	m.lastSeq.Store(seq)
	return nil
}

// validate checks a write's arguments.
func validate(kind Kind, key, value []byte) error {
	if err := base.CheckKind(kind); err != nil {
		return err
	}
	if err := base.CheckKey(key); err != nil {
		return err
	}
	if kind == KindSet && len(value) > MaxValueSize {
		return fmt.Errorf("%w: %d bytes, the limit is %d", ErrValueTooLarge, len(value), MaxValueSize)
	}
	return nil
}

// Get returns the newest entry of key: its value and Found, or nil and
// Deleted for a tombstone, or nil and Absent. The value is the stored
// entry's, not a copy (see Iterator.Key): it must not be modified, and
// stays valid.
func (m *Memstore) Get(key []byte) ([]byte, Result) {
	return m.GetAt(key, MaxSeq)
}

// GetAt is Get as of sequence number seq: it returns the newest entry of
// key whose sequence number is at most seq, ignoring later writes. It is how
// a snapshot reads.
func (m *Memstore) GetAt(key []byte, seq uint64) ([]byte, Result) {
	n, same := m.list.find(key, seekTrailer(seq), nil)
	if !same {
		return nil, Absent
	}
	if n.kind() == KindDelete {
		return nil, Deleted
	}
	_, v := m.list.arena.value(m.list.arena.load(), n)
	return v, Found
}

// Len returns the number of entries held: every version of every key,
// tombstones included.
func (m *Memstore) Len() int {
	return int(m.list.length.Load())
}

// SizeBytes returns the memory the memstore holds: the arena chunks that
// hold its entries (whole chunks, used or not), the allocations of large
// entries, and the table that addresses them. It is what a database
// compares with its flush threshold.
func (m *Memstore) SizeBytes() int64 {
	return m.list.arena.allocated.Load()
}

// LastSeq returns the sequence number of the latest write, 0 for an empty
// memstore.
func (m *Memstore) LastSeq() uint64 {
	return m.lastSeq.Load()
}
