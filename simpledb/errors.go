package simpledb

import (
	"errors"
	"fmt"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/errs"
	"github.com/stratadb/strata/vfs"
)

var (
	// ErrNotFound: the key is absent or deleted. It is sstables.ErrNotFound
	// too.
	ErrNotFound = base.ErrNotFound
	// ErrEmptyKey: keys must not be empty. It is the same value as the
	// memstore's and sstables' ErrEmptyKey.
	ErrEmptyKey = base.ErrEmptyKey
	// ErrKeyTooLarge: keys must not exceed MaxKeySize; its message says
	// so, "strata: key over 64 KiB".
	ErrKeyTooLarge = base.ErrKeyTooLarge
	// ErrValueTooLarge: values must not exceed MaxValueSize; its message
	// says so, "simpledb: value over 64 MiB".
	ErrValueTooLarge = fmt.Errorf("simpledb: value over %d MiB", MaxValueSize>>20)
	// ErrValueLength: Batch.PutFunc's appendValue appended another number
	// of bytes than the length declared.
	ErrValueLength = errors.New("simpledb: value of another length than declared")
	// ErrBatchTooLarge: a batch must not exceed MaxBatchSize; its message
	// says so, "simpledb: batch over 512 MiB".
	ErrBatchTooLarge = fmt.Errorf("simpledb: batch over %d MiB", MaxBatchSize>>20)
	// ErrNilBatch: Write was given a nil *Batch.
	ErrNilBatch = errors.New("simpledb: nil batch")
	// ErrClosed: the database, iterator or snapshot was closed or released.
	ErrClosed = errors.New("simpledb: closed")
	// ErrLocked: another Open, in this process or another, holds the
	// directory.
	ErrLocked = vfs.ErrLocked
	// ErrNotDB: the directory holds files but no database; or, for a
	// read-only Open, holds no database at all, or is missing (the error
	// then matches fs.ErrNotExist too).
	ErrNotDB = base.ErrNotDB
	// ErrRangeDelOrder: range deletions need the bytewise key order; a
	// database opened with another Options.Comparator refuses them. (A
	// table's key range must hold its range tombstones, and an unbounded
	// or split tombstone is bounded there by keys only bytewise order
	// provides: the empty key first, k\x00 right after k.)
	ErrRangeDelOrder = errors.New("simpledb: range deletion needs the bytewise key order")
	// ErrPrefixOrder: prefix iteration needs the bytewise key order, in
	// which the keys with a prefix are one range; a database opened with
	// another Options.Comparator refuses NewPrefixIterator.
	ErrPrefixOrder = errors.New("simpledb: prefix iteration needs the bytewise key order")
	// ErrNoMerger: Merge, or a batch holding merges, was given to a
	// database opened without Options.Merger.
	ErrNoMerger = errors.New("simpledb: no merger")
	// ErrMergerMismatch: the database was written with a Merger of
	// another name than Options.Merger's, or with one and opened without
	// any; Open refuses it and leaves the directory as it was.
	ErrMergerMismatch = errors.New("simpledb: written with another merger")
	// ErrMergeFailed: the merger refused an operand at Merge
	// (Merger.CheckOperand), or failed to fold a key's operands at a read
	// (Merger.Merge); the error wraps the merger's.
	ErrMergeFailed = errors.New("simpledb: merge failed")
	// ErrSequenceInUse: NewSequence was given a key whose Sequence is
	// open, in this DB, and not released.
	ErrSequenceInUse = errors.New("simpledb: sequence in use")
	// ErrSequenceMalformed: the key of a Sequence holds a value that is
	// not one (8 bytes, big-endian): a write of another kind was there
	// first.
	ErrSequenceMalformed = errors.New("simpledb: malformed sequence value")
	// ErrSequenceExhausted: a Sequence handed out its last id, the one
	// below math.MaxUint64.
	ErrSequenceExhausted = errors.New("simpledb: sequence exhausted")
	// ErrCounterMalformed: DecodeCounter was given a value that is not a
	// Uint64AddMerger counter (8 bytes).
	ErrCounterMalformed = errors.New("simpledb: malformed counter value")
	// ErrReadOnly: the database was opened with Options.ReadOnly, and
	// refuses every write (Put, Delete, DeleteRange, Write, NewSequence,
	// Flush, Compact).
	ErrReadOnly = errors.New("simpledb: read-only")
	// ErrConflict: a transaction's Commit found that a write committed
	// since its snapshot touched what it read; it wrote nothing. Run it
	// again in a new transaction, which sees that write: see Txn.
	ErrConflict = errors.New("simpledb: transaction conflict")
	// ErrTxnTooOld: a transaction ran so long, beside so many writes, that
	// the database no longer keeps all it must check its commit against;
	// it wrote nothing. Retry it, shorter.
	ErrTxnTooOld = errors.New("simpledb: transaction too old to check")
	// ErrTxnDone: a transaction used after Commit or Discard.
	ErrTxnDone = errors.New("simpledb: transaction done")
	// ErrTxnManaged: a Commit inside Update's, UpdateWith's or View's fn,
	// which commit or discard the transaction themselves when fn returns;
	// it did nothing.
	ErrTxnManaged = errors.New("simpledb: Commit inside Update or View: the transaction commits when fn returns")
	// ErrTxnReadOnly: a write in a read-only transaction (View, or
	// NewTxn(false)).
	ErrTxnReadOnly = errors.New("simpledb: read-only transaction")
	// ErrNotIndexed: a read of a batch NewBatch made; only an indexed
	// batch (NewIndexedBatch) can be read.
	ErrNotIndexed = errors.New("simpledb: the batch is not indexed")
	// ErrOutpaced: a follower's CatchUp (or Open) found the writer's
	// manifest changed under each of its attempts to read the database's
	// files; its view is as it was. Try again later.
	ErrOutpaced = errors.New("simpledb: the writer changed the database under every attempt to catch up")
	// ErrInvalidOption: an Options field holds a value it does not take (a
	// negative one, where that turns nothing off), or a write's
	// WriteOptions are not DefaultSync, Sync or NoSync; the error names
	// it.
	ErrInvalidOption = errors.New("simpledb: invalid option")
	// ErrCheckpointExists: Checkpoint was given a directory that exists
	// and is not empty; it wrote nothing.
	ErrCheckpointExists = errors.New("simpledb: checkpoint directory exists and is not empty")
	// ErrBackground: the log, a flush, a rotation, a compaction or the
	// manifest failed; the database refuses writes, and reads go on. The
	// error wraps the cause. Acknowledged writes are never lost to it. A
	// failure the filesystem caused (an I/O error, a full disk) clears
	// with Resume once the fault has, and out of space clears by itself
	// once space is back; anything else, with a reopen. A compaction out
	// of space fails nothing: writes are refused with ErrBackground only
	// if L0 fills up meanwhile.
	ErrBackground = errors.New("simpledb: background error")
	// ErrWriteOutcomeUnknown: the log failed, an append to it or its fsync,
	// on this write or on an earlier one not yet durable. The write is not
	// applied, but it may be on disk: after a reopen it may be there or
	// not. Such errors match ErrBackground and the I/O error too. A write
	// error that does not match it means the write never reached the log
	// and never will be applied.
	//
	// It is a sentinel wrapped alongside ErrBackground, not an error type:
	// callers need only tell the two outcomes apart (to reconcile after a
	// reopen, or retry an idempotent write), the cause is in the chain, and
	// code that matches ErrBackground alone keeps working.
	ErrWriteOutcomeUnknown = errors.New("simpledb: write outcome unknown")
	// ErrComparatorMismatch: the database, or one of its tables, was
	// written with another key order than this one. The files are intact:
	// it does not match ErrCorruption. It is sstables.ErrComparatorMismatch
	// too.
	ErrComparatorMismatch = base.ErrComparatorMismatch
	// ErrCorruption is matched by every error reporting damaged files; such
	// errors name the file and offset. It is recordio.ErrCorruption and
	// sstables.ErrCorruption too.
	ErrCorruption = base.ErrCorruption
)

