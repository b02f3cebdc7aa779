//go:build unix

package offheap

import "syscall"

// pageSize is the system's page size.
var pageSize = syscall.Getpagesize()

// Map returns size bytes of zeroed, private, anonymous memory. The mapping
// is rounded up to whole pages, which the slice's capacity covers.
func Map(size int) ([]byte, error) {
	b, err := syscall.Mmap(-1, 0, (size+pageSize-1)/pageSize*pageSize,
		syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, err
	}
	return b[:size], nil
}

// Unmap returns memory that Map returned, sliced from the same start: any
// read of it afterwards faults.
func Unmap(b []byte) {
	// Munmap fails only for memory it did not map: never here.
	_ = syscall.Munmap(b[:cap(b)])
}
