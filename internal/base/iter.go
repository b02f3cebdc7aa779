package base

// Edge says where an iterator that is at no entry stopped, so that a move
// the other way can turn back, as Pebble's iterators do: after a forward
// move ran off the end, Prev moves to the last entry; after a backward move
// ran off the start, Next moves to the first. An iterator that was never
// positioned, or was closed or failed, is at NoEdge, and its Next and Prev
// return false.
type Edge int8

const (
	// NoEdge: unpositioned, closed, failed, or at an entry.
	NoEdge Edge = iota
	// EdgeEnd: a forward move (First, SeekGE, Next) found no entry.
	EdgeEnd
	// EdgeStart: a backward move (Last, SeekLT, Prev) found no entry.
	EdgeStart
)
