package base

import (
	"errors"
	"fmt"

	"github.com/stratadb/strata/internal/errs"
)

// MaxKeySize is the longest key any layer accepts, 64 KiB: one limit, so
// that nothing a memstore takes is refused by the table it flushes to.
const MaxKeySize = 64 << 10

// Errors for keys and kinds no layer accepts, re-exported by each public
// package so that errors.Is matches them whichever layer refused.
var (
	// ErrEmptyKey: keys must not be empty.
	ErrEmptyKey = errors.New("strata: empty key")
	// ErrKeyTooLarge: keys must not exceed MaxKeySize. Its message states
	// the limit, for the caller who meets it without reading this.
	ErrKeyTooLarge = fmt.Errorf("strata: key over %d KiB", MaxKeySize>>10)
	// ErrBadKind: an entry's kind is not KindSet, KindDelete or
	// KindMerge (a range deletion is not an entry).
	ErrBadKind = errors.New("strata: unknown entry kind")
)

// CheckKey returns ErrEmptyKey or ErrKeyTooLarge for a key no layer
// accepts.
func CheckKey(key []byte) error {
	switch {
	case len(key) == 0:
		return ErrEmptyKey
	case len(key) > MaxKeySize:
		return errs.Errorf("%w: %d bytes", ErrKeyTooLarge, len(key))
	}
	return nil
}

// CheckKind returns ErrBadKind for a kind that is not an entry's (see
// PointKind).
func CheckKind(kind Kind) error {
	if !PointKind(kind) {
		return errs.Errorf("%w: %v", ErrBadKind, kind)
	}
	return nil
}

// ErrComparatorMismatch: a database or table was written with another key
// order than the one it is opened with. The files are intact: it does not
// match ErrCorruption. simpledb and sstables export it.
var ErrComparatorMismatch = errors.New("strata: written with another comparator")

// ErrNotDB: a directory holds no database. simpledb and inspect export it.
var ErrNotDB = errors.New("strata: directory is not a database")

// ErrNotFound: a key is absent or deleted. simpledb and sstables export it.
var ErrNotFound = errors.New("strata: not found")
