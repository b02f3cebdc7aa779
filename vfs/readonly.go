package vfs

import (
	"io"
	"io/fs"

	"github.com/stratadb/strata/internal/errs"
)

// ReadOnlyFile is an immutable file opened for random reads. ReadAt is safe
// for concurrent use.
type ReadOnlyFile interface {
	io.ReaderAt
	io.Closer
	// Size is the file's length, fixed when it was opened.
	Size() int64
}

// MappedFile is a ReadOnlyFile whose bytes are directly addressable, so
// readers can use them in place instead of copying them out.
type MappedFile interface {
	ReadOnlyFile
	// Bytes returns the file's contents. The slice is valid until Close and
	// must not be modified.
	Bytes() []byte
}

// OpenReadOnly opens the named file for random reads. With useMmap, and
// when fsys is the operating system's filesystem on a platform that
// supports it, the file is memory-mapped and the result is a MappedFile: a
// read is then a copy out of the page cache with no system call, or no copy
// at all through Bytes. Otherwise reads go through File.ReadAt, which is
// also what test filesystems see.
//
// A mapped file must not shrink while it is open: touching a page past its
// new end kills the process (SIGBUS). Strata maps only files it never
// modifies after writing them.
func OpenReadOnly(fsys FS, name string, useMmap bool) (ReadOnlyFile, error) {
	fsys = OrDefault(fsys)
	if _, isOS := fsys.(osFS); isOS && useMmap && mmapSupported {
		return mapFile(name)
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, errs.Errorf("vfs: stat %s: %w", name, err)
	}
	return sizedFile{File: f, size: info.Size()}, nil
}

type sizedFile struct {
	File
	size int64
}

func (f sizedFile) Size() int64 { return f.size }

// ReadAt rejects a negative offset with fs.ErrInvalid, as a mapping does
// (package os returns an error that matches nothing).
func (f sizedFile) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, &fs.PathError{Op: "readat", Path: f.Name(), Err: fs.ErrInvalid}
	}
	return f.File.ReadAt(p, off)
}

// mapping is a read-only memory map of a whole file. After Close, ReadAt
// and Close return fs.ErrClosed, as an os.File's do.
type mapping struct {
	name   string
	data   []byte
	closed bool
}

func (m *mapping) Bytes() []byte { return m.data }

func (m *mapping) Size() int64 { return int64(len(m.data)) }

func (m *mapping) ReadAt(p []byte, off int64) (int, error) {
	if m.closed {
		return 0, &fs.PathError{Op: "readat", Path: m.name, Err: fs.ErrClosed}
	}
	if off < 0 {
		return 0, &fs.PathError{Op: "readat", Path: m.name, Err: fs.ErrInvalid}
	}
	if off >= int64(len(m.data)) {
		return 0, io.EOF
	}
	n := copy(p, m.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// markClosed records that m is closed and returns the bytes to unmap, or an
// error if it was already closed.
func (m *mapping) markClosed() ([]byte, error) {
	if m.closed {
		return nil, &fs.PathError{Op: "close", Path: m.name, Err: fs.ErrClosed}
	}
	m.closed = true
	data := m.data
	m.data = nil
	return data, nil
}
