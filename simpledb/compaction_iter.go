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
//
// With fold set, a kept version that is a merge operand is folded with the
// older versions of its stripe, down to the first value, tombstone or
// version a range tombstone of the stripe covers, into one entry: a value
// when one of those ended the fold, or when the key ran out at the bottom;
// an operand otherwise, since older versions may lie in other
// stripes or deeper levels (folding operands without their value is why a
// merger must be associative). If fold fails, the versions it read are
// written as they are, for reads to report the error: a compaction never
// fails, nor loses a version, on an operand its merger refuses.
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
	// fold is the merger's (nil: operands are written as they are).
	fold func(key, older, newer []byte) ([]byte, error)
	// relocate are the blob files whose values the output copies rather
	// than names (see compaction.relocate).
	relocate map[uint64]bool

	key        []byte
	prevStripe int
	frag       int // the fragment of rangeDels the last lookup found
	// out holds what a fold wrote out, the first entry current; in is
	// then at the entry after the versions it read.
	out []foldEntry
}

// foldEntry is a version of the current key that a fold read or made.
type foldEntry struct {
	seq   uint64
	kind  base.Kind
	value []byte
}

func (c *compactionIter) First() bool {
	c.key = c.key[:0]
	c.prevStripe = -1
	c.out = c.out[:0]
	return c.settle(c.in.First())
}

func (c *compactionIter) Next() bool {
	if len(c.out) == 0 {
		return c.settle(c.in.Next())
	}
	if c.out = c.out[1:]; len(c.out) > 0 {
		return true
	}
	return c.settle(c.in.Valid())
}

// Key, Seq, Kind and Value describe the entry to write.
func (c *compactionIter) Key() []byte { return c.key }

func (c *compactionIter) Seq() uint64 {
	if len(c.out) > 0 {
		return c.out[0].seq
	}
	return c.in.Seq()
}

func (c *compactionIter) Kind() base.Kind {
	if len(c.out) > 0 {
		return c.out[0].kind
	}
	return c.in.Kind()
}

func (c *compactionIter) Value() []byte {
	if len(c.out) > 0 {
		return c.out[0].value
	}
	return c.in.Value()
}

// BlobHandle returns the handle of the entry's value when it lies in a
// blob file, for the output to keep it there (see
// sstables.Iterator.BlobHandle); a fold's result lies in memory.
func (c *compactionIter) BlobHandle() (sstables.BlobHandle, bool) {
	if len(c.out) > 0 {
		return sstables.BlobHandle{}, false
	}
	h, ok := blobHandle(c.in)
	if ok && c.relocate[h.FileNum] {
		return sstables.BlobHandle{}, false // its value is read, and written anew
	}
	return h, ok
}

// BlobTable is the name of the table BlobHandle's handle is of.
func (c *compactionIter) BlobTable() string { return blobTable(c.in) }

// blobHandle is it's BlobHandle, if its entries may lie in blob files.
func blobHandle(it sstables.EntryIterator) (sstables.BlobHandle, bool) {
	if b, ok := it.(interface {
		BlobHandle() (sstables.BlobHandle, bool)
	}); ok {
		return b.BlobHandle()
	}
	return sstables.BlobHandle{}, false
}

// blobTable is it's BlobTable, if its entries may lie in blob files.
func blobTable(it sstables.EntryIterator) string {
	if b, ok := it.(interface{ BlobTable() string }); ok {
		return b.BlobTable()
	}
	return ""
}

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
		if c.in.Kind() == base.KindMerge && c.fold != nil {
			return c.foldStripe(stripe)
		}
		return true
	}
	return false
}

// foldStripe folds the operand in is at with the older versions of its key
// in stripe, leaving in at the first version it did not read, and makes
// the result (or, if the merger fails, the versions read) the entries to
// write.
func (c *compactionIter) foldStripe(stripe int) bool {
	read := append(c.out[:0], foldEntry{c.in.Seq(), base.KindMerge, bytes.Clone(c.in.Value())})
	complete, ranOut := false, false
	for !complete {
		if !c.in.Next() {
			if c.in.Err() != nil {
				return false
			}
			ranOut = true
			break
		}
		if string(c.in.Key()) != string(c.key) {
			ranOut = true
			break
		}
		seq := c.in.Seq()
		if c.stripe(seq) != stripe {
			break
		}
		if t := c.coveredBy(c.key, seq); t > 0 && c.stripe(t) == stripe {
			complete = true // settle drops it: in the stripe just read
			break
		}
		kind := c.in.Kind()
		read = append(read, foldEntry{seq, kind, bytes.Clone(c.in.Value())})
		complete = kind != base.KindMerge
	}
	if ranOut && c.bottom != nil && c.bottom(c.key) {
		complete = true // nothing older anywhere
	}
	folded, err := c.foldRead(read, complete)
	if err != nil {
		c.out = read // written as they are, newest first
		return true
	}
	c.out = append(read[:0], folded)
	return true
}

// foldRead folds the versions read (newest first: operands, then maybe a
// value or tombstone) from the oldest up into one entry at the newest's
// sequence number: a value if complete, an operand if not.
func (c *compactionIter) foldRead(read []foldEntry, complete bool) (foldEntry, error) {
	n, acc, hasBase := len(read), []byte(nil), false
	switch read[n-1].kind {
	case base.KindSet:
		acc, hasBase, n = read[n-1].value, true, n-1
	case base.KindDelete:
		n--
	}
	if !hasBase { // the oldest operand, on nothing, is its own fold
		acc, n = read[n-1].value, n-1
	}
	for i := n - 1; i >= 0; i-- {
		v, err := c.fold(c.key, acc, read[i].value)
		if err != nil {
			return foldEntry{}, err
		}
		acc = v
	}
	kind := base.KindMerge
	if complete {
		kind = base.KindSet
	}
	return foldEntry{read[0].seq, kind, acc}, nil
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
