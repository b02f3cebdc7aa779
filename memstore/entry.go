package memstore

import (
	"bytes"
	"cmp"
	"unsafe"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/skiplist"
)

// An entry is one version of a key: the skiplist's key type. It points at
// the key's bytes, followed by the value's, in the arena, and orders by key
// ascending, then by sequence number descending, so that the newest version
// of a key comes first:
//
//	entry (24 bytes, in the skiplist node)     arena
//	+------+--------+--------+---------+       +-----------+-------------+
//	| data | keyLen | valLen | trailer |  -->  | key bytes | value bytes |
//	+------+--------+--------+---------+       +-----------+-------------+
//	   8       4        4         8
//
// trailer is seq<<8 | kind. A tombstone has no value bytes.
type entry struct {
	data    *byte
	keyLen  uint32
	valLen  uint32
	trailer uint64
}

// searchEntry returns an entry for key, without a value, that sorts just
// before every version of key with a sequence number up to seq: seeking to
// it finds the newest version visible at seq. It aliases key.
func searchEntry(key []byte, seq uint64) entry {
	return entry{data: unsafe.SliceData(key), keyLen: uint32(len(key)), trailer: base.MakeTrailer(min(seq, MaxSeq), base.KindSeek)}
}

func (e entry) key() []byte {
	return unsafe.Slice(e.data, e.keyLen)
}

// value returns the value, nil for a tombstone; an empty value is an empty,
// non-nil slice.
func (e entry) value() []byte {
	if e.kind() == KindDelete {
		return nil
	}
	// Slicing (rather than pointer arithmetic) keeps an empty value's
	// pointer inside the allocation even when the key ends it.
	return unsafe.Slice(e.data, e.keyLen+e.valLen)[e.keyLen:]
}

func (e entry) seq() uint64 { return base.TrailerSeq(e.trailer) }
func (e entry) kind() Kind  { return base.TrailerKind(e.trailer) }

// compareEntries orders entries by key ascending, then trailer descending.
func compareEntries(a, b entry) int {
	if c := bytes.Compare(a.key(), b.key()); c != 0 {
		return c
	}
	return cmp.Compare(b.trailer, a.trailer)
}

// abbreviateEntry abbreviates an entry by its key's first bytes, consistent
// with compareEntries.
func abbreviateEntry(e entry) uint64 {
	return skiplist.AbbreviateBytes(e.key())
}
