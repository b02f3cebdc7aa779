// Package sstables writes and reads immutable sorted tables: entries (a
// key, a sequence number, a kind and a value) in key order, grouped into
// blocks behind a sparse index and a bloom filter.
//
// # Usage
//
//	w, err := sstables.NewWriter("users.sst", nil) // snappy, 4 KiB blocks, a bloom filter
//	err = w.Add([]byte("alice"), []byte("..."))   // keys in increasing order
//	err = w.Close()                               // durable, then renamed into place
//
//	r, err := sstables.Open("users.sst", nil)
//	v, err := r.Get([]byte("alice"))
//	it := r.NewIterator(&sstables.IterOptions{LowerBound: []byte("a"), UpperBound: []byte("b")})
//	for k, v := range it.All() { ... }
//	for k, v := range it.Backward() { ... }          // from the last entry down
//	err = it.Err()
//	st, err := r.Verify(func(damage error) { ... }) // every block read and checked; tools, not reads
//
// Entries of one key may appear in several versions, newest (highest
// sequence number) first; a tombstone (KindDelete) marks a deletion, and a
// merge operand (KindMerge) a value to fold onto the older versions. A
// table written with Add has one version per key, at sequence number 0. A
// MergingIterator merges tables and memstores into one ordered view, and
// folds merge operands with MergeOptions.Fold.
//
// Iterators walk either way (First, SeekGE, Next; Last, SeekLT, Prev) and
// may switch direction at any entry; once a move runs off one end, a move
// the other way comes back to the entry at that end, as in Pebble. Prev
// costs about what Next does (docs/5-reads.md). Backward, a merging
// iterator that shows each key's newest entry reads all of a key's
// versions (they arrive oldest first) and shows a copy of its value.
//
// # File format
//
// A table is a recordio file (VersionStrata, with the table's codec): every
// block is one record, so each is checksummed and, when that saves at least
// an eighth, compressed. The file is, in order:
//
//	+--------------------+
//	| data block 0       |  recordio record
//	| ...                |
//	| data block n-1     |
//	| filter block       |  optional: a blocked bloom filter (internal/bloom)
//	| index block        |  one entry per data block
//	| range deletions    |  optional (format 2): fragmented range tombstones
//	| properties block   |  Metadata, as tagged fields
//	| footer             |  an uncompressed 64-byte record, always the last 78 bytes
//	+--------------------+
//
// Data and index blocks share one layout. Keys are prefix-compressed against
// the previous key, with a restart point (a whole key) every
// RestartInterval entries, and end in the restart offsets:
//
//	entry:  shared uvarint | unshared uvarint | value length uvarint |
//	        trailer uvarint | key[shared:] | value
//	block:  entry ... | restart offset uint32 LE ... | restart count uint32 LE
//
// A data entry's trailer is seq<<8 | kind. An index entry's value is the
// block handle (offset uvarint, length uvarint, of the block's record) and
// its key a separator: a key at or after the block's last key and before
// the next block's first, shortened where the comparator can (for random
// keys, a few bytes). Its trailer is 0 when the separator sorts before every
// version of its key, else the sequence number plus one.
//
// The range-deletion block (format version 2 and later) holds the table's
// range tombstones, each the deletion of every key in [start, end) as of a
// sequence number, fragmented: sorted, disjoint pieces of key space, each
// with the sequence numbers, newest first, of the tombstones covering it.
// An empty start or end is unbounded on that side (an empty key is no
// valid key). All integers are uvarints:
//
//	block:     fragment count | fragment ...
//	fragment:  start length | start | end length | end | seq count | seq ...
//
// The properties locate it (fields 20 and 21: offset and length of its
// record) and count its fragments (field 22); a table without range
// tombstones has none. Writer.AddRangeDel takes tombstones in any order,
// overlapping, and within or beyond the table's entries; the reader loads
// the block at Open and keeps it in memory. Get, Has and Find see a key
// covered by a newer range tombstone as deleted (KindDelete); a table
// iterator shows every entry, and a MergingIterator given the tombstones
// (MergeOptions.RangeDeletions) hides what they cover, moving the
// iterators older than a tombstone past it with one seek.
//
// Format version 3 lets a value lie in a blob file (see Blob files): its
// entry has kind 4 and, for a value, the value's BlobHandle, four uvarints
// (the file's number, the offset and length of the value's record, the
// value's length). The properties count the table's references per blob
// file (field 24: a count, then each file's number, values and bytes,
// uvarints, by file number ascending), from which an owner knows how much
// of a blob file live tables still need.
//
// Tables of versions 1 (before range deletions) and 2 still read; a build
// that knows an earlier version refuses a later one at Open rather than
// lose its deletions or take a handle for a value.
//
// The footer holds the index, filter and properties handles (offset and
// length, uint64 LE each), the format version (uint32 LE), four reserved
// bytes, which must be zero, and the magic "STRATAST".
//
// # Blob files
//
// A blob file holds values apart from the tables that name them, so that a
// compaction moves a reference to a large value rather than the value
// (docs/12-large-values.md). NewBlobWriter appends values and returns a
// BlobHandle for each: the file's number, the offset and length of the
// value's record, and the value's length. It is written as a table is,
// under a temporary name until Close has made it durable. The file is a
// recordio file with one record per value, compressed when that saves an
// eighth, and ends in a fixed 54-byte trailer record: the file's number,
// its identity, its count of values and their bytes (uint64 LE each), and
// the magic "STRATABL". OpenBlob checks the trailer; BlobReader.Value
// reads a value through the block cache; BlobReader.Verify reads them
// all. A handle that names another file or no value of this one is
// ErrBadBlob, a *CorruptionError like all damage.
//
// A Writer given WriterOptions.Blobs sends there the values of at least
// BlobThreshold bytes (512); Writer.AddBlobRef adds an entry whose value
// already lies in a blob file, as a compaction moving it does. A Reader
// given ReaderOptions.Blobs reads such values: Get and Find at once, an
// iterator only when Value asks for one, so that a walk over keys reads no
// value (a range loop over All asks for each). Iterator.BlobHandle gives
// the handle without reading the value.
//
// # Reading
//
// Open reads the footer, properties, index and filter (with
// ReaderOptions.LoadOnRead, the index at the first read instead and the
// filter at the first point read, so that a table never read holds no
// memory for them, and one only iterated none for its filter), so its cost
// grows with the number of blocks, not of keys; the file is memory-mapped
// unless ReaderOptions.NoMmap says otherwise, and uncompressed blocks are
// then read in place. A page of a mapped file that the disk cannot read
// (an I/O error, a filesystem shut down, a file cut by another process)
// raises SIGBUS in whatever goroutine touches it, which kills the process:
// where that can happen, and the process must survive it, set NoMmap, as
// the simpledb package does unless told otherwise. Get consults the
// filter, searches the index and reads one block.
// Damage anywhere (a checksum, a malformed block, a block handle pointing
// outside the blocks, a missing footer) is an error matching ErrCorruption
// that names the file and offset, never a panic or a wrong value; an I/O
// error is returned as itself.
//
// # Block cache
//
// A Cache holds verified, decompressed blocks for any number of tables,
// keyed by the table's id and the block's offset. A table's id is unique to
// its Reader unless ReaderOptions.CacheID gives a stable one: a database
// passes the table's file number, so that a table it closes to bound its
// open files and reopens later finds its blocks still cached. Blocks under
// a stable id stay until the LRU evicts them or the owner calls
// Cache.EvictTable, once the file is deleted; a Reader's own id's blocks
// go at its Close. A Reader holds its index and filter blocks from their
// load to Close and charges them to its cache; with a stable id it hands
// them to the cache at Close and takes them back at the next Open, so that
// a reopen reads just the footer and properties from the file.
// Cache.Reserve charges other memory to the cache (a database's
// memstores), so that one capacity bounds them all: the cache keeps for
// blocks what the charges leave. Cached blocks live outside the Go heap. A
// full cache takes a point read's block only if it refused the same block
// twice lately, so that a block read once or twice in a long while evicts
// none read often (docs/10-memory.md).
//
// # Memory
//
// Get returns a copy the caller owns. Every other slice a read returns
// aliases memory the table or an iterator owns, so that scans and lookups
// copy nothing, and must not be modified:
//
//   - an iterator's Key is its buffer, which the next move overwrites (a
//     table iterator decodes the next key on top of it);
//   - an iterator's Value lies in the table's read-only mapping (where a
//     write faults) or in the iterator's buffer, which holds a copy of a
//     cached block and is reused; the value Find passes to its callback
//     lies in the mapping, in a cached block that is reused once the
//     callback has returned, or in a buffer that is reused;
//   - Metadata's MinKey and MaxKey are the Reader's.
//
// An iterator's Key and Value are valid until its next move or Close, a
// callback's value until the callback returns, and nothing in the mapping
// after Reader.Close: copy what you keep. An iterator that is not at an
// entry returns nil and 0 from its accessors.
package sstables
