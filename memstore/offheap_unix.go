//go:build unix

package memstore

import "syscall"

var pageSize = syscall.Getpagesize()

func mapAnonymous(size int) ([]byte, error) {
	return syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
}

func unmapAnonymous(b []byte) {
	// Munmap fails only for a slice it did not map: never here.
	_ = syscall.Munmap(b)
}
