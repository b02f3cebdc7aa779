package base

import "math/rand/v2"

// NewFileID returns a random identity for a table or log, with low 32
// bits other than those of avoid, the identity of the file's earlier use,
// so that a recycled log's stamp always differs from the one its file's
// old records carry. Its top bit is set: never 0, and always 10 bytes as
// a uvarint, so that a table's size does not vary with its identity.
func NewFileID(avoid uint64) uint64 {
	for {
		if id := rand.Uint64() | 1<<63; uint32(id) != uint32(avoid) {
			return id
		}
	}
}
