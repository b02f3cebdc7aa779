package memstore

import (
	"errors"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/rangedel"
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
	// ErrInvalidKind is returned by Apply for a kind other than KindSet,
	// KindDelete and KindRangeDelete. It is the same value as
	// sstables.ErrBadKind.
	ErrInvalidKind = base.ErrBadKind
	// ErrBadRangeDel is returned for a range deletion whose start is not
	// before its end. It is the same value as sstables.ErrBadRangeDel.
	ErrBadRangeDel = rangedel.ErrBadTombstone
)
