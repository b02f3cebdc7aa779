package base

import "iter"

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

// Walk returns an iterator's entries as a sequence for range loops: start
// positions the iterator (First, Last, a seek), step moves it on (Next or
// Prev), and key and value read the entry it is at. It is the body of
// every All, Backward and their variants.
func Walk(start, step func() bool, key, value func() []byte) iter.Seq2[[]byte, []byte] {
	return func(yield func([]byte, []byte) bool) {
		for ok := start(); ok; ok = step() {
			if !yield(key(), value()) {
				return
			}
		}
	}
}