// errNoLog is the sync stage's failure when a rotation that failed left
// the database without a log.
var errNoLog = errors.New("simpledb: no log: a rotation failed")

// missingFile is the damage of a file the manifest names that the
// directory lacks. Open names the manifest beside it: the file may be
// gone, or the manifest may have lost the edits that dropped it (cut at an
// edit's end, or an older copy), and only the manifest tells which.
type missingFile struct{ *base.CorruptionError }

func (e missingFile) Unwrap() error { return e.CorruptionError }

// errMissingFile returns the damage of the file at path, a what ("a log",
// "a table", "a blob file") the manifest names, missing.
func errMissingFile(path, what string) error {
	return missingFile{base.Corruptf(path, 0, ErrCorruption, "%s the manifest names is missing", what)}
}

// errManifestNamesMissing is what Open and Verify add to the damage of
// files the manifest at path names and the directory lacks.
func errManifestNamesMissing(path string) error {
	return errs.Errorf("%w: %s names files that are missing: they were deleted, or the manifest lost the edits that dropped them (cut at an edit's end, or an older copy)", ErrCorruption, path)
}

// errStaleRecord is the damage a record of another log is, in a recycled
// log's file, where it ends the log's own records.
var errStaleRecord = errors.New("a record of the file's earlier use")
