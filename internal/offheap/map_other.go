//go:build !unix

package offheap

import "errors"

// Map refuses: callers fall back to the Go heap.
func Map(int) ([]byte, error) {
	return nil, errors.New("offheap: no anonymous mappings on this system")
}

// Unmap does nothing: Map maps nothing.
func Unmap([]byte) {}

// MapHuge fails, as Map does.
func MapHuge(int) (mapping, aligned []byte, err error) {
	return nil, nil, errors.New("offheap: no anonymous mappings on this system")
}
