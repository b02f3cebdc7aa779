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
)

// String returns "set" or "delete".
func (k Kind) String() string {
	switch k {
	case KindDelete:
		return "delete"
	case KindSet:
		return "set"
	default:
		return "kind(" + strconv.Itoa(int(k)) + ")"
	}
}

// MaxSeq is the largest sequence number. Sequence numbers use 56 bits so
// that a sequence number and a Kind pack into one uint64 trailer
// (seq<<8 | kind); reading at MaxSeq sees every entry.
const MaxSeq uint64 = 1<<56 - 1
