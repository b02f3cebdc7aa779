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
	if err := checkChunk(name, chunk); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	m, err := newMappedFile(f, chunk, 0)
	if err != nil {
		f.Close()
		return nil, err
	}
	return m, nil
}

// ReuseMapped renames oldname to newname and writes over it through a
// shared memory mapping: see MappedCreator.
func (osFS) ReuseMapped(oldname, newname string, chunk int64) (File, error) {
	if err := checkChunk(newname, chunk); err != nil {
		return nil, err
	}
	f, err := openRenamed(oldname, newname)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	var m *mappedFile
	if err == nil {
		m, err = newMappedFile(f, chunk, info.Size())
	}
	if err != nil {
		f.Close()
		os.Rename(newname, oldname)
		return nil, err
	}
	return m, nil
}

func checkChunk(name string, chunk int64) error {
	if chunk <= 0 || chunk%int64(os.Getpagesize()) != 0 {
		return fmt.Errorf("vfs: mapped %s: chunk of %d bytes is not a positive multiple of the page size", name, chunk)
	}
	return nil
}

// newMappedFile maps f's first chunk and starts preparing the next. The
// first allocated bytes of f are space it has already.
func newMappedFile(f *os.File, chunk, allocated int64) (*mappedFile, error) {
	m := &mappedFile{f: f, fd: int(f.Fd()), chunk: chunk, allocated: allocated}
	first := m.mapChunk(0)
	if first.err != nil {
		if errors.Is(first.err, syscall.EOPNOTSUPP) {
			return nil, fmt.Errorf("vfs: mapped %s: %w: %w", f.Name(), errors.ErrUnsupported, first.err)
		}
		return nil, first.err
	}
	m.data = first.data
	m.prepare(chunk)
	return m, nil
}

// mappedFile appends by copying into a shared mapping of one chunk of the
// file at a time. Each chunk's blocks are allocated (fallocate) before it
// is mapped, unless the file had them already (a reused file), so a store
// into the mapping never faults for want of space (no SIGBUS): a full disk
// is the error of the Write that needs the next chunk. While one chunk takes writes, a goroutine prepares the next:
// allocates it, maps it and faults its pages in for writing, which is
// where the copies of a fresh chunk otherwise spend most of their time.
type mappedFile struct {
	f         *os.File
	fd        int
	chunk     int64
	allocated int64         // the file's size when opened: space it has, in written blocks
	size      int64         // bytes written: the file's logical length
	base      int64         // file offset of the mapped chunk
	data      []byte        // the mapped chunk
	ahead     chan chunkMap // the next chunk, being prepared
	pos       int64         // Read's offset
	err       error         // sticky: after a failed chunk the tail is unknown
}

// chunkMap is a chunk allocated and mapped, or why it could not be.
type chunkMap struct {
	data []byte
	err  error
}

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14): fault pages in
// writable, as the first store to each would.
const madvPopulateWrite = 23

// mapChunk allocates the chunk at base, unless the file has it already,
// and maps it, its pages faulted in for writing where the kernel can: in a
// reused file, read in, since a page is written a record at a time.
func (m *mappedFile) mapChunk(base int64) chunkMap {
	if base+m.chunk > m.allocated {
		if err := syscall.Fallocate(m.fd, 0, base, m.chunk); err != nil {
			return chunkMap{err: &fs.PathError{Op: "fallocate", Path: m.f.Name(), Err: err}}
		}
	}
	data, err := syscall.Mmap(m.fd, base, int(m.chunk), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return chunkMap{err: &fs.PathError{Op: "mmap", Path: m.f.Name(), Err: err}}
	}
	syscall.Madvise(data, madvPopulateWrite) // a hint: older kernels refuse it, and the stores fault instead
	return chunkMap{data: data}
}

// prepare starts mapping the chunk at base in the background.
func (m *mappedFile) prepare(base int64) {
	ahead := make(chan chunkMap, 1)
	m.ahead = ahead
	go func() { ahead <- m.mapChunk(base) }()
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

// nextChunk takes the chunk prepared at the logical end in place of the
// current one, and starts preparing the one after it.
func (m *mappedFile) nextChunk() error {
	next := <-m.ahead
	m.ahead = nil
	if next.err != nil {
		return next.err
	}
	if err := m.unmap(); err != nil {
		syscall.Munmap(next.data)
		return err
	}
	m.base, m.data = m.size, next.data
	m.prepare(m.base + m.chunk)
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
	if err := syscall.Fdatasync(m.fd); err != nil {
		return &fs.PathError{Op: "fdatasync", Path: m.f.Name(), Err: err}
	}
	return nil
}

// Close unmaps the file and cuts it to its logical length, releasing the
// space allocated ahead (or, in a reused file, the old bytes past it). It
// does not sync: callers sync first.
func (m *mappedFile) Close() error {
	if m.ahead != nil {
		if next := <-m.ahead; next.data != nil {
			syscall.Munmap(next.data)
		}
		m.ahead = nil
	}
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
