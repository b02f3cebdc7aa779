// Package rangedel holds range tombstones, the deletions of every key in
// a range [Start, End) at once, in the form every layer shares: a list of
// fragments, sorted and disjoint, each with the sequence numbers of the
// tombstones that cover it. A memstore keeps one, a table stores one in its
// range-deletion block, and a read asks it, for a key and the sequence
// number it reads at, for the newest tombstone that hides older versions of
// the key.
//
// # Bounds
//
// An empty Start is the start of the key space and an empty End its end:
// an empty key is not a valid key (see base.CheckKey), so neither can be
// confused with one. Start is inclusive and End exclusive, and Start is
// before End unless End is empty.
//
// # Fragments
//
// Tombstones overlap freely; Build cuts them at every start and end into
// fragments that do not, so that one binary search finds all the
// tombstones covering a key:
//
//	tombstones:  [b, f)@7   [d, h)@9
//	fragments:   [b, d) 7 | [d, f) 9 7 | [f, h) 9
//
// Adjacent fragments with the same sequence numbers are joined. Sequence
// numbers within a fragment are distinct and descending.
//
// # Encoding
//
// A list encodes as (all integers uvarints):
//
//	list:      count | fragment ...
//	fragment:  start length | start | end length | end | seq count | seq ...
//
// where an empty end is the end of the key space, seqs are listed newest
// first, and fragments in key order. Decode checks all of it: the order,
// that fragments neither overlap nor are empty, the key and sequence limits,
// and that nothing trails.
package rangedel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/internal/base"
)

// Tombstone deletes, as of Seq, the versions below Seq of every key in
// [Start, End); an empty Start or End leaves that side unbounded.
type Tombstone struct {
	Start, End []byte
	Seq        uint64
}

// Fragment is a piece of key space [Start, End) and the sequence numbers,
// newest first, of the tombstones that cover all of it.
type Fragment struct {
	Start, End []byte
	Seqs       []uint64
}

// List is a sorted list of disjoint fragments. Its slices are shared, never
// modified once built: a List may be read concurrently.
type List []Fragment

// Cmp orders keys; the comparator of the store that holds the list.
type Cmp func(a, b []byte) int

// Contains reports whether the fragment covers key.
func (f *Fragment) Contains(cmp Cmp, key []byte) bool {
	return !startsAfter(cmp, f.Start, key) && !endsBy(cmp, f.End, key)
}

// SeqAt returns the newest of the fragment's sequence numbers at or below
// seq, or 0.
func (f *Fragment) SeqAt(seq uint64) uint64 {
	for _, s := range f.Seqs {
		if s <= seq {
			return s
		}
	}
	return 0
}

// startsAfter reports whether a range that starts at start begins after
// key.
func startsAfter(cmp Cmp, start, key []byte) bool {
	return len(start) > 0 && cmp(start, key) > 0
}

// endsBy reports whether a range that ends (exclusively) at end ends at or
// before key: key lies beyond it.
func endsBy(cmp Cmp, end, key []byte) bool {
	return len(end) > 0 && cmp(end, key) <= 0
}

// Find returns the index of the fragment that covers key, or -1.
func (l List) Find(cmp Cmp, key []byte) int {
	// The first fragment whose end is after key.
	i, _ := slices.BinarySearchFunc(l, key, func(f Fragment, k []byte) int {
		if endsBy(cmp, f.End, k) {
			return -1
		}
		return 1
	})
	if i < len(l) && !startsAfter(cmp, l[i].Start, key) {
		return i
	}
	return -1
}

// SeqAt returns the sequence number of the newest tombstone covering key
// at or below seq, or 0 if none does: the versions of key below it are
// deleted for a read at seq.
func (l List) SeqAt(cmp Cmp, key []byte, seq uint64) uint64 {
	if len(l) == 0 {
		return 0
	}
	if i := l.Find(cmp, key); i >= 0 {
		return l[i].SeqAt(seq)
	}
	return 0
}

// Tombstones appends to dst one tombstone per fragment and sequence number,
// skipping sequence numbers above seq.
func (l List) Tombstones(dst []Tombstone, seq uint64) []Tombstone {
	for _, f := range l {
		for _, s := range f.Seqs {
			if s <= seq {
				dst = append(dst, Tombstone{Start: f.Start, End: f.End, Seq: s})
			}
		}
	}
	return dst
}

