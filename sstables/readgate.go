package sstables

import "sync/atomic"

// readGate decides, from how often a cache's point reads find their data
// blocks cached, what those reads and the cache spend on cached blocks.
//
// slots opens the Readers' block slots to the reads only while they mostly
// hit. A read through the slots first finds its index entry by the
// numbers and loads the slot and the entry it holds: two or three cache
// misses, which a hit repays by skipping the index's search and the
// shard's mutex, map and list, but a miss pays on top of them. Over 10M
// keys with a 256 MiB cache, where about a quarter of the reads hit,
// reads through the slots ran 12-19% slower than without them
// (docs/5-reads.md, "The slots only while reads hit").
//
// fits says whether the blocks the reads return to would mostly hit once
// the cache is full: only then does a block cached into room get its
// hints, and a shard's new memory huge pages (blockMemory). Both cost the
// fill (the hints' build, and on a KVM guest 5 ms for the first touch of
// a 2 MiB page) and pay back on the block's later hits; where the data is
// four times the cache, a quarter of the reads hit, and over 10M keys with
// a 256 MiB cache the two made the first million reads 17% slower
// (docs/5-reads.md, "Fills for a cache that will hold the reads"). While
// the cache fills, uniform reads hit about in proportion to what it holds
// of their data, so the data they read is about the bytes cached over the
// hit rate, and the hit rate once full, the capacity over that. Skewed
// reads hit more, which counts their hot blocks alone, as it should.
//
// A sample of the point reads of the Readers that keep block slots (the
// keys whose filter hash is a multiple of gateSample; every key of a table
// without a filter) notes whether each found its block cached, by the
// slots or the cache's map: where no Reader keeps slots, the gate stays
// open, as the cache was before it. Each window of gateWindow notes sets
// both for the reads after it. The gate is the cache's, not each
// Reader's: a table gets too few reads for a window of its own where
// tables are many (160 at 10M keys, 1M reads of which gave each about
// 6K), and whether reads hit is the cache's size against the data's. Both start open, as a cache starts with room. The
// gate costs a read an atomic load, and a sampled read an atomic add.
type readGate struct {
	slots, fits atomic.Bool
	// notes counts the window's sampled reads in its low half and their
	// hits in its high half, so that one add notes a read.
	notes atomic.Uint64
	// cached is the bytes the cache held at the last window's end.
	cached atomic.Int64
}

// newReadGate returns a gate open to the slots and to what fills build.
func newReadGate() *readGate {
	g := new(readGate)
	g.slots.Store(true)
	g.fits.Store(true)
	return g
}

const (
	gateSample = 16
	gateWindow = 512
	// A window opens the slots with three hits in four: a hit through the
	// slots saves 0.1-0.2 µs, a miss pays about 0.7 for them, so they
	// break even near four in five (docs/5-reads.md, "The slots only while
	// reads hit"); the gate errs towards them. A full cache's hints and
	// huge pages want the same three in four.
	gateHitsToOpen = gateWindow * 3 / 4
)

// sampled reports whether a point read of a key of that hash is to note
// its outcome.
func sampled(hash KeyHash) bool { return hash%gateSample == 0 }

// note records a sampled read's outcome. At the end of a window it
// returns the window's hits and true: the caller then calls decide.
func (g *readGate) note(hit bool) (hits int, ended bool) {
	d := uint64(1)
	if hit {
		d |= 1 << 32
	}
	// Exactly one read sees its window's count reach gateWindow; it takes
	// that window away, leaving what reads noted since in the next one.
	v := g.notes.Add(d)
	if uint32(v) != gateWindow {
		return 0, false
	}
	g.notes.Add(-v)
	return int(v >> 32), true
}

// decide sets the gate from a window of hits, with cached bytes in the
// cache at its end and capacity for blocks. The cache grew or shrank
// during the window: the hits saw it at about the mean of its sizes at
// the window's ends.
func (g *readGate) decide(hits int, cached, capacity int64) {
	g.slots.Store(hits >= gateHitsToOpen)
	mean := (g.cached.Swap(cached) + cached) / 2
	// Once full, the cache would hit capacity/mean of the hits' rate.
	g.fits.Store(mean <= 0 || 4*float64(capacity)*float64(hits) >= 3*float64(mean)*gateWindow)
}
