// Package simpledb is an embedded key-value database: an LSM tree with a
// group-commit write-ahead log, background flushes and leveled compaction,
// snapshots, range deletion, checkpoints and crash recovery.
//
// # Usage
//
//	db, err := simpledb.Open("/var/lib/app/db", nil) // creates or recovers
//	defer db.Close()
//	err = db.Put(key, value, simpledb.DefaultSync)   // durable on return (unless Options.NoSync)
//	v, err := db.Get(key)                            // ErrNotFound if absent
//	buf, err = db.AppendValue(buf[:0], key)          // into a reused buffer: no allocation
//	err = db.Delete(key, simpledb.NoSync)            // unsynced, whatever Options.NoSync says
//	b := db.NewBatch(); b.Put(...); b.Delete(...)
//	err = b.PutFunc(key, n, appendRecord)            // a value encoded in place in the batch: no copy
//	err = db.Write(b, simpledb.Sync)                 // all or nothing, also across a crash; synced
//	b = db.NewIndexedBatch(); v, err = b.Get(key)    // a batch that reads its writes over the database
//	err = db.Update(3, func(tx *simpledb.Txn) error {...}) // serializable; up to 3 retries on ErrConflict
//	err = db.UpdateWith(simpledb.NoSync, 3, fn)      // the same, unsynced
//	err = db.Merge(key, operand, opts)               // fold into the value, with Options.Merger: a counter's +1
//	err = db.DeleteRange(start, end, opts)           // every key in [start, end), one write
//	it, err := db.NewIterator(lower, upper)          // [lower, upper), a consistent snapshot
//	it, err = db.NewPrefixIterator(prefix)           // the keys that start with prefix
//	for k, v := range it.All() { ... }               // or Backward, AllFrom(k), BackwardBefore(k)
//	err = it.Err(); it.Close()
//	snap := db.NewSnapshot()                         // reads as of now, until Release
//	err = db.Checkpoint(backupDir)                   // a consistent copy that opens on its own
//	seq, err := db.NewSequence(key, 0)               // ids: id, err := seq.Next(); seq.Release()
//
// The Example functions show each in full.
//
// # Ranges
//
// Every call that takes a range (NewIterator, on a DB or a Snapshot, and
// DeleteRange, on a DB or a Batch) takes it half-open, [lower, upper) or
// [start, end), with Pebble's rule for its bounds: only nil is open; any
// other slice, the empty one too, is a bound. In bytewise order the empty
// slice is before every key, so an empty upper bound or end holds no key:
// DeleteRange(k, []byte{}) deletes nothing. A range whose start is at or
// after its end is empty: an iterator over it finds nothing, and a range
// deletion of it is a no-op that writes nothing. The keys with a prefix p
// are the range [p, PrefixUpperBound(p)), which NewPrefixIterator walks.
//
// # Guarantees
//
// A write that returns nil is applied, visible to every read that starts
// after it, and durable if synced (the default; Options.NoSync changes
// it, and a write's WriteOptions override it). An unsynced write survives a crash of the
// process, not of the machine, and becomes durable with a later synced
// write, Flush or Close. A batch is applied whole or not at all, also
// across a crash. Concurrent synced writers share fsyncs.
//
// An iterator or snapshot sees the database as of one moment, whatever is
// written, flushed or compacted meanwhile. Key and value slices an iterator
// returns are the database's own memory, valid until its next move and
// never to be modified; Get's value is the caller's. A DB, and each
// Snapshot, is safe for concurrent use; an Iterator and a Batch are not.
//
// After a crash or a power loss, Open recovers every acknowledged durable
// write, and no part of a batch that was not: the unsynced, unacknowledged
// end of the last write (a torn tail) is dropped. Open proves the files it
// needs before it changes anything: damage is ErrCorruption naming the file
// and offset, with the directory left exactly as it was. Every table and
// log carries an identity the manifest records, so that a file of another
// database, or of an earlier life of this one, is refused even where its
// name, its size and all its checksums are right. Damage inside a table's
// data blocks is reported by the read that reaches it; Verify reads
// everything, and reports all the damage it finds.
//
// # Options and modes
//
// Options' zero value is the defaults, each documented on its field; zero
// always means the default, and a negative value turns off what can be
// turned off (RecycledLogs, BloomBitsPerKey, BlobThreshold) and is
// ErrInvalidOption anywhere else. Options.Comparator orders keys; the
// manifest records it, and Open refuses a database written in another
// order with ErrComparatorMismatch. Options.ReadOnly opens an existing
// database without changing its directory: writes, Flush and Compact
// return ErrReadOnly. Every Open takes the directory's lock: a second one,
// read-only or not, in this process or another, fails with ErrLocked.
// Options.Follow opens a follower instead, which takes no lock and reads a
// database that another Open, in this process or another, is writing:
// it sees the database as of Open, then as of each CatchUp. Verify takes
// no lock either, and verifies a database while it is written.
//
// # Large values
//
// Values of Options.BlobThreshold bytes or more (512) are kept apart
// from the tables, in blob files a flush writes beside its table:
// compactions then move a 10-byte reference rather than the value, so a
// large value is written twice, by the log and the flush, however many
// levels its key goes down. A Get of one reads the blob file too, through
// the block cache; an iterator reads a value only when Value asks for it.
// Space held by values overwritten or deleted comes back without a call:
// compactions copy the live values of a blob file whose garbage passes
// Options.BlobRewriteRatio, and the file goes once no table names it.
// Metrics.Blobs says how much garbage there is. Blob files are checksummed,
// recorded by the manifest with their identity, and verified, checkpointed
// and followed like tables.
//
// # Merges
//
// Options.Merger gives Merge its meaning: Uint64AddMerger counts,
// AppendMerger appends, and a Merger of the caller's may do anything
// associative. A merge is a write that reads nothing: reads (Get,
// iterators, snapshots, indexed batches, transactions) fold a key's
// operands onto its newest value below them, or onto nothing past a
// deletion or range deletion, and compactions fold them ahead of the
// reads, one entry per snapshot stripe. The manifest records the merger's
// name, and Open refuses a database written with a merger unless given the
// same one (ErrMergerMismatch), leaving its directory unchanged.
//
// # Errors
//
// Bad input returns ErrEmptyKey, ErrKeyTooLarge (keys over MaxKeySize),
// ErrValueTooLarge (values over MaxValueSize), ErrValueLength (a PutFunc
// that appended another length than it declared), ErrBatchTooLarge or
// ErrNilBatch; range deletions in a database of another key order than
// bytewise return ErrRangeDelOrder, and prefix iterators ErrPrefixOrder.
// A read of a batch that is not indexed is ErrNotIndexed. A transaction's
// Commit returns ErrConflict when a write since its snapshot touched what it
// read, and ErrTxnTooOld when it outlived what the database keeps to check
// it; a Txn used after Commit or Discard returns ErrTxnDone, a write in
// a read-only one ErrTxnReadOnly, and a Commit inside Update's or View's
// fn ErrTxnManaged. A merge without Options.Merger is
// ErrNoMerger; an operand the merger refuses, or a fold it fails, is
// ErrMergeFailed, naming the key.
// Write options with Sync and NoSync both, or an unknown bit, and
// negative retries for Update, are ErrInvalidOption. A second Sequence of a key in use is ErrSequenceInUse;
// one whose key holds another value, ErrSequenceMalformed. Calls after
// Close return ErrClosed. A directory holding files but no database is
// ErrNotDB. A Checkpoint into a directory that is not empty returns
// ErrCheckpointExists.
//
// When the log, a rotation, a flush or the manifest cannot write, the
// database fails: reads go on, and writes return ErrBackground wrapping
// the cause. What a write's error says of it:
//
//   - An error matching ErrWriteOutcomeUnknown (and ErrBackground): the log
//     failed on this write or an earlier one not yet durable. The write is
//     not visible, but may be back after a reopen; after Resume it is known
//     lost.
//   - Any other error: the write never reached the log and never will be
//     applied.
//
// A failure the filesystem caused needs no reopen: once the fault has
// cleared, Resume writes what the memstores hold to new tables and takes
// writes again, and out of space (ENOSPC, EDQUOT) the database resumes by
// itself once space is back, retrying at growing intervals up to 5 s. A
// compaction out of space fails nothing: writes go on while the log and
// flushes have room, and are refused (ErrBackground) only if L0 fills up
// meanwhile. Damage, and anything else, fails the database until a
// reopen. After a log failure Close reports it and does not fsync the log
// again: after a failed fsync a retry proves nothing.
//
// A log is written through a shared memory mapping where the filesystem
// is known to allow it (ext4, XFS, btrfs, tmpfs); a write the filesystem
// refuses there is an error like any other, never a signal.
//
// # Events
//
// Options.EventListener receives typed events as the background work
// happens: a flush's begin and end (the memstore, the table written), a
// compaction's (its level, input and output tables, bytes read and
// written, or a table moved), a write stall's (memstores or L0 tables),
// a background error and the Resume after it; tables and logs created
// (a log in a recycled file says so) and deleted, a new manifest, an
// fsync of the log slower than Options.DiskSlowThreshold, and a
// follower's catch-up. Ends carry the duration and the error, and share
// their JobID with their begin, as a table created does with its job. The listener is
// called from a goroutine of the database's, in order, outside its locks:
// it never holds up a write, its panics are recovered and logged, and
// Close returns once every event before it is delivered. Stats returns
// the counters (flushes, bytes, stalls, cache hits, ...) at any moment.
//
// The design, and the measurements behind it, are in the repository's
// docs directory; docs/README.md maps this package's parts and the order
// in which to read them.
package simpledb
