// Package simpledb is an embedded key-value database: an LSM tree on
// Strata's recordio, memstore and sstables layers.
//
// # Usage
//
//	db, err := simpledb.Open("/var/lib/app/db", nil) // creates or recovers
//	defer db.Close()
//	err = db.Put([]byte("k"), []byte("v"))           // durable on return
//	v, err := db.Get([]byte("k"))                    // ErrNotFound if absent
//	buf, err = db.AppendValue(buf[:0], []byte("k"))  // into a reused buffer: no allocation
//	ok, err := db.Has([]byte("k"))                   // reads no value
//	b := db.NewBatch(); b.Put(...); b.Delete(...)
//	err = db.Write(b)                                // all or nothing, also across a crash
//	err = db.DeleteRange(start, end)                 // every key in [start, end) (nil: unbounded), one write
//	err = db.WriteWithOptions(b, simpledb.NoSync)    // or simpledb.Sync, whatever Options.NoSync says
//	it, err := db.NewIterator(lower, upper)          // [lower, upper), a consistent snapshot
//	for k, v := range it.All() { ... }               // from the first key, wherever it is
//	for k, v := range it.Backward() { ... }          // from the last key down
//	for k, v := range it.AllFrom(k) { ... }          // SeekGE(k), then Next
//	for k, v := range it.BackwardBefore(k) { ... }   // SeekLT(k), then Prev
//	err = it.Err(); it.Close()
//	ro, err := simpledb.Open(dir, &simpledb.Options{ReadOnly: true}) // changes nothing; writes: ErrReadOnly
//	err = db.Checkpoint(backupDir)                   // a consistent copy that opens on its own
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
// Synced writers in a loop would split into two cohorts that take turns,
// each fsync serving the half that came back while the one before it ran;
// so an fsync waits for the writers the last one released to append again,
// at most as long as that fsync took (gather.go). Measured with
// BenchmarkSimpleDBSyncedWrites, old and new code in alternating runs: 4
// writers went from 2.5 to 4.0 writes per fsync and 17K to 23-26K ops/s,
// 16 writers from 8.2 to 15.4-15.7 writes per fsync; bounding the wait by
// the fsync's time instead of a fixed 100 µs took 32 writers from 24 to 30
// and 64 from 34 to 55. A writer that does not come back (it works between
// writes, or stopped) delays the others once, then the next 8 fsyncs do
// not wait.
//
// A log takes writes without a system call each where the filesystem can
// allocate space ahead (Linux: vfs.MappedCreator, on ext4, XFS, btrfs and
// tmpfs): the log allocates 1 MiB at a time, maps it shared, and a write is
// a copy into the mapping; the next chunk is allocated, mapped and its pages
// faulted in by a goroutine while the current one fills, since the page
// faults of a fresh chunk were 16% of a fill's time, more than the copies
// themselves. The copy is in the page cache when the write returns, as
// after write(2), so an unsynced write survives the process being killed
// (make crash kills unsynced writers too); an fsync writes the dirtied
// pages back. Allocating before mapping makes a full disk, as a rule, an
// error of the write that needs the next chunk. A store the filesystem
// refuses all the same (an I/O error, a filesystem shut down, btrfs at a
// full disk, where every write fault reserves space again) would raise
// SIGBUS and kill the process; the copy runs with debug.SetPanicOnFault,
// and what faulted goes through write(2), which returns the error: no
// fault is ever a signal. Elsewhere (FUSE, network and overlay
// filesystems), and where fallocate or mmap is refused, logs are plain
// files written with write(2). Measured on the 2-vCPU machine of the README
// (BenchmarkSimpleDBLogAppend, 1M unsynced puts of 16-byte keys and 100-byte
// values, 3 runs each): 588K-740K ops/s mapped against 435K-440K with one
// write(2) per write, which spent about half the process in the syscall.
// Close cuts the log to its length; a crash leaves the allocated tail as
// zeros, which recovery reads as the end of the log. Allocating ahead also
// sets the file's size ahead, so an fsync commits no size change: here 1
// KiB written and fdatasynced cost 209 µs appended, 146-178 µs into
// fallocated space, 136-165 µs into space written with zeros beforehand
// (2,000 of each, two rounds). Recycled logs get the last.
//
// A rotation's fsync finds the whole 64 MiB log dirty and holds a lone
// unsynced writer 65-80 ms. Starting each filled chunk's writeback in the
// background (sync_file_range) cut that to 7-15 ms but slowed the fill
// itself by a quarter (BenchmarkSimpleDBFillSeq, 102-114 against 140-159
// MB/s, alternating runs): the writeback's I/O submission competed with
// the writer for the two cores. So the log is left to the rotation's fsync.
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
// split at TargetTableSize, never inside a key, and where they would
// overlap more than 10 × TargetTableSize of the level below their own. A
// table that overlaps nothing in the next level (in L0, and no older L0
// table either) moves there by a manifest edit alone, unrewritten, as
// LevelDB and Pebble do: a sequential fill then costs compaction no bytes.
// A version of a key is
// dropped only when no reader can see it: each live snapshot keeps the
// newest version it sees, and a tombstone goes only when every snapshot sees
// it and no deeper level holds the key, so deleted keys never come back.
//
// Reads never block on this work: a read takes a reference on the current
// state (memstores and version), which flushes and compactions replace with
// a pointer swap; a table's file stays until its last reader is done.
//
// # Open files
//
// Options.MaxOpenFiles (default 1000, at least MinMaxOpenFiles, 64) bounds
// the table files held open, as in LevelDB and Pebble: a table cache keeps
// the most recently used tables' readers open and closes the rest, which a
// read reopens when it needs them, checking the file as Open does (a file
// missing, resized or damaged since is ErrCorruption naming it, returned
// to that read). A read pins what it reads: a Get each table it looks in,
// an iterator every L0 table in its range and one table per deeper level,
// a compaction each L0 input and one table of each deeper input level; a
// pinned table is never closed, so the bound is exceeded only while more
// tables than it are pinned at once. The LOCK, the manifest, the logs and
// the tables being written count apart from it. Blocks are cached under
// the table's number, so a reopened table finds them still there, its
// index and filter among them; they leave the cache when the table's file
// is deleted, at the cost of that table's blocks (see the sstables
// package). Stats.OpenTables and Stats.TableReopens show the cache at
// work; see tablecache.go.
//
// A reopen then costs its system calls: open, fstat, the reads of the
// footer and properties, and the close of the table it displaces. Measured
// on the 2-vCPU machine of the README (BenchmarkSimpleDBReadRandomMaxOpenFiles:
// random Gets of 1M keys in 420 tables of 256 KiB, -benchtime 200000x
// -count 5, median and range), 64 open files made 0.85 reopens per Get and
// 30,288 Gets/s (28,302-31,453) against 107,203 (101,688-174,269) with all
// tables open. On the 10 GB scale database (158 tables of 64 MiB, reopened
// with -max-open-files 64 before its checked reads, two runs each) random
// reads ran at 24,801 and 25,094/s against 29,592 and 49,828/s with the
// default bound, with at most 78 descriptors open against 172; before the
// index and filter were cached, each reopen read about 300 KB of them, and
// random reads ran at 4,040/s with a peak RSS of 1,230 MB against 491-526
// MB.
//
// # Range deletions
//
// DeleteRange(start, end), and Batch.DeleteRange, delete every key in
// [start, end) as one write: one log op, one range tombstone, whatever
// the number of keys it covers. A nil (or empty) start or end is
// unbounded on that side: an empty key is no valid key, so it stands for
// the end of the key space without a sentinel. A start at or after end is
// an empty range and a no-op: nothing is written. It deletes what was
// written before it, also earlier in its batch, and nothing written after.
// Range deletions need the bytewise key order (the default): a database
// opened with another Options.Comparator refuses them with
// ErrRangeDelOrder, since the key ranges of tables below rely on keys that
// only bytewise order has (the empty key before all others, k\x00 right
// after k; see below).
//
// In the log a range deletion is an op of kind 2 whose key and value are
// the range's start and end (log format 4; see Batch). The memstore keeps
// range tombstones apart from its entries, fragmented into sorted,
// disjoint pieces each with the sequence numbers of the tombstones
// covering it (see internal/rangedel), and a flush writes them to the L0
// table's range-deletion block (see the sstables package: table format 2).
//
// A point read needs no new step: every memstore and table answers for its
// own range tombstones, reporting a key that one of them covers, newer than
// the key's newest version there, as deleted; since a read visits the
// memstores and levels newest first and stops at the first answer, a
// tombstone hides exactly the older versions below it. The tables a read
// visits are found by key range, and a table's range (the manifest's
// smallest and largest keys) includes its range tombstones: a tombstone
// is found wherever it covers a key. A tombstone's exclusive end e stands
// in for the greatest key it covers, which is one key too many at worst,
// and exact where e is k\x00 (see below); one reaching the end of the key
// space makes the table's largest key 64 KiB of 0xff.
//
// An iterator collects, when it is created, the range tombstones visible
// at its sequence number of every memstore and table that overlaps its
// bounds (a version lists the few tables that hold any, so an iterator of
// a database without range deletions looks at none), and its merge hides
// every entry one of them covers with a higher sequence number, forward
// and backward alike. Since a tombstone is newer than everything it
// covers in the memstores, tables and levels older than its own, once it
// hides an entry the merge moves each of those past it with one seek: a
// scan over a million deleted keys takes tens of microseconds, not a
// walk over a million entries (BenchmarkSimpleDBDeleteRangeScan).
//
// A compaction reads its inputs' range tombstones too. It drops a version
// that one covers within the same snapshot stripe, as it drops a version
// that a newer one shadows; of a fragment's tombstones it keeps the newest
// of each stripe, and drops one in the lowest stripe when no level below
// the output overlaps it, as it drops a point tombstone. The tombstones it
// keeps are split between its output tables: a table that ends at key k
// takes the pieces up to k\x00, the least key after k, and the next table
// the pieces from there, so that the tables of a level stay disjoint.
// A memstore or an output whose keys are all deleted still yields a table,
// of range tombstones alone.
//
// Measured on the 2-vCPU machine of the README, alternating runs: with
// 1,000 live range tombstones in an L0 table that every read consults,
// BenchmarkSimpleDBReadRandomRangeDels (1M keys, Get of random keys)
// reads at 0.906 of the speed without them (0.857-0.923 over 5 runs), a
// cost of 1.10x; the tombstones' binary search is most of it.
// BenchmarkSimpleDBDeleteRangeScan deletes 1M keys in 37 µs (33-56) and
// then scans the empty database in 70 µs (42-82). Without range
// deletions, ReadRandom and Scan run as before (4 alternating runs each
// against the code before them: medians 3.9 against 4.2 µs per Get, 106
// against 119 ms per scan, within the machine's noise).
//
// A database this build opens is written in log format 4 and table format
// 2, and its manifest records the log format: a build from before range
// deletions refuses it at Open, as a manifest naming an unknown log
// format (ErrCorruption), instead of reading it without its range
// deletions. Logs and tables of the earlier formats read as before.
//
// # Iterators
//
// An iterator walks the live keys of its range either way: First, SeekGE
// and Next forward, Last, SeekLT and Prev backward. It may switch
// direction at any key, and once a move runs off one end, a move the other
// way comes back to the key at that end, as Pebble's iterators do. All and
// Backward always start from the first and the last key, whatever the
// iterator's position; AllFrom and BackwardBefore start from a key.
//
// Under the iterator a merging iterator walks the memstores and tables,
// each of which walks backward as cheaply as forward: a table decodes a
// block's restart interval once and steps back through it, a memstore
// steps back through a run of nodes that one search collects (see the
// memstore and sstables packages). Backward, a key's versions arrive
// oldest first, so the merge reads all of a key's versions before it
// knows which is the newest its snapshot sees, and whether that is a
// deletion; it keeps a copy of the value it will show, and Value returns
// that copy.
//
// # Recovery and damage
//
// Open proves before it changes anything. It reads CURRENT and the
// manifest, checks that every log the manifest names exists (each log is
// recorded before anything is written to it, and again with its length
// when a rotation or Close closes it), that every table it names has its
// recorded size and opens, and replays the logs. Only then does it write
// what the logs held to an L0 table, create a new log, start a new
// manifest naming it, switch CURRENT and remove obsolete files; an Open
// interrupted at any point leaves a database the next Open recovers.
//
// A torn tail, the unsynced end of the last write that a crash or power
// loss cut, is dropped: damage at the end of a log that no valid record
// follows, or one that only records follow that were appended before the
// log was synced past it. Every log record carries the log length known
// durable when it was appended, so a power loss that wrote the unsynced
// pages out of order (zeros, then valid records) is a torn tail, while
// damage below a length some record or the manifest vouches for is not.
// The manifest's last edit may be torn the same way, and is dropped only
// if nothing it recorded is needed: a log it made obsolete that is gone
// makes the Open fail instead.
//
// Anything else (a missing or damaged file, a log shorter than its
// recorded length, CURRENT missing beside a database's files) is an error
// matching ErrCorruption that names the file and offset, and the
// directory is left exactly as it was, down to the LOCK file, for a person
// or a tool to act on. Damage inside a table's data blocks is found when a
// read reaches it, which then returns ErrCorruption; Open reads only each
// table's index, filter and properties. A directory holding files but no
// database gives ErrNotDB.
//
// # Read-only open
//
// With Options.ReadOnly, Open proves the database as above and stops
// there: the logs' writes stay in the memstore they were replayed into,
// and nothing is written, renamed or deleted, then or at Close; writes,
// Flush and Compact return ErrReadOnly. A missing or empty directory is
// ErrNotDB and is not created. The directory's lock is taken, as by every
// Open (a LOCK file created for it is removed at Close), so a reader never
// sees a directory a writer is changing; see readonly.go.
//
// # Checkpoints
//
// Checkpoint writes the database as of one moment into a new directory,
// while writes go on: the tables of that moment's version, hard-linked
// (copied where the filesystem cannot link), the memstores' writes up to
// that moment's sequence number as one more table, a new manifest naming
// them all, and CURRENT last, each made durable before the next; no log.
// A checkpoint cut short has no CURRENT and does not open. See
// checkpoint.go.
//
// # Inspection and verification
//
// Tools (the strata command among them) read a database's files without
// opening it for use: ReadLayout returns what the manifest records (the
// tables of each level, the logs still needed), ReadManifest each edit,
// ReadLog each batch with its sequence numbers. Verify checks everything:
// CURRENT, every manifest edit, that each table is there with the size,
// keys and sequence numbers the manifest records and the levels disjoint,
// every block of every table, every record of every log by recovery's
// rules. Unlike Open, which refuses at the first damage, it goes on and
// reports all it can reach; it writes nothing, and takes the lock as a
// read-only Open does. On the 1 GB large scale database it read 971 MiB
// in 0.65 to 0.68 s, against 0.84 to 0.95 s for a full scan (README).
// Options.ErrorIfNotExists makes Open refuse a directory without a
// database, as tools that must never create one need. See inspect.go and
// verify.go.
//
// # Recycled logs
//
// A log whose memstore's flush is durable in the manifest is not deleted
// but kept, up to Options.RecycledLogs (default MaxImmutableMemstores), and
// the next rotation renames it to the new log's name and writes over it
// from its start, as RocksDB (recycle_log_file_num) and Pebble (on by
// default) do: its blocks are written already, so an fdatasync commits the
// data alone, with no unwritten extent to convert and no size to change
// through the filesystem's journal. A mapped log maps the space the file
// has without allocating it again, and allocates ahead only past it; its
// pages are faulted in ahead of the writes, as a new log's are, but those
// no longer cached are read from disk first (the first chunk's during the
// rotation, the others' by the goroutine that prepares them). The renamed
// file gets a fresh header, synced with its directory, and the manifest
// records the new log before anything is written to it, as for a new file;
// see log.go. Open deletes the obsolete logs it finds rather than
// recycling them: they may be of an older log format.
//
// Behind its new records the file still holds its earlier use's, valid
// ones, and a power loss can revert pages written over but not synced to
// them, in any order. So every record carries its log's stamp, and replay
// ends a log's records at the first record of another log, as at damage:
// the end is a torn tail unless a later record of the log's own vouches
// for a durable length past it (the earlier use's records carry their own
// log's synced lengths, and vouch for nothing), and a record of another
// log within a closed log's recorded length is corruption. A file a crash
// leaves renamed but not yet in the manifest holds only another log's
// records, and replays as an empty log.
//
// The stamp is the low 32 bits of the log's identity (log format 5; of its
// number in formats 3 and 4), as in RocksDB's recyclable record header: 4
// bytes per record (3% of a 116-byte fill write, 0.4% of a 1 KiB one)
// rather than 8. They suffice because a file holds at most two uses'
// records, its current one's and the previous one's (each use's Close cuts
// the file to its length, and the next use's first fdatasync makes the cut
// durable), and a reused file's new identity is drawn so that its stamp
// differs from the previous use's. Being random, the stamp is no value a
// write can know: a value that embeds a well-formed log record cannot pass
// for one of the log's own and vouch for a length after a crash.
//
// # Identities
//
// Every table and log the manifest names has a random identity that the
// manifest records with it: a table's in its properties, a log's in its
// first record, written and synced before the edit naming it. Open's
// proof, the table cache's reopens, Verify and Checkpoint's links check
// it, so that a table or log of another database, or of an earlier life
// of this one (a restored backup, a misdirected copy), is refused as
// ErrCorruption even where its name, its length and every checksum in it
// are right. Tables written before identities have none, and the manifest
// records none for them: they open as before, and compaction replaces
// them with tables that have one.
//
// Measured on a 2-vCPU AMD EPYC KVM guest, ext4 on a virtual disk, shared
// with other work (BenchmarkSimpleDBLogRecycling -benchtime 3s -count 5:
// two open databases, recycling and not, in alternating turns of the same
// work; the median and range over the 5 runs of recycled over new, and the
// median of the sync stage's mean fsync time; A/A is the same benchmark
// with recycling off on both sides, the noise):
//
//	logs      workload (memstore)               recycled/new      µs/fsync    A/A
//	write(2)  synced 1 KiB, 1 writer (1 MiB)    1.62 (1.57-1.64)  117 vs 191  0.87 (0.79-1.11)
//	write(2)  synced 1 KiB, 32 writers (1 MiB)  1.17 (1.08-1.31)  268 vs 469
//	write(2)  unsynced fill (4 MiB)             1.13 (1.09-1.25)
//	mapped    synced 1 KiB, 1 writer (1 MiB)    1.03 (0.79-1.13)  145 vs 163  1.00 (0.92-1.02)
//	mapped    synced 1 KiB, 32 writers (1 MiB)  1.02 (0.99-1.02)  439 vs 412
//	mapped    unsynced fill (4 MiB)             1.08 (1.03-1.14)              0.99 (0.97-1.14)
//
// So the gain is where the log appends with write(2), on filesystems that
// cannot map it: each fdatasync of an append also commits the size change,
// and recycling makes it an overwrite. Mapped logs were allocated ahead
// already, and on this ext4 an fdatasync into allocated space costs what
// one into written space does (BenchmarkSimpleDBLogFileSync, 1 KiB written
// and fdatasynced 7,000 times, p50 of 3 runs: 164-176 µs appended with
// write(2), 101-121 µs written over with write(2), 100-113 µs mapped into
// a new file, 113-125 µs mapped into a reused one). Recycling stays on by
// default all the same, as in Pebble: it costs fills nothing (above, and
// BenchmarkSimpleDBFillRandom and LogAppend, 3 runs alternating with the
// commit before it: 278K-392K ops/s against 321K-429K random, 938K-972K
// against 721K-857K mapped sequential, 415K-477K against 373K-455K with
// write(2), within this machine's noise), it spares the filesystem an
// allocation and the conversion of unwritten extents per log wherever
// those cost more than here, and the disk it takes is bounded by the logs
// a database holds at its peak anyway.
//
// # Key order
//
// Options.Comparator orders keys everywhere: memstores, tables, levels,
// iterators and compaction. Its name is recorded in the manifest's first
// edit and in every table, and Open refuses another one with
// ErrComparatorMismatch before it writes anything. Bytewise order, the
// default, is searched in a memstore a word at a time; another order
// costs a call of the comparator per node visited.
//
// # Errors
//
// Bad input returns ErrEmptyKey, ErrKeyTooLarge (keys over 64 KiB),
// ErrValueTooLarge (values over MaxValueSize), ErrBatchTooLarge or
// ErrNilBatch. Calls after Close return ErrClosed; a second Open of a
// directory returns ErrLocked, and one of a database written with another
// key order ErrComparatorMismatch. A MemstoreSize below MinMemstoreSize is
// raised to it. Writes to a database opened with Options.ReadOnly return
// ErrReadOnly, and a Checkpoint into a directory that is not empty
// ErrCheckpointExists.
//
// When the log, a rotation, a flush or the manifest cannot write, the
// database fails: reads go on, writes return ErrBackground wrapping the
// cause. A write that returned nil is applied, and durable if synced; one
// that failed before reaching the log (bad input, ErrClosed,
// ErrBackground) never will be; a flush or compaction failure does not
// fail a write already in the log. Only a failure of the log itself, on
// the write or an earlier one not yet durable, leaves the outcome open:
// the error also matches ErrWriteOutcomeUnknown, and the write, invisible
// now, may be back after a reopen. Close then reports the failure and does
// not fsync the log again: after a failed fsync a retry proves nothing.
//
// A failure the filesystem caused needs no reopen: once the fault has
// cleared, Resume writes what the memstores hold to new tables (on a new
// log, if the log failed, and into a new manifest, if the manifest did)
// and takes writes again; a write whose outcome was unknown is then known
// to be lost. Out of space (ENOSPC, EDQUOT) resumes by itself: the
// database retries 100 ms after the failure, then at doubling intervals
// up to 5 s, and writes succeed again once space is back. A compaction
// out of space fails nothing: it waits and retries likewise, while writes
// go on as long as the log and flushes have room; should L0 fill up
// meanwhile, writes are refused with ErrBackground wrapping the
// compaction's error rather than stall without end. Stats counts
// BackgroundErrors, Resumes and CompactionsPaused. Damage, and anything
// the filesystem did not cause, fails the database until a reopen.
package simpledb
