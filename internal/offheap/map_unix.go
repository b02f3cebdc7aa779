//go:build unix

package offheap

import (
	"syscall"
	"unsafe"
)

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

// MapHuge maps size bytes more than Map(size) would, and returns that
// mapping, for Unmap, and the size bytes of it that begin at a multiple
// of HugePage, advised to be backed by huge pages where the system has
// them (Linux's transparent huge pages, in their "madvise" mode or
// "always"): memory read at random, far beyond the reach of the
// processor's TLB, then costs a cache miss without a TLB miss as well.
// The bytes around the aligned ones are never touched: they take address
// space, not memory.
func MapHuge(size int) (mapping, aligned []byte, err error) {
	m, err := Map(size + HugePage)
	if err != nil {
		return nil, nil, err
	}
	start := (HugePage - int(uintptr(unsafe.Pointer(unsafe.SliceData(m)))%HugePage)) % HugePage
	aligned = m[start : start+size : start+size]
	adviseHuge(aligned)
	return m, aligned, nil
}
