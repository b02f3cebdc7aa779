//go:build unix

package offheap

import "syscall"

// PageSize is the system's page size.
var PageSize = syscall.Getpagesize()

// Map returns size bytes of zeroed, private, anonymous memory.
func Map(size int) ([]byte, error) {
	return syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
}

// Unmap returns memory that Map returned, which must be the same slice:
// any read of it afterwards faults.
func Unmap(b []byte) {
	// Munmap fails only for a slice it did not map: never here.
	_ = syscall.Munmap(b)
}
