// Package base holds the small vocabulary every Strata layer shares and that
// is not itself a public package: the corruption error that names a file and
// an offset, the key limit and its errors, the kinds, sequence numbers and
// trailers that order every entry, and what every iterator shares (the end
// it ran off).
//
// Public packages re-export what their callers need (recordio.ErrCorruption,
// sstables.ErrCorruption, simpledb.ErrCorruption are all the same value), so
// errors.Is works across layers: a damaged block found by the sstables reader
// through recordio is an ErrCorruption to a simpledb caller too.
package base
