// Package base holds the small vocabulary every Strata layer shares and that
// is not itself a public package: the corruption error that names a file and
// an offset, the key limit and its errors, the kinds, sequence numbers and
// trailers that order every entry, the comparator that orders keys, and what
// every iterator shares (the end it ran off).
//
// # Its place in the layers
//
// base sits just above recordio, whose corruption error it re-exports,
// and below everything else: every other package of the module may import
// it, and it imports nothing of the module but recordio. Keep it so. A
// type belongs here only if two layers that must not import each other
// both need it (memstore and sstables both order keys with a Comparator;
// sstables and simpledb both report a CorruptionError); what one layer
// alone uses stays in that layer.
//
// Public packages re-export what their callers need (recordio.ErrCorruption,
// sstables.ErrCorruption, simpledb.ErrCorruption are all the same value), so
// errors.Is works across layers: a damaged block found by the sstables reader
// through recordio is an ErrCorruption to a simpledb caller too.
package base
