package simpledb

import (
	"errors"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/vfs"
)

var (
	// ErrNotFound: the key is absent or deleted.
	ErrNotFound = errors.New("simpledb: not found")
	// ErrEmptyKey: keys must not be empty. It is the same value as the
	// memstore's and sstables' ErrEmptyKey.
	ErrEmptyKey = base.ErrEmptyKey
	// ErrKeyTooLarge: keys must not exceed MaxKeySize.
	ErrKeyTooLarge = base.ErrKeyTooLarge
	// ErrValueTooLarge: values must not exceed MaxValueSize.
	ErrValueTooLarge = errors.New("simpledb: value too large")
	// ErrBatchTooLarge: a batch must not exceed MaxBatchSize.
	ErrBatchTooLarge = errors.New("simpledb: batch too large")
	// ErrClosed: the database, iterator or snapshot was closed or released.
	ErrClosed = errors.New("simpledb: closed")
	// ErrLocked: another Open, in this process or another, holds the
	// directory.
	ErrLocked = vfs.ErrLocked
	// ErrNotDB: the directory holds files but no database.
	ErrNotDB = errors.New("simpledb: directory is not a database")
	// ErrBackground: background work (a flush, a compaction, a log write)
	// failed; the database refuses writes until it is reopened. The error
	// wraps the cause. Acknowledged writes are never lost to it.
	ErrBackground = errors.New("simpledb: background error")
	// ErrComparatorMismatch: the database, or one of its tables, was
	// written with another key order than this one. The files are intact:
	// it does not match ErrCorruption.
	ErrComparatorMismatch = errors.New("simpledb: written with another comparator")
	// ErrCorruption is matched by every error reporting damaged files; such
	// errors name the file and offset. It is recordio.ErrCorruption and
	// sstables.ErrCorruption too.
	ErrCorruption = base.ErrCorruption
)