// Newest appends to dst one tombstone per fragment, at the fragment's
// newest sequence number at or below seq, for the fragments that overlap
// [lo, hi) (empty: unbounded) and have one.
func (l List) Newest(cmp Cmp, dst []Tombstone, seq uint64, lo, hi []byte) []Tombstone {
	for _, f := range l {
		if len(hi) > 0 && len(f.Start) > 0 && cmp(f.Start, hi) >= 0 {
			break
		}
		if len(lo) > 0 && endsBy(cmp, f.End, lo) {
			continue
		}
		if s := f.SeqAt(seq); s > 0 {
			dst = append(dst, Tombstone{Start: f.Start, End: f.End, Seq: s})
		}
	}
	return dst
}

// Build fragments tombstones, in any order and overlapping, into a List.
// The list shares the tombstones' key slices.
func Build(cmp Cmp, tombs []Tombstone) List {
	if len(tombs) == 0 {
		return nil
	}
	// Every start and end is a boundary. An empty start is the least
	// bound, an empty end the greatest.
	bounds := make([]bound, 0, 2*len(tombs))
	for _, t := range tombs {
		bounds = append(bounds, startBound(t.Start), endBound(t.End))
	}
	slices.SortFunc(bounds, func(a, b bound) int { return a.compare(cmp, b) })
	bounds = slices.CompactFunc(bounds, func(a, b bound) bool { return a.compare(cmp, b) == 0 })

	sorted := slices.Clone(tombs)
	slices.SortFunc(sorted, func(a, b Tombstone) int { return startBound(a.Start).compare(cmp, startBound(b.Start)) })
	var (
		out    List
		active []Tombstone
		next   int
	)
	for i := 0; i+1 < len(bounds); i++ {
		lo, hi := bounds[i], bounds[i+1]
		for next < len(sorted) && startBound(sorted[next].Start).compare(cmp, lo) <= 0 {
			active = append(active, sorted[next])
			next++
		}
		active = slices.DeleteFunc(active, func(t Tombstone) bool { return endBound(t.End).compare(cmp, lo) <= 0 })
		if len(active) == 0 {
			continue
		}
		seqs := make([]uint64, 0, len(active))
		for _, t := range active {
			seqs = append(seqs, t.Seq)
		}
		slices.Sort(seqs)
		slices.Reverse(seqs) // newest first
		seqs = slices.Compact(seqs)
		if n := len(out); n > 0 && endBound(out[n-1].End).compare(cmp, lo) == 0 && slices.Equal(out[n-1].Seqs, seqs) {
			out[n-1].End = hi.key
			continue
		}
		out = append(out, Fragment{Start: lo.key, End: hi.key, Seqs: seqs})
	}
	return out
}

// bound is a fragment boundary: a key, or one end of the key space.
type bound struct {
	key  []byte
	rank int8 // 0: before every key (an empty start), 1: key, 2: after every key (an empty end)
}

func startBound(k []byte) bound {
	if len(k) == 0 {
		return bound{key: []byte{}, rank: 0}
	}
	return bound{key: k, rank: 1}
}

func endBound(k []byte) bound {
	if len(k) == 0 {
		return bound{rank: 2}
	}
	return bound{key: k, rank: 1}
}

func (a bound) compare(cmp Cmp, b bound) int {
	if a.rank != b.rank || a.rank != 1 {
		return int(a.rank) - int(b.rank)
	}
	return cmp(a.key, b.key)
}

// Add returns a new list holding l's tombstones and t; l is unchanged.
func (l List) Add(cmp Cmp, t Tombstone) List {
	return Build(cmp, append(l.Tombstones(nil, base.MaxSeq), t))
}

// Truncate returns the fragments of l clipped to [lo, hi), an empty bound
// leaving that side as it is. The fragments share l's slices.
func (l List) Truncate(cmp Cmp, lo, hi []byte) List {
	var out List
	for _, f := range l {
		if len(hi) > 0 && len(f.Start) > 0 && cmp(f.Start, hi) >= 0 {
			break
		}
		if len(lo) > 0 && endsBy(cmp, f.End, lo) {
			continue
		}
		if len(lo) > 0 && (len(f.Start) == 0 || cmp(f.Start, lo) < 0) {
			f.Start = lo
		}
		if len(hi) > 0 && (len(f.End) == 0 || cmp(f.End, hi) > 0) {
			f.End = hi
		}
		if len(f.Start) > 0 && len(f.End) > 0 && cmp(f.Start, f.End) >= 0 {
			continue // lo is at or after hi
		}
		out = append(out, f)
	}
	return out
}

