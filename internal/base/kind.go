package base

import "strconv"

// Kind says what an entry holds. Tombstones are first-class entries: a
// deletion must shadow older values of its key until compaction proves that
// no older version can exist below it.
type Kind uint8

const (
	// KindDelete marks a tombstone: the key is deleted as of its sequence
	// number.
	KindDelete Kind = 0
	// KindSet marks a value, possibly empty.
	KindSet Kind = 1
	// KindRangeDelete marks a range tombstone: a batch's or a log's record
	// of the deletion of every key in [start, end) (see internal/rangedel).
	// It is never a point entry's kind: memstores and tables keep range
	// tombstones apart from their entries.
	KindRangeDelete Kind = 2
	// KindMerge marks a merge operand: a value to fold, with the database's
	// merger, onto the key's older versions down to its newest value or
	// deletion.
	KindMerge Kind = 3
)

// PointKind reports whether kind is an entry's: KindSet, KindDelete or
// KindMerge.
func PointKind(kind Kind) bool {
	return kind <= KindMerge && kind != KindRangeDelete
}

// String returns "set", "delete", "rangedel" or "merge".
func (k Kind) String() string {
	switch k {
	case KindDelete:
		return "delete"
	case KindSet:
		return "set"
	case KindRangeDelete:
		return "rangedel"
	case KindMerge:
		return "merge"
	default:
		return "kind(" + strconv.Itoa(int(k)) + ")"
	}
}

// MaxSeq is the largest sequence number. Sequence numbers use 56 bits so
// that a sequence number and a Kind pack into one uint64 trailer
// (seq<<8 | kind); reading at MaxSeq sees every entry.
const MaxSeq uint64 = 1<<56 - 1

// KindSeek is no entry's kind: entries sort by trailer descending within a
// key, so a search trailer of (seq, KindSeek) sorts just before every
// version of the key at seq or below, and seeking to it finds the newest
// version visible at seq.
const KindSeek Kind = 0xff

// MakeTrailer packs seq and kind into a trailer.
func MakeTrailer(seq uint64, kind Kind) uint64 { return seq<<8 | uint64(kind) }

// TrailerSeq returns a trailer's sequence number.
func TrailerSeq(trailer uint64) uint64 { return trailer >> 8 }

// TrailerKind returns a trailer's kind.
func TrailerKind(trailer uint64) Kind { return Kind(trailer) }
