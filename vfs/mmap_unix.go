//go:build unix

package vfs

import (
	"fmt"
	"os"
	"syscall"

	"github.com/stratadb/strata/internal/errs"
)

const mmapSupported = true

// mapFile maps the named file read-only. The mapping outlives the file
// descriptor, which is closed at once.
func mapFile(name string) (MappedFile, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := info.Size()
	if size == 0 {
		return &mapping{name: name}, nil // mmap rejects empty mappings
	}
	if int64(int(size)) != size {
		return nil, fmt.Errorf("vfs: mmap %s: %d bytes do not fit the address space", name, size)
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, errs.Errorf("vfs: mmap %s: %w", name, err)
	}
	return &mapping{name: name, data: data}, nil
}

func (m *mapping) Close() error {
	data, err := m.markClosed()
	if err != nil || data == nil {
		return err
	}
	return syscall.Munmap(data)
}
