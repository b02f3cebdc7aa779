package sstables

import (
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/rangedel"
)

// RangeTombstone deletes, as of Seq, the versions below Seq of every key in
// [Start, End); an empty Start or End leaves that side unbounded.
type RangeTombstone = rangedel.Tombstone

// RangeFragment is a piece [Start, End) of a table's range deletions and
// the sequence numbers, newest first, of the tombstones that cover all of
// it. A table's fragments are sorted and disjoint. An empty Start or End
// leaves that side unbounded.
type RangeFragment = rangedel.Fragment

// loadRangeDels reads and checks the range-deletion block, if the table
// has one. It is held in memory while the table is open: it is small, and
// every point read of a key it may cover consults it.
func (r *Reader) loadRangeDels(footOff uint64) error {
	if r.meta.RangeDelSize == 0 {
		return nil
	}
	h := BlockHandle{Offset: r.meta.rangeDelOffset, Length: r.meta.RangeDelSize}
	if !h.within(footOff) {
		return base.Corruptf(r.name, int64(footOff), ErrBadRangeDels, "block handle (%d, %d) outside the table", h.Offset, h.Length)
	}
	raw, _, err := r.readBlock(h, nil)
	if err != nil {
		return err
	}
	l, err := rangedel.Decode(r.cmp, raw)
	if err == nil && uint64(len(l)) != r.meta.RangeDeletions {
		err = errBlock("fragment count differs from the properties'")
	}
	if err != nil {
		return base.Corruptf(r.name, int64(h.Offset), ErrBadRangeDels, "%v", err)
	}
	r.rangeDels = l
	return nil
}

// RangeDeletions returns the table's range deletions, fragmented: sorted,
// disjoint, each with the sequence numbers of the tombstones covering it.
// The slice and its keys are the reader's, valid after Close, and must not
// be modified. A table iterator shows the entries that range deletions
// cover; Get, Has and Find do not, and a MergingIterator given them in
// MergeOptions.RangeDeletions hides them.
func (r *Reader) RangeDeletions() []RangeFragment { return r.rangeDels }

// rangeDelSeq returns the sequence number of the newest of the table's
// range tombstones at or below seq that covers key, or 0.
func (r *Reader) rangeDelSeq(key []byte, seq uint64) uint64 {
	if len(r.rangeDels) == 0 {
		return 0
	}
	return r.rangeDels.SeqAt(r.cmp, key, seq)
}
