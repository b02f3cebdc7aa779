package simpledb

import (
	"slices"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/sstables"
)

// compactionIter filters the versions a flush or compaction writes out. It
// reads every version of every key, newest first, and keeps exactly those
// some reader can still see:
//
//   - Snapshots (ascending sequence numbers s0 < s1 < ...) cut each key's
//     versions into stripes: a version with sequence number q belongs to
//     the first snapshot with q <= s, or to the stripe above all snapshots.
//     Readers that see one version of a stripe see all of them, so only the
//     newest version of each stripe is kept.
//   - A tombstone in the lowest stripe (every snapshot sees it) is dropped
//     too when bottom reports that no deeper level can hold the key: there
//     is then nothing left for it to hide.
type compactionIter struct {
	in     sstables.EntryIterator
	snaps  []uint64
	bottom func(key []byte) bool // nil: tombstones are always kept
	// splitBefore, called with each key in order, reports whether the
	// output table must end before it (nil: only its size ends one).
	splitBefore func(key []byte) bool

	key        []byte
	prevStripe int
}

func (c *compactionIter) First() bool {
	c.key = c.key[:0]
	c.prevStripe = -1
	return c.settle(c.in.First())
}

func (c *compactionIter) Next() bool { return c.settle(c.in.Next()) }

func (c *compactionIter) settle(ok bool) bool {
	for ; ok; ok = c.in.Next() {
		key := c.in.Key()
		if c.prevStripe < 0 || string(key) != string(c.key) {
			c.key = append(c.key[:0], key...)
			c.prevStripe = -1
		}
		stripe, _ := slices.BinarySearch(c.snaps, c.in.Seq())
		if stripe == c.prevStripe {
			continue // shadowed, within its stripe, by a newer version
		}
		c.prevStripe = stripe
		if c.in.Kind() == base.KindDelete && stripe == 0 && c.bottom != nil && c.bottom(key) {
			continue
		}
		return true
	}
	return false
}
