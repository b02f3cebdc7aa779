package sstables

import "sync/atomic"

// slotGate opens the Readers' block slots to a cache's point reads only
// while those reads mostly find their data blocks cached. A read through
// the slots first finds its index entry by the numbers and loads the slot
// and the entry it holds: two or three cache misses, which a hit repays
// by skipping the index's search and the shard's mutex, map and list, but
// a miss pays on top of them. Over 10M keys with a 256 MiB cache, where
// about a quarter of the reads hit, reads through the slots ran 12-19%
// slower than without them (docs/5-reads.md, "The slots only while reads
// hit").
//
// A sample of the point reads (the keys whose filter hash is a multiple
// of gateSample; every key of a table without a filter) notes whether
// each found its block cached, by the slots or the cache's map; each
// window of gateWindow notes sets the gate for the reads after it. The
// gate is the cache's, not each Reader's: a table gets too few reads for
// a window of its own where tables are many (160 at 10M keys, 1M reads
// of which gave each about 6K), and whether reads hit is the cache's
// size against the data's. It starts open, as a cache starts with room.
// The gate costs a read an atomic load, and a sampled read an atomic add.
type slotGate struct {
	open atomic.Bool
	// notes counts the window's sampled reads in its low half and their
	// hits in its high half, so that one add notes a read.
	notes atomic.Uint64
}

const (
	gateSample = 16
	gateWindow = 512
	// A window opens the gate with three hits in four: a hit through the
	// slots saves 0.1-0.2 µs, a miss pays about 0.7 for them, so they
	// break even near four in five (docs/5-reads.md, "The slots only while
	// reads hit"); the gate errs towards them.
	gateHitsToOpen = gateWindow * 3 / 4
)

// sampled reports whether a point read of a key of that hash is to note
// its outcome.
func sampled(hash KeyHash) bool { return hash%gateSample == 0 }

// note records a sampled read's outcome and, at the end of a window,
// opens or closes the gate for the next one.
func (g *slotGate) note(hit bool) {
	d := uint64(1)
	if hit {
		d |= 1 << 32
	}
	// Exactly one read sees its window's count reach gateWindow; it takes
	// that window away, leaving what reads noted since in the next one.
	if v := g.notes.Add(d); uint32(v) == gateWindow {
		g.notes.Add(-v)
		g.open.Store(v>>32 >= gateHitsToOpen)
	}
}
