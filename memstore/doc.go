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
//	m.DeleteRange([]byte("a"), []byte("m")) // 4: deletes [a, m)
//	m.Get([]byte("k"))                      // nil, Deleted
//	m.GetAt([]byte("k"), snap)              // "v1", Found
//	for k, v := range m.All() { ... }       // the live keys, in order
//	for k, v := range m.Backward() { ... }  // the same, from the last down
//
// A database assigns sequence numbers itself and calls Apply, which takes
// them as given (each above LastSeq). NewIterator shows the live view at a
// sequence number, one entry per key; NewEntryIterator shows every version
// and tombstone, for a flush or a merging iterator. Both walk either way
// (First, SeekGE, Next; Last, SeekLT, Prev) and switch direction at any
// entry; a move the other way after one ran off an end comes back to the
// entry at that end, as in Pebble.
//
// # Versions
//
// Nothing is overwritten. Every Put, Delete and Apply adds a version (key,
// sequence number, kind, value), and versions are ordered by key
// ascending, then sequence number descending, so the newest version of a
// key comes first:
//
//	("a", 7, set, "x")  ("a", 4, delete)  ("a", 2, set, "w")  ("b", 5, set, "")
//
// A read at sequence number s takes, for each key, the first version with a
// sequence number up to s: at 3 above, "a" is "w"; at 5 it is deleted; at 9
// it is "x". An iterator or a GetAt at an older sequence number keeps seeing
// its point in time while writes continue. An empty value is a value, not a
// deletion.
//
// # Stacks
//
// A write to a key the memstore holds lands on the key's newest entry
// rather than beside it: the entry keeps a stack of up to 32 versions,
// newest on top, and the next write past that starts a new entry. Reads
// see exactly what the order above gives (GetAt and the live view take the
// newest version up to their sequence number; the raw view shows every
// version, stacked or not, in the same order), but the index holds an
// entry per 32 versions of a hot key instead of one per version, so that
// the searches of every read and write of it stay short. Once a memstore
// has taken 1,024 writes, it also remembers the newest entry of the keys
// written last, in a table of 4,096 slots by the key's hash: a write that
// stacks or folds onto a hot key, and a read of it at a recent sequence
// number, then find its entry without a search.
//
// # Folded merges
//
// ApplyMerge writes a merge operand, and folds it into the newest version
// of its key when it can (a database's counter: Folder.Merge adds, and
// Folder.Above is the newest sequence number a snapshot reads at). The
// key's entry then holds the fold as its newest version, numbered as the
// operand, and keeps the version under it for reads at older sequence
// numbers: GetAt and iterators at those see the key as it was, and the
// raw view shows, of each entry, the version its sequence number sees. The
// index does not grow, so a hot counter costs a search of a short list
// and a small record per increment rather than an entry. A fold never
// lands on a stack, nor a stack on a fold: an entry holds one or the other.
//
// # Range deletions
//
// DeleteRange(start, end) deletes, as one write with one sequence number,
// every version written before it of every key in [start, end); an empty
// start or end is unbounded on that side. Range tombstones are not entries:
// the memstore keeps them apart, fragmented into a
// sorted list of disjoint pieces of key space, each with the sequence
// numbers of the tombstones covering it. A point read looks its key up
// there too, by binary search, and a key covered by a range tombstone
// newer than its newest visible version is Deleted; the live view skips
// such keys; the raw view (NewEntryIterator) shows every entry, and
// RangeDeletions returns the fragments for a flush or a merging iterator.
//
// The list is copied with each new tombstone and published with an atomic
// store, so readers take no lock: a range deletion costs O(t log t) for t
// tombstones held, nothing per key it covers. That suits the few range
// deletions an application issues; SizeBytes counts the list, so a flood
// of them fills the memstore and it is flushed.
//
// # Concurrency
//
// Writes (Put, Delete, Apply) are safe for concurrent use: a mutex
// serialises them. Reads (Get, GetAt, Len, SizeBytes, LastSeq, All,
// iterators) take no lock and run concurrently with the writer and with
// each other; the index publishes each entry with atomic stores, in the
// scheme of LevelDB's memtable. A write is visible to every
// read that starts after it returns, and LastSeq is raised only once its
// entry is in place, so a read at LastSeq() sees every entry up to it. An iterator reads at a
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
// moves on or closes. Off the heap (Options.OffHeap) they stay valid until
// Release, and only while the memstore itself is reachable: a slice does
// not keep it alive, and its memory is unmapped once the garbage collector
// finds it unreachable. An iterator that is not at an entry returns nil
// and 0 from its accessors.
//
// SizeBytes counts whole chunks, used or not, the allocations of large
// nodes and values with the Go allocator's rounding, and the table: it is,
// within a fraction of a percent, the memory the memstore really holds,
// about 42 bytes per entry beyond its key and value bytes for 16-byte keys
// (a node of 56 bytes less its key, and the ends of chunks), which is what
// a database weighs against its flush threshold. Memory is released all
// at once, when the memstore is dropped. With Options.OffHeap it lies in
// anonymous mappings outside the Go heap, which Release returns at once
// (a database's memstores, which would otherwise let the heap grow to
// twice their size before a collection).
package memstore