// Size returns the bytes the list's keys and sequence numbers take, for
// memory accounting.
func (l List) Size() int {
	n := 0
	for _, f := range l {
		n += len(f.Start) + len(f.End) + 8*len(f.Seqs) + 64
	}
	return n
}

// Check returns an error for a tombstone no layer accepts: a key over
// base.MaxKeySize, a sequence number above base.MaxSeq, or Start not
// before End.
func Check(cmp Cmp, t Tombstone) error {
	for _, k := range [][]byte{t.Start, t.End} {
		if len(k) > base.MaxKeySize {
			return errs.Errorf("%w: %d bytes", base.ErrKeyTooLarge, len(k))
		}
	}
	if t.Seq > base.MaxSeq {
		return errs.Errorf("%w: sequence number %d", ErrBadTombstone, t.Seq)
	}
	if len(t.Start) > 0 && len(t.End) > 0 && cmp(t.Start, t.End) >= 0 {
		return errs.Errorf("%w: start %q is not before end %q", ErrBadTombstone, trunc(t.Start), trunc(t.End))
	}
	return nil
}

// ErrBadTombstone reports a tombstone whose range is empty or whose
// sequence number is out of range.
var ErrBadTombstone = errors.New("strata: bad range tombstone")

func trunc(k []byte) []byte {
	if len(k) > 32 {
		return k[:32]
	}
	return k
}

// Encode appends the list's encoding to dst.
func (l List) Encode(dst []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(l)))
	for _, f := range l {
		dst = binary.AppendUvarint(dst, uint64(len(f.Start)))
		dst = append(dst, f.Start...)
		dst = binary.AppendUvarint(dst, uint64(len(f.End)))
		dst = append(dst, f.End...)
		dst = binary.AppendUvarint(dst, uint64(len(f.Seqs)))
		for _, s := range f.Seqs {
			dst = binary.AppendUvarint(dst, s)
		}
	}
	return dst
}

// errMalformed reports an encoding Decode refuses.
var errMalformed = errors.New("malformed range deletions")

// Decode decodes a list that Encode wrote, checking every property a List
// has. The list's keys are copies: b may be reused.
func Decode(cmp Cmp, b []byte) (List, error) {
	fail := func(format string, args ...any) (List, error) {
		return nil, errs.Errorf("%w: %s", errMalformed, fmt.Sprintf(format, args...))
	}
	uvarint := func() (uint64, bool) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		return v, true
	}
	bytesField := func() ([]byte, bool) {
		n, ok := uvarint()
		if !ok || n > uint64(len(b)) || n > base.MaxKeySize {
			return nil, false
		}
		v := append([]byte{}, b[:n]...)
		b = b[n:]
		return v, true
	}
	count, ok := uvarint()
	// Every fragment takes at least four bytes.
	if !ok || count > uint64(len(b))/4 {
		return fail("count")
	}
	l := make(List, 0, count)
	for i := range count {
		start, ok1 := bytesField()
		end, ok2 := bytesField()
		n, ok3 := uvarint()
		if !ok1 || !ok2 || !ok3 || n == 0 || n > uint64(len(b)) {
			return fail("fragment %d", i)
		}
		seqs := make([]uint64, n)
		for j := range seqs {
			s, ok := uvarint()
			if !ok || s > base.MaxSeq || j > 0 && s >= seqs[j-1] {
				return fail("fragment %d: sequence number %d", i, j)
			}
			seqs[j] = s
		}
		if len(start) > 0 && len(end) > 0 && cmp(start, end) >= 0 {
			return fail("fragment %d: empty range", i)
		}
		if len(l) > 0 {
			prev := l[len(l)-1].End
			if len(prev) == 0 || len(start) == 0 || cmp(prev, start) > 0 {
				return fail("fragment %d overlaps the one before", i)
			}
		}
		l = append(l, Fragment{Start: start, End: end, Seqs: seqs})
	}
	if len(b) != 0 {
		return fail("%d trailing bytes", len(b))
	}
	return l, nil
}
