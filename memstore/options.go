package memstore

import "github.com/stratadb/strata/internal/base"

// Options configures a Memstore. The zero value is valid: every field's
// comment states the default that its zero value selects.
type Options struct {
	// Seed seeds the heights of the nodes of the memstore's skiplist, so
	// that two memstores given the same writes have the same shape. The
	// default, 0, is a fixed seed like any other.
	Seed uint64
	// Comparator orders keys; tables flushed from the memstore must be
	// written with the same one. Bytewise order is searched a word at a
	// time, skipping the prefix a key shares with its neighbours; any other
	// comparator is called once per node visited. Default: bytewise
	// order (sstables.Bytewise, the same value).
	Comparator *Comparator
	// OffHeap allocates the memstore's entries outside the Go heap, in
	// anonymous mappings (on systems without them, in the heap as
	// usual), so that they neither cost the garbage collector's pacing
	// nor wait for it to be freed. The memory is returned by Release,
	// which the owner calls once nothing reads the memstore any more: the
	// slices its reads returned are then invalid, and a read of them
	// faults. A memstore never released is freed once it is unreachable,
	// as the garbage collector finds it. Default: false, the Go heap.
	OffHeap bool
}

// Comparator orders keys. It is the same type as sstables.Comparator, so
// that a database configures its memstores and its tables with one value.
type Comparator = base.Comparator
