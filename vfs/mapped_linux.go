//go:build linux

package vfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// CreateMapped creates the named file for appending through a shared
// memory mapping: see MappedCreator.
func (osFS) CreateMapped(name string, chunk int64) (File, error) {
	if chunk <= 0 || chunk%int64(os.Getpagesize()) != 0 {
		return nil, fmt.Errorf("vfs: create mapped %s: chunk of %d bytes is not a positive multiple of the page size", name, chunk)
	}
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	m := &mappedFile{f: f, chunk: chunk}
	if err := m.nextChunk(); err != nil {
		f.Close()
		if errors.Is(err, syscall.EOPNOTSUPP) {
			return nil, fmt.Errorf("vfs: create mapped %s: %w: %w", name, errors.ErrUnsupported, err)
		}
		return nil, err
	}
	return m, nil
}

// mappedFile appends by copying into a shared mapping of one chunk of the
// file at a time. Each chunk's blocks are allocated (fallocate) before it
// is mapped, so a store into the mapping never faults for want of space
// (no SIGBUS): a full disk is the error of the Write that needs the next
// chunk.
type mappedFile struct {
	f     *os.File
	chunk int64
	size  int64  // bytes written: the file's logical length
	base  int64  // file offset of the mapped chunk
	data  []byte // the mapped chunk
	pos   int64  // Read's offset
	err   error  // sticky: after a failed chunk the tail is unknown
}

func (m *mappedFile) Write(p []byte) (int, error) {
	if m.err != nil {
		return 0, m.err
	}
	n := 0
	for n < len(p) {
		if m.size == m.base+int64(len(m.data)) {
			if err := m.nextChunk(); err != nil {
				m.err = err
				return n, err
			}
		}
		c := copy(m.data[m.size-m.base:], p[n:])
		n += c
		m.size += int64(c)
	}
	return n, nil
}

// nextChunk allocates the chunk that starts at the logical end and maps it
// in place of the current one.
func (m *mappedFile) nextChunk() error {
	base := m.size
	if err := syscall.Fallocate(int(m.f.Fd()), 0, base, m.chunk); err != nil {
		return &fs.PathError{Op: "fallocate", Path: m.f.Name(), Err: err}
	}
	data, err := syscall.Mmap(int(m.f.Fd()), base, int(m.chunk), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return &fs.PathError{Op: "mmap", Path: m.f.Name(), Err: err}
	}
	if err := m.unmap(); err != nil {
		syscall.Munmap(data)
		return err
	}
	m.base, m.data = base, data
	return nil
}

func (m *mappedFile) unmap() error {
	if m.data == nil {
		return nil
	}
	err := syscall.Munmap(m.data)
	m.data = nil
	if err != nil {
		return &fs.PathError{Op: "munmap", Path: m.f.Name(), Err: err}
	}
	return nil
}

// Sync makes the written bytes durable: fdatasync writes back the pages
// the mapping dirtied, as it does those write(2) dirtied.
func (m *mappedFile) Sync() error {
	if err := syscall.Fdatasync(int(m.f.Fd())); err != nil {
		return &fs.PathError{Op: "fdatasync", Path: m.f.Name(), Err: err}
	}
	return nil
}

// Close unmaps the file and cuts it to its logical length, releasing the
// space allocated ahead. It does not sync: callers sync first.
func (m *mappedFile) Close() error {
	err := m.unmap()
	if terr := m.f.Truncate(m.size); err == nil && terr != nil {
		err = terr
	}
	if cerr := m.f.Close(); err == nil {
		err = cerr
	}
	return err
}

func (m *mappedFile) ReadAt(p []byte, off int64) (int, error) {
	if off >= m.size {
		return 0, io.EOF
	}
	if rest := m.size - off; int64(len(p)) > rest {
		n, err := m.f.ReadAt(p[:rest], off)
		if err == nil {
			err = io.EOF
		}
		return n, err
	}
	return m.f.ReadAt(p, off)
}

func (m *mappedFile) Read(p []byte) (int, error) {
	n, err := m.ReadAt(p, m.pos)
	m.pos += int64(n)
	return n, err
}

func (m *mappedFile) Name() string { return m.f.Name() }

// Stat reports the logical length, not the space allocated ahead.
func (m *mappedFile) Stat() (fs.FileInfo, error) {
	info, err := m.f.Stat()
	if err != nil {
		return nil, err
	}
	return sizedInfo{info, m.size}, nil
}

type sizedInfo struct {
	fs.FileInfo
	size int64
}

func (i sizedInfo) Size() int64 { return i.size }
