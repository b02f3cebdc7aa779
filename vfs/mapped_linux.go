//go:build linux

package vfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/stratadb/strata/internal/errs"
)

// CreateMapped creates the named file for appending through a shared
// memory mapping: see MappedCreator.
func (osFS) CreateMapped(name string, opts MappedOptions) (File, error) {
	opts.Chunk = opts.chunk()
	if err := checkChunk(name, opts.Chunk); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	m, err := newMappedFile(f, opts, 0)
	if err != nil {
		f.Close()
		os.Remove(name)
		return nil, err
	}
	return m, nil
}

// ReuseMapped renames oldname to newname and writes over it through a
// shared memory mapping: see MappedCreator.
func (osFS) ReuseMapped(oldname, newname string, opts MappedOptions) (File, error) {
	opts.Chunk = opts.chunk()
	if err := checkChunk(newname, opts.Chunk); err != nil {
		return nil, err
	}
	f, err := openRenamed(oldname, newname)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	var m *mappedFile
	if err == nil {
		m, err = newMappedFile(f, opts, info.Size())
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

// Filesystem magic numbers (statfs f_type) of the filesystems a log may be
// mapped on: those the filesystem matrix (make fs-matrix) proves.
const (
	ext4Magic  = 0xEF53 // ext2, ext3 and ext4
	xfsMagic   = 0x58465342
	btrfsMagic = 0x9123683E
	tmpfsMagic = 0x01021994
)

// mappable reports whether f's filesystem is one on which appending
// through a shared mapping is proven to behave, faults included (see
// mappedFile): elsewhere (FUSE with direct I/O, virtiofs without a cache,
// network and overlay filesystems) shared writable mappings are refused,
// mishandled or untested, and a plain file serves.
func mappable(f *os.File) (bool, error) {
	var st syscall.Statfs_t
	if err := syscall.Fstatfs(int(f.Fd()), &st); err != nil {
		return false, &fs.PathError{Op: "fstatfs", Path: f.Name(), Err: err}
	}
	switch uint32(st.Type) {
	case ext4Magic, xfsMagic, btrfsMagic, tmpfsMagic:
		return true, nil
	}
	return false, nil
}

// newMappedFile maps f's first chunk and starts preparing the next. The
// first allocated bytes of f are space it has already. Where the file
// cannot be appended to through a mapping (see mappable; fallocate or mmap
// not supported) the error matches errors.ErrUnsupported.
func newMappedFile(f *os.File, opts MappedOptions, allocated int64) (*mappedFile, error) {
	if ok, err := mappable(f); err != nil || !ok {
		if err == nil {
			err = errs.Errorf("vfs: mapped %s: %w: not a filesystem logs are mapped on", f.Name(), errors.ErrUnsupported)
		}
		return nil, err
	}
	m := &mappedFile{f: f, fd: int(f.Fd()), chunk: opts.Chunk, allocated: allocated, syncOften: opts.SyncOften}
	first := m.mapChunk(0)
	if first.err != nil {
		if unsupported(first.err) {
			return nil, errs.Errorf("vfs: mapped %s: %w: %w", f.Name(), errors.ErrUnsupported, first.err)
		}
		return nil, first.err
	}
	m.data = first.data
	m.prepare(m.chunk)
	return m, nil
}

// unsupported reports whether a chunk failed because the filesystem cannot
// allocate ahead or map the file, rather than for want of space or an I/O
// error: the caller then appends with write(2) instead.
func unsupported(err error) bool {
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return false
	}
	if pe.Op == "mmap" {
		return true // ENODEV and its kin: nothing a plain file needs
	}
	return errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS)
}

// mappedFile appends by copying into a shared mapping of one chunk of the
// file at a time (with MappedOptions.SyncOften, the first write after a
// sync by write(2) into it). Each chunk's blocks are allocated (fallocate)
// before it is mapped, unless the file had them already (a reused file),
// so that a full disk is, as a rule, the error of the Write that needs the
// next chunk. While one chunk takes writes, a goroutine prepares the next:
// allocates it, maps it and faults its pages in for writing, which is where
// the copies of a fresh chunk otherwise spend most of their time.
//
// A store into the mapping can still fault: the filesystem refuses the
// page (an I/O error, a filesystem shut down after one, btrfs out of space:
// it reserves space again at every write fault after a writeback, even in
// space allocated ahead) or the file was cut behind the mapping's back. The kernel then raises SIGBUS, which kills a
// Go program unless the goroutine asked to panic instead
// (debug.SetPanicOnFault). Write does, for its copy alone, and writes what
// faulted with pwrite(2) instead, which returns the filesystem's error (or
// succeeds): a fault is never a signal to the host process.
type mappedFile struct {
	f         *os.File
	fd        int
	chunk     int64
	allocated int64         // the file's size when opened: space it has, in written blocks
	size      int64         // bytes written: the file's logical length
	base      int64         // file offset of the mapped chunk
	data      []byte        // the mapped chunk
	ahead     chan chunkMap // the next chunk, being prepared; nil once closed
	pos       int64         // Read's offset
	err       error         // sticky: after a failed chunk the tail is unknown; fs.ErrClosed after Close
	faults    int           // stores that faulted and went through pwrite(2)
	syncOften bool          // see MappedOptions.SyncOften
	// synced is set by a Sync, which may run during a Write, and cleared
	// by the next Write.
	synced atomic.Bool
}

