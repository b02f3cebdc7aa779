package memstore

import "strconv"

// Result says what a point read found.
type Result uint8

const (
	// Absent means the memstore holds no entry for the key (visible at
	// the sequence number read): older data, elsewhere, decides.
	Absent Result = iota
	// Found means the newest visible entry is a value.
	Found
	// Deleted means the newest visible entry is a tombstone: the key is
	// deleted, whatever older data holds.
	Deleted
	// Merge means the newest visible entry is a merge operand: the value
	// is the key's older versions, here and in older data, folded with
	// it and the operands between, which the memstore does not do.
	Merge
)

// String returns "absent", "found", "deleted" or "merge".
func (r Result) String() string {
	switch r {
	case Absent:
		return "absent"
	case Found:
		return "found"
	case Deleted:
		return "deleted"
	case Merge:
		return "merge"
	default:
		return "result(" + strconv.Itoa(int(r)) + ")"
	}
}
