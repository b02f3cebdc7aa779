package sstables

import (
	"cmp"

	"github.com/stratadb/strata/internal/base"
)

// Comparator orders keys. Its Name is stored in every table and checked when
// the table is opened, so a table is never read in an order it was not
// written in. Compare must be a total order in which only equal byte
// strings compare equal: it orders keys, it never merges two. It is the
// same type as memstore.Comparator, so one value configures both.
type Comparator = base.Comparator

// Bytewise orders keys as bytes.Compare does. It is the default. Tables
// and memstores recognise this pointer, not a copy of it, to take the
// paths only bytewise order allows.
var Bytewise = base.Bytewise

// compareInternal orders entries: by key, then newest (highest sequence
// number) first.
func compareInternal(compare func(a, b []byte) int, ak []byte, aseq uint64, bk []byte, bseq uint64) int {
	if c := compare(ak, bk); c != 0 {
		return c
	}
	return cmp.Compare(bseq, aseq)
}
