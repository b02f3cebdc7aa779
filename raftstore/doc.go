// Package raftstore puts hashicorp/raft's log and stable state on Strata:
// Store is a raft.LogStore, raft.StableStore and raft.MonotonicLogStore on
// one simpledb database, the role raft-boltdb (bbolt) and raft-wal play for
// Consul, Nomad and Vault. It is a module of its own, so that the library
// carries no raft dependency.
//
// # Usage
//
//	store, err := raftstore.Open(dir, nil)            // creates or recovers
//	defer store.Close()
//	r, err := raft.NewRaft(conf, fsm, store, store, snapshots, transport)
//
// The replicated key-value state machine on a second database is package
// raftstore/kv; cmd/raftkv runs it as a cluster of processes.
//
// # Keys
//
// One byte before every key says what it is, so that the log, the stable
// store and the store's marker share one database without meeting:
//
//	'l' + index (uint64, big-endian)   a log entry; big-endian, so keys sort by index
//	's' + key                          a stable-store value (SetUint64: 8 bytes, big-endian)
//	'm' + "format"                     the marker: "strata-raftstore" + format version byte (1)
//
// # Log entries
//
// A log entry's value, format 1 (the index is in the key):
//
//	+--------+--------+--------+-----------+--------------+-------------+---------+------------+
//	| format | type   | flags  | term      | appendedAt   | data length | data    | extensions |
//	| 1 byte | 1 byte | 1 byte | uint64 BE | int64 BE, ns | uvarint     | n bytes | the rest   |
//	+--------+--------+--------+-----------+--------------+-------------+---------+------------+
//	 0        1        2        3           11             19
//
// format is 1. flags bit 0 says that appendedAt (Unix nanoseconds) is set;
// without it the field is zero and AppendedAt the zero time. Other flags,
// another format, or a data length past the value's end are
// ErrCorruptEntry naming the index: a store never returns a wrong entry.
// An empty Data or Extensions reads back as nil. The database checksums
// every log record and table block beneath this, so the layout carries no
// checksum of its own.
//
// # Writes
//
// StoreLogs writes its entries as one batch, synced (unless
// Options.DB.NoSync): one log record and one fsync, which group commit
// shares with concurrent writers, and all or nothing across a crash.
// DeleteRange is one range deletion, whatever the number of entries, so
// log compaction and the removal of a whole log after a snapshot install
// cost the same as deleting one entry; the range tombstone's cost at read
// time is one binary search per table that holds one, and compaction drops
// the deleted entries.
//
// The store holds one run of consecutive indexes. StoreLogs refuses
// entries that are not consecutive, or would leave a gap before or after
// the run (ErrLogGap), and DeleteRange one that would cut the run in two;
// nothing is written then. So FirstIndex and LastIndex are kept in memory:
// Open finds them with one seek to each end of the log's keys, and every
// write moves them under the store's write lock. The store therefore
// reports IsMonotonic, and raft deletes the whole log after installing a
// snapshot (one range deletion) instead of leaving a gap in it.
//
// Entries at indexes already held are replaced, the others kept, as
// raft.InmemStore and raft-boltdb do; raft itself deletes a conflicting
// suffix before it stores the leader's entries.
//
// # Stable store
//
// Set and SetUint64 are synced puts. For a key never set, Get returns
// ErrKeyNotFound, whose text is exactly "not found", and GetUint64 returns
// 0 and no error: what raft.InmemStore does, and what raft checks for (it
// compares the error's text).
//
// # Opening
//
// Open refuses a directory that holds anything but a raftstore before it
// writes anything: files that are no Strata database (simpledb.ErrNotDB),
// a database without the marker or with another one (ErrNotRaftStore), a
// newer format (ErrFormatVersion). Since a read-write simpledb.Open
// rewrites its manifest and logs, a directory that holds files is first
// opened read-only to check the marker, at the cost of replaying its logs
// twice. A database without any key gets the marker.
package raftstore
