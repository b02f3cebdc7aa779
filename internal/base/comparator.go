package base

import "bytes"

// Comparator orders keys. Its Name is stored in every table and checked when
// the table is opened, so a table is never read in an order it was not
// written in. Compare must be a total order in which only equal byte
// strings compare equal: it orders keys, it never merges two.
//
// It lives here, not in sstables, so that memstore orders its keys as the
// tables it is flushed to do without importing sstables; both packages
// export it by an alias.
type Comparator struct {
	// Name identifies the ordering; change it whenever Compare changes.
	Name string
	// Compare returns a negative number, zero or a positive number as a
	// sorts before, equal to or after b.
	Compare func(a, b []byte) int
	// Separator, if set, appends to dst a short key s with a <= s < b, for
	// given a < b. Index entries use it to stay small. Nil means the index
	// stores a itself.
	Separator func(dst, a, b []byte) []byte
}

// Bytewise orders keys as bytes.Compare does. It is the default. Layers
// recognise it by pointer to take paths only bytewise order allows (word
// compares in memstore, restart hints in sstables), so a copy of it is just
// another comparator.
var Bytewise = &Comparator{
	Name:      "strata.bytewise",
	Compare:   bytes.Compare,
	Separator: bytewiseSeparator,
}

// bytewiseSeparator returns the shortest prefix of b that sorts after a
// (a < b): a and b's common prefix plus b's next byte. Keys of random
// bytes thus need an index entry of a few bytes, not a whole key.
func bytewiseSeparator(dst, a, b []byte) []byte {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	if n+1 >= len(b) {
		return append(dst, a...)
	}
	return append(dst, b[:n+1]...)
}
