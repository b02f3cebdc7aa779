package simpledb

import (
	"bytes"
	"slices"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/rangedel"
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
//   - A version that a range tombstone of the inputs covers, newer than
//     the version but in the same stripe, is dropped: every reader that
//     sees the version sees the tombstone.
//   - A tombstone in the lowest stripe (every snapshot sees it) is dropped
//     too when bottom reports that no deeper level can hold the key: there
//     is then nothing left for it to hide.
//
// Range tombstones are filtered alike (rangeDelsOut): of a fragment's
// sequence numbers only the newest of each stripe is kept, and one in the
// lowest stripe is dropped when bottomRange reports that no deeper level
// overlaps the fragment.
type compactionIter struct {
	in     sstables.EntryIterator
	snaps  []uint64
	bottom func(key []byte) bool // nil: tombstones are always kept
	// bottomRange reports whether no deeper level overlaps [start, end)
	// (empty: unbounded); nil: range tombstones are always kept.
	bottomRange func(start, end []byte) bool
	// rangeDels are the inputs' range tombstones, fragmented.
	rangeDels rangedel.List
	// splitBefore, called with each key in order, reports whether the
	// output table must end before it (nil: only its size ends one).
	splitBefore func(key []byte) bool

	key        []byte
	prevStripe int
	frag       int // the fragment of rangeDels the last lookup found
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
		stripe := c.stripe(c.in.Seq())
		if stripe == c.prevStripe {
			continue // shadowed, within its stripe, by a newer version
		}
		c.prevStripe = stripe
		if t := c.coveredBy(key, c.in.Seq()); t > 0 && c.stripe(t) == stripe {
			continue // deleted, within its stripe, by a range tombstone
		}
		if c.in.Kind() == base.KindDelete && stripe == 0 && c.bottom != nil && c.bottom(key) {
			continue
		}
		return true
	}
	return false
}

func (c *compactionIter) stripe(seq uint64) int {
	stripe, _ := slices.BinarySearch(c.snaps, seq)
	return stripe
}

// coveredBy returns the oldest of the range tombstones newer than seq that
// cover key, or 0: the one that may share the version's stripe.
func (c *compactionIter) coveredBy(key []byte, seq uint64) uint64 {
	if len(c.rangeDels) == 0 {
		return 0
	}
	if c.frag >= len(c.rangeDels) || !c.rangeDels[c.frag].Contains(bytes.Compare, key) {
		if c.frag = c.rangeDels.Find(bytes.Compare, key); c.frag < 0 {
			c.frag = 0
			return 0
		}
	}
	var t uint64
	for _, s := range c.rangeDels[c.frag].Seqs { // newest first
		if s <= seq {
			break
		}
		t = s
	}
	return t
}

// rangeDelsOut returns the range tombstones the output keeps.
func (c *compactionIter) rangeDelsOut() rangedel.List {
	var out rangedel.List
	for _, f := range c.rangeDels {
		var seqs []uint64
		prev := -1
		for _, s := range f.Seqs { // newest first
			if stripe := c.stripe(s); stripe != prev {
				seqs = append(seqs, s)
				prev = stripe
			}
		}
		if prev == 0 && c.bottomRange != nil && c.bottomRange(f.Start, f.End) {
			seqs = seqs[:len(seqs)-1]
		}
		if len(seqs) > 0 {
			out = append(out, rangedel.Fragment{Start: f.Start, End: f.End, Seqs: seqs})
		}
	}
	return out
}
