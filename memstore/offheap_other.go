//go:build !unix

package memstore

import "errors"

const pageSize = 4096

// mapAnonymous refuses, so that offHeap falls back to the Go heap.
func mapAnonymous(int) ([]byte, error) {
	return nil, errors.New("memstore: no anonymous mappings on this system")
}

func unmapAnonymous([]byte) {}
