// Package memstore is Strata's in-memory write buffer: a sorted,
// multi-version store of keys and values that the database writes to first
// and flushes to an SSTable when it grows large.
//
// # Using it
//
//	m := memstore.New(nil)
//	m.Put([]byte("k"), []byte("v1"))        // sequence number 1
//	snap := m.LastSeq()                     // a point in time
//	m.Put([]byte("k"), []byte("v2"))        // 2
//	m.Delete([]byte("k"))                   // 3: a tombstone
//	m.Get([]byte("k"))                      // nil, Deleted
//	m.GetAt([]byte("k"), snap)              // "v1", Found
//	for k, v := range m.All() { ... }       // the live keys, in order
//
// A database assigns sequence numbers itself and calls Apply, which takes
// them as given (each above LastSeq). NewIterator shows the live view at a
// sequence number, one entry per key; NewEntryIterator shows every version
// and tombstone, for a flush or a merging iterator.
//
// # Versions
//
// Nothing is overwritten. Every Put, Delete and Apply adds an entry (key,
// sequence number, kind, value), and entries are ordered by key ascending,
// then sequence number descending, so the newest version of a key comes
// first:
//
//	("a", 7, set, "x")  ("a", 4, delete)  ("a", 2, set, "w")  ("b", 5, set, "")
//
// A read at sequence number s takes, for each key, the first entry with a
// sequence number up to s: at 3 above, "a" is "w"; at 5 it is deleted; at 9
// it is "x". An iterator or a GetAt at an older sequence number keeps seeing
// its point in time while writes continue. An empty value is a value, not a
// deletion.
//
// # Concurrency
//
// Writes (Put, Delete, Apply) are safe for concurrent use: a mutex
// serialises them. Reads (Get, GetAt, Len, SizeBytes, LastSeq, All,
// iterators) take no lock and run concurrently with the writer and with
// each other; the skiplist below publishes each entry with atomic stores
// (see package skiplist). A write is visible to every read that starts
// after it returns, and LastSeq is raised only once its entry is in place,
// so a read at LastSeq() sees every entry up to it. An iterator reads at a
// fixed sequence number and never sees a later write. An Iterator value
// itself belongs to one goroutine at a time.
//
// # Memory
//
// Writes copy the caller's key and value, which the caller may reuse at
// once. Slices that reads return (Get's and GetAt's value, an iterator's
// Key and Value, All's keys and values) are the stored bytes, not copies,
// so that reads allocate nothing. They must not be modified: a write would
// change the entry for every reader and for the table the next flush
// writes, and a changed key breaks the order searches and iterators rely
// on; appending is safe, as their capacity ends with them. The memstore
// never overwrites or frees them, so they stay valid after an iterator
// moves on or closes. An iterator that is not at an entry returns nil and 0
// from its accessors.
//
// Key and value bytes go into an arena of 64 KiB chunks; an entry over
// 16 KiB gets an allocation of its own. Each entry is a skiplist node of
// 40 bytes plus its tower, 8 bytes per link and 2.1 links on average, taken
// from slabs:
//
//	skiplist node                                       arena chunk
//	+------+------+--------+--------+---------+--------+---------+ +-----+-------+
//	| repl | data | keyLen | valLen | trailer | abbrev | links.. | | key | value |
//	+------+------+--------+--------+---------+--------+---------+ +-----+-------+
//	    8     8       4        4         8         8     8 each
//
// data points into the arena, trailer is seq<<8 | kind, abbrev holds the
// key's first 8 bytes so that most comparisons need not fetch the key
// (repl is the skiplist's, unused here). SizeBytes counts whole chunks and
// slabs, used or not, including the Go allocator's rounding but for a tail
// shorter than one node at the end of a slab: it is, within a fraction of a
// percent, the memory the memstore really holds, about 57 bytes per entry
// beyond its key and value bytes, which is what a database weighs against
// its flush threshold. Memory is released all at once, when the memstore is dropped.
package memstore
