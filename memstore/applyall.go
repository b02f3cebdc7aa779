package memstore

import (
	"cmp"
	"slices"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/rangedel"
)

// Write is one entry for ApplyAll: what Apply takes.
type Write struct {
	Seq        uint64
	Kind       Kind
	Key, Value []byte
}

// ApplyAll writes each of writes as Apply would, with sequence numbers in
// any order: each above LastSeq() and at most MaxSeq, and no key twice at
// one. It sorts writes in place into the memstore's order first, so that
// each insertion lands beside the one before instead of at a cold place in
// the list: at random keys, several times faster than Apply one by one
// (replaying a log, for one). LastSeq becomes the highest sequence number.
// It checks every write before it writes any: on an error the memstore is
// unchanged. Readers may see some of the writes before it returns, so a
// memstore being read should take its writes through Apply.
func (m *Memstore) ApplyAll(writes []Write) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	keyCmp := m.list.keyCompare()
	last := m.lastSeq.Load()
	high := last
	for i := range writes {
		w := &writes[i]
		var err error
		if w.Kind == KindRangeDelete {
			err = rangedel.Check(keyCmp, rangedel.Tombstone{Start: w.Key, End: w.Value, Seq: w.Seq})
		} else {
			err = validate(w.Kind, w.Key, w.Value)
		}
		if err != nil {
			return err
		}
		switch {
		case w.Seq <= last:
			return errs.Errorf("%w: sequence number %d, last %d", ErrSeqNotIncreasing, w.Seq, last)
		case w.Seq > MaxSeq:
			return errs.Errorf("%w: sequence number %d, MaxSeq %d", ErrSeqTooLarge, w.Seq, MaxSeq)
		}
		high = max(high, w.Seq)
	}
	// Range deletions first, in their own order, then the entries in the
	// list's: key ascending, newest first.
	slices.SortFunc(writes, func(a, b Write) int {
		if ar, br := a.Kind == KindRangeDelete, b.Kind == KindRangeDelete; ar || br {
			if ar && br {
				return cmp.Compare(a.Seq, b.Seq)
			}
			if ar {
				return -1
			}
			return 1
		}
		if c := keyCmp(a.Key, b.Key); c != 0 {
			return c
		}
		return cmp.Compare(b.Seq, a.Seq)
	})
	n := 0 // the range deletions
	for n < len(writes) && writes[n].Kind == KindRangeDelete {
		n++
	}
	for i := n + 1; i < len(writes); i++ {
		if writes[i].Seq == writes[i-1].Seq && keyCmp(writes[i].Key, writes[i-1].Key) == 0 {
			return errs.Errorf("%w: key %q twice at sequence number %d", ErrSeqNotIncreasing, writes[i].Key, writes[i].Seq)
		}
	}
	for _, w := range writes[:n] { // checked above: no error
		if err := m.deleteRangeLocked(w.Seq, w.Key, w.Value); err != nil {
			return err
		}
	}
	for _, w := range writes[n:] {
		value := w.Value
		if w.Kind == KindDelete {
			value = nil
		}
		m.list.insert(w.Key, value, base.MakeTrailer(w.Seq, w.Kind))
	}
	m.lastSeq.Store(high)
	return nil
}
