// Package simpledb is an embedded key-value database: an LSM tree on
// Strata's recordio, memstore and sstables layers.
//
// # Usage
//
//	db, err := simpledb.Open("/var/lib/app/db", nil) // creates or recovers
//	defer db.Close()
//	err = db.Put([]byte("k"), []byte("v"))           // durable on return
//	v, err := db.Get([]byte("k"))                    // ErrNotFound if absent
//	b := db.NewBatch(); b.Put(...); b.Delete(...)
//	err = db.Write(b)                                // all or nothing, also across a crash
//	it, err := db.NewIterator(lower, upper)          // [lower, upper), a consistent snapshot
//	for k, v := range it.All() { ... }
//	err = it.Err(); it.Close()
//
// # Design
//
//	Put/Delete/Write -> log (group commit) -> active memstore -> immutable memstores -> flush -> L0
//	Get/iterators    <- memstores, newest first <- L0 tables, newest first <- one table per level L1..L6
//
// Every write gets a sequence number. A batch is one log record, so it
// survives a crash whole or not at all. Writers form groups: one leader
// appends a group's batches to the log, syncs it once for all of them if any
// asked for it, applies them to the memstore and then publishes their
// sequence numbers, so readers see a batch at once. See commit.go.
//
// When the active memstore reaches MemstoreSize it becomes immutable, a new
// one with a new log takes over, and a background goroutine flushes it to
// an L0 table. Writers stall, and Stats counts it, when MaxImmutableMemstores
// are waiting or L0 holds L0StopWritesThreshold tables.
//
// Every change to the set of tables is a version edit, synced to the
// manifest before any file it makes obsolete is deleted. Tables are
// written under a temporary name, synced, renamed and their directory
// synced before an edit names them. After a crash the database opens to
// exactly the tables the manifest names; everything else is removed.
//
// Compaction is leveled and runs in the background: L0 into L1 when L0
// holds L0CompactionTrigger tables, level n into n+1 when n exceeds its
// target size (BaseLevelSize times LevelSizeRatio per level). Outputs are
// split at TargetTableSize, never inside a key. A version of a key is
// dropped only when no reader can see it: each live snapshot keeps the
// newest version it sees, and a tombstone goes only when every snapshot sees
// it and no deeper level holds the key, so deleted keys never come back.
//
// Reads never block on this work: a read takes a reference on the current
// state (memstores and version), which flushes and compactions replace with
// a pointer swap; tables stay open until their last reader is done.
//
// # Recovery and damage
//
// Open replays the logs the manifest still needs, writes what they held to
// an L0 table, starts a new manifest that names a new log, and only then
// creates that log, so that an Open interrupted at any point leaves a
// database the next Open recovers. A torn tail (damage that no valid record
// follows, in its log or any later one) is the unacknowledged end of the
// last write, or a log whose creation was cut short, and is dropped; damage
// anywhere else, in a log, the manifest or a table, is an error matching
// ErrCorruption that names the file and offset, and nothing is deleted. A
// directory holding files but no database gives ErrNotDB.
//
// # Errors
//
// Bad input returns ErrEmptyKey, ErrKeyTooLarge (keys over 64 KiB),
// ErrValueTooLarge (values over MaxValueSize) or ErrBatchTooLarge. Calls after
// Close return ErrClosed; a second Open of a directory returns ErrLocked,
// and one of a database written with another key order
// ErrComparatorMismatch.
//
// When background work (a flush or compaction) or the log cannot write,
// the database fails: reads go on, writes return ErrBackground wrapping the
// cause, and reopening recovers every acknowledged write. A write that
// returned nil is applied, and durable if synced; one that failed before
// reaching the log (bad input, ErrClosed, ErrBackground) never will be; a
// flush or compaction failure does not fail a write already in the log.
// Only a failure of the log itself, on the write or an earlier one not yet
// durable, leaves the outcome open: the error also matches
// ErrWriteOutcomeUnknown, and the write, invisible now, may be back after a
// reopen. Close then reports the failure and does not fsync the log again:
// after a failed fsync a retry proves nothing.
package simpledb
