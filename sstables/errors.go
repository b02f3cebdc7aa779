package sstables

import (
	"errors"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/rangedel"
	"github.com/stratadb/strata/recordio"
)

// ErrCorruption is matched by every error reporting damaged or foreign
// bytes; such errors are *CorruptionError values naming the file and offset.
// It is the same value as recordio.ErrCorruption.
var ErrCorruption = base.ErrCorruption

// CorruptionError describes damaged bytes: file, offset and kind.
type CorruptionError = base.CorruptionError

// Kinds of damage found by this package (recordio reports damage to the
// framing and checksums of blocks). All match ErrCorruption too.
var (
	// ErrBadFooter: the file does not end in an SSTable footer: it is
	// truncated, or not an SSTable.
	ErrBadFooter = errors.New("sstables: bad footer")
	// ErrBadBlock: a data or index block does not decode.
	ErrBadBlock = errors.New("sstables: malformed block")
	// ErrBadFilter: the bloom filter does not decode.
	ErrBadFilter = errors.New("sstables: malformed filter")
	// ErrBadProperties: the properties block does not decode.
	ErrBadProperties = errors.New("sstables: malformed properties")
	// ErrBadRangeDels: the range-deletion block does not decode.
	ErrBadRangeDels = errors.New("sstables: malformed range deletions")
)

// Usage errors; they do not match ErrCorruption.
var (
	// ErrNotFound: Get found no live value for the key. It is
	// simpledb.ErrNotFound too.
	ErrNotFound = base.ErrNotFound
	// ErrOutOfOrder: a key was added out of comparator order, or twice.
	ErrOutOfOrder = errors.New("sstables: key out of order")
	// ErrEmptyKey: keys must not be empty. It is the same value as
	// memstore.ErrEmptyKey and simpledb.ErrEmptyKey.
	ErrEmptyKey = base.ErrEmptyKey
	// ErrKeyTooLarge: keys must not exceed MaxKeySize.
	ErrKeyTooLarge = base.ErrKeyTooLarge
	// ErrBadRangeDel: a range tombstone whose start is not before its end,
	// or whose sequence number is above MaxSeq.
	ErrBadRangeDel = rangedel.ErrBadTombstone
	// ErrBadSeq: a sequence number above MaxSeq.
	ErrBadSeq = errors.New("sstables: sequence number out of range")
	// ErrBadKind: an entry's kind is not KindSet, KindDelete or
	// KindMerge.
	ErrBadKind = base.ErrBadKind
	// ErrUnknownCompression: WriterOptions.Compression is not one of the
	// Compression constants (recordio's error).
	ErrUnknownCompression = recordio.ErrUnknownCompression
	// ErrClosed: the writer, reader or iterator was closed.
	ErrClosed = errors.New("sstables: closed")
	// ErrBadCacheID: ReaderOptions.CacheID has its top bit set.
	ErrBadCacheID = errors.New("sstables: CacheID out of range")
	// ErrComparatorMismatch: the table was written with another comparator.
	// It is simpledb.ErrComparatorMismatch too.
	ErrComparatorMismatch = base.ErrComparatorMismatch
)
