package raftstore

import (
	"errors"

	"github.com/hashicorp/raft"
)

var (
	// ErrLogNotFound is raft.ErrLogNotFound itself, returned unwrapped by
	// GetLog for an index the store does not hold: raft compares it with ==.
	ErrLogNotFound = raft.ErrLogNotFound

	// ErrKeyNotFound is returned by Get for a stable-store key that was never
	// set. Its text is exactly "not found", since raft recognises a missing
	// key by that text (as raft.InmemStore and raft-boltdb return it), not by
	// errors.Is; so it carries no "raftstore:" prefix.
	ErrKeyNotFound = errors.New("not found")

	// ErrLogGap: StoreLogs was given entries whose indexes are not
	// consecutive, or that would leave a gap before or after the entries the
	// store holds; or DeleteRange would delete from the middle of them.
	// Nothing was written. The store holds one run of consecutive indexes
	// (see IsMonotonic).
	ErrLogGap = errors.New("raftstore: log index gap")

	// ErrInvalidLog: StoreLogs was given a nil entry or one with index 0,
	// which raft never uses. Nothing was written.
	ErrInvalidLog = errors.New("raftstore: invalid log entry")

	// ErrCorruptEntry: a stored log entry or stable-store value does not
	// decode (an unknown format version, a length past its end, a uint64
	// that is not 8 bytes). The error names the index or key.
	ErrCorruptEntry = errors.New("raftstore: corrupt entry")

	// ErrNotRaftStore: the directory holds a Strata database that is not a
	// raftstore (it has keys but not the store's format marker). Open wrote
	// nothing. A directory holding files that are no database at all gives
	// simpledb.ErrNotDB instead.
	ErrNotRaftStore = errors.New("raftstore: database is not a raft store")

	// ErrFormatVersion: the directory is a raftstore written in a format this
	// build does not know (a newer one). Open wrote nothing.
	ErrFormatVersion = errors.New("raftstore: unknown store format version")

	// ErrKeyOrder: Options.DB.Comparator is not bytewise. The store needs the
	// bytewise order for its big-endian index keys and its range deletions.
	ErrKeyOrder = errors.New("raftstore: the store needs the bytewise key order")
)