// chunkMap is a chunk allocated and mapped, or why it could not be.
type chunkMap struct {
	data []byte
	err  error
}

// fallocate and mmap prepare a chunk: variables, so that tests can fail
// them as a full disk or a filesystem that cannot map files would.
var (
	fallocate = syscall.Fallocate
	mmap      = syscall.Mmap
)

// MADV_POPULATE_READ and MADV_POPULATE_WRITE (Linux 5.14): fault pages
// in, readable, or writable as the first store to each would.
const (
	madvPopulateRead  = 22
	madvPopulateWrite = 23
)

// mapChunk allocates the chunk at base, unless the file has it already,
// and maps it, its pages faulted in where the kernel can (see
// MappedOptions.SyncOften): in a reused file, read in, since a page is
// written a record at a time.
func (m *mappedFile) mapChunk(base int64) chunkMap {
	if base+m.chunk > m.allocated {
		if err := fallocate(m.fd, 0, base, m.chunk); err != nil {
			return chunkMap{err: &fs.PathError{Op: "fallocate", Path: m.f.Name(), Err: err}}
		}
	}
	populate := madvPopulateWrite
	if m.syncOften && base < m.allocated {
		// Space the file had holds written blocks: a page faulted in for
		// reading takes its first store cheaply. Space allocated now is
		// unwritten, and the first store to each page would convert its
		// block on the append's path, which costs more than the chunk's
		// write-out at the next sync (docs/2-log.md).
		populate = madvPopulateRead
	}
	data, err := mmap(m.fd, base, int(m.chunk), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return chunkMap{err: &fs.PathError{Op: "mmap", Path: m.f.Name(), Err: err}}
	}
	// A hint: older kernels refuse it, and the stores fault instead. A page
	// the filesystem refuses makes it fail, not raise a signal.
	syscall.Madvise(data, populate)
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
	// A sync write-protects the pages it wrote back, so the first store
	// into each would fault again: a file synced often appends its first
	// write after a sync with write(2) into the chunk prepared ahead, which
	// costs a synced writer less (see MappedOptions.SyncOften).
	viaWrite := m.syncOften && m.synced.Swap(false)
	n := 0
	for n < len(p) {
		if m.size == m.base+int64(len(m.data)) {
			if err := m.nextChunk(); err != nil {
				m.err = err
				return n, err
			}
		}
		off := m.size - m.base
		c := min(len(p)-n, len(m.data)-int(off))
		if viaWrite || !storeMapped(m.data[off:int(off)+c], p[n:n+c]) {
			what := "write(2)"
			if !viaWrite {
				// The filesystem refused a page, or the file was cut: the
				// same bytes through write(2) get its error, or go in.
				m.faults++
				what = "a store faulted, and so did write(2)"
			}
			if _, err := m.f.WriteAt(p[n:n+c], m.size); err != nil {
				m.err = errs.Errorf("vfs: mapped %s: %s: %w", m.f.Name(), what, err)
				return n, m.err
			}
		}
		n += c
		m.size += int64(c)
	}
	return n, nil
}

// storeMapped copies src into dst, a part of a mapping, and reports false
// if the copy faulted, instead of letting the fault kill the process. What
// it copied before the fault is left in place.
func storeMapped(dst, src []byte) (ok bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			fault, isFault := r.(interface{ Addr() uintptr })
			start := uintptr(unsafe.Pointer(unsafe.SliceData(dst)))
			if _, isRuntime := r.(runtime.Error); !isFault || !isRuntime || fault.Addr() < start || fault.Addr() >= start+uintptr(len(dst)) {
				panic(r) // not a fault of this copy
			}
			ok = false
		}
	}()
	copy(dst, src)
	return true
}

// nextChunk takes the chunk prepared at the logical end in place of the
// current one, and starts preparing the one after it. A chunk that could
// not be prepared in the background is tried once more now: the space its
// allocation lacked may have been freed since.
func (m *mappedFile) nextChunk() error {
	next := <-m.ahead
	m.ahead = nil
	if next.err != nil {
		next = m.mapChunk(m.size)
		if next.err != nil {
			return next.err
		}
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
	if errors.Is(m.err, fs.ErrClosed) {
		return m.err
	}
	if err := syscall.Fdatasync(m.fd); err != nil {
		return &fs.PathError{Op: "fdatasync", Path: m.f.Name(), Err: err}
	}
	m.synced.Store(true)
	return nil
}

// Close unmaps the file and cuts it to its logical length, releasing the
// space allocated ahead (or, in a reused file, the old bytes past it). It
// does not sync: callers sync first. Every later call fails with
// fs.ErrClosed.
func (m *mappedFile) Close() error {
	if errors.Is(m.err, fs.ErrClosed) {
		return m.err
	}
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
	m.err = &fs.PathError{Op: "write", Path: m.f.Name(), Err: fs.ErrClosed}
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

// Fd returns the file's descriptor, so that StartWriteback reaches a mapped
// file's pages too.
func (m *mappedFile) Fd() uintptr { return uintptr(m.fd) }
