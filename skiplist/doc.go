// Package skiplist is an ordered map that one goroutine writes while any
// number of others read it without taking a lock. It is the index under
// Strata's memstore, in the tradition of LevelDB's and Pebble's memtables.
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
// cmp.Ordered key type. Keys are never removed.
//
// # Concurrency
//
// At most one goroutine at a time may write, that is call Insert or Upsert;
// callers with several writers serialise them (the memstore uses a mutex).
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
// # Layout
//
// A node's height is random: each further level with probability 1/4, drawn
// from the map's own generator seeded by Options.Seed, so a map's shape is
// reproducible. A node carries 4/3 links on average. Its level-0 link is
// inline; the links of levels 1 and up of a taller node are carved from a
// shared tower slab and reached through one pointer, so a node pays no
// slice header and no per-node allocation:
//
//	node                                    tower slab
//	+----------+-----+------+-------+------+     +--------+--------+---
//	| value V  | key | next | upper | repl | --> | level1 | level2 | ...
//	+----------+-----+------+-------+------+     +--------+--------+---
//	             K      8       8      8
//
// next is the level-0 link, upper points at the node's higher links (nil
// for height 1), and repl points at a value stored by Upsert (nil until
// then: the inserted value lives inline, costing no allocation). Nodes are
// allocated in slabs that grow to 64 KiB. AllocatedBytes reports the slabs'
// memory, so an owner such as the memstore can account for it honestly.
package skiplist
