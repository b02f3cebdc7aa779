// Package skiplist is an ordered map that one goroutine writes while any
// number of others read it without taking a lock, in the tradition of
// LevelDB's and Pebble's memtables.
//
// Its keys and values are any Go values, which may hold pointers, so its
// nodes live in memory that the garbage collector scans, and a key that
// refers to memory (a []byte, a string) is reached through a pointer.
// Strata's memstore, whose keys are bytes, has a skiplist of its own that
// keeps each key inside its node, in an arena the collector never scans
// (see package memstore); this one serves ordered maps of Go values.
//
// # Using it
//
//	m := skiplist.NewBytes[int](nil)       // []byte keys, bytes.Compare order
//	m.Insert([]byte("b"), 2)               // adds; false if the key exists
//	m.Upsert([]byte("a"), 1)               // adds or replaces
//	v, ok := m.Get([]byte("a"))            // 1, true
//	for k, v := range m.All() { ... }      // ascending key order
//	for k, v := range m.Range(lo, hi) { ... } // keys in [lo, hi)
//
//	it := m.NewIterator(&lo, nil)          // bounds [lo, ∞)
//	for ok := it.SeekGE(k); ok; ok = it.Next() { use(it.Key(), it.Value()) }
//
// New takes any comparator; NewOrdered uses the natural order of a
// cmp.Ordered key type; NewAbbreviated adds a key abbreviation that spares
// most comparisons (NewBytes and string keys get one by themselves). Keys
// are never removed. The zero Options are valid.
//
// # Concurrency
//
// At most one goroutine at a time may write, that is call Insert or Upsert;
// callers with several writers serialise them (with a mutex, say).
// Get, Ceiling, Len, AllocatedBytes, All, Range and iterators may run on any
// number of goroutines at once, concurrently with the writer, without
// locking. What they see:
//
//   - A key whose Insert or Upsert returned before a read started is seen by
//     that read. A key being inserted concurrently may or may not be.
//   - Once a reader has seen a key, every later read sees it too: nothing is
//     ever unlinked.
//   - An iteration always ascends strictly. An iterator positioned at a key
//     sees every key that was in the map at that moment and lies ahead.
//   - A value being replaced by a concurrent Upsert is seen whole, old or
//     new, never torn.
//
// An Iterator value itself belongs to one goroutine at a time.
//
// The scheme is the one LevelDB's memtable uses. A new node is fully built
// (key, value, its links to its successors) before a single atomic store
// per level links it into the list, bottom level first, so a reader that
// can reach it finds it complete; Go's memory model makes a reader's atomic
// load of a link observe everything written before the matching store. An
// Upsert of an existing key publishes a pointer to a freshly allocated copy
// of the value with one atomic store.
//
// # Ownership
//
// Keys and values are stored and returned as they are: a key or value that
// refers to memory (a slice, a pointer) shares that memory between the
// writer, the map and every reader. Once inserted, such memory
// must not be modified: a changed key breaks the order searches rely on,
// and readers read values without a lock. An iterator that is not at a key
// returns the zero K and V.
//
// # Layout
//
// A node's height is random: each further level with probability 1/2, drawn
// from the map's own generator seeded by Options.Seed, so a map's shape is
// reproducible. A node is one piece of memory, its tower of links right
// after its key, with no slice header and no pointer to a separate tower:
//
//	+------+---------+-----+--------+--------+--------+-----+----------+
//	| repl | value V | key | abbrev | link 0 | link 1 | ... | link h-1 |
//	+------+---------+-----+--------+--------+--------+-----+----------+
//	   8       V        K      8        8        8              8
//
// repl points at a value stored by Upsert (nil until then: the inserted
// value lives inline, costing no allocation); abbrev is the key's
// abbreviation (see NewAbbreviated; 0 without one); link l points at the
// next node of level l. Nodes come from slabs, one series per height class
// (1, 2, 3, 4, up to 6, up to 8, up to 24 links), each slab twice the size
// of the last up to 64 KiB, so a node costs no allocation of its own and
// carries 2.1 links on average. AllocatedBytes reports the slabs' memory, so
// an owner can account for it honestly.
//
// On a map much larger than the CPU caches a search is bound by memory
// latency: every node it visits is a cache miss. Three choices cut those
// misses: the abbreviation spares the fetch of the key itself at most
// steps; a branching factor of 1/2 visits fewer nodes than 1/4 (about
// log2(n) against 1.5·log2(n)); and a search reads the node one level down
// while it compares the node ahead, so that the two fetches overlap.
package skiplist
