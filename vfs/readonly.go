package vfs

import (
	"fmt"
	"io"

	"golang.org/x/exp/mmap"
)

// ReadOnlyFile is an immutable file opened for random reads. ReadAt is safe
// for concurrent use.
type ReadOnlyFile interface {
	io.ReaderAt
	io.Closer
	// Size is the file's length, fixed when it was opened.
	Size() int64
}

// OpenReadOnly opens the named file for random reads. With useMmap, and
// when fsys is the operating system's filesystem, the file is memory-mapped
// (golang.org/x/exp/mmap): a read is then a copy out of the page cache with
// no system call. Otherwise reads go through File.ReadAt, which is also what
// test filesystems see.
func OpenReadOnly(fsys FS, name string, useMmap bool) (ReadOnlyFile, error) {
	fsys = OrDefault(fsys)
	if _, isOS := fsys.(osFS); isOS && useMmap {
		m, err := mmap.Open(name)
		if err != nil {
			return nil, err
		}
		return mappedFile{m}, nil
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("vfs: stat %s: %w", name, err)
	}
	return sizedFile{File: f, size: info.Size()}, nil
}

type mappedFile struct {
	*mmap.ReaderAt
}

func (m mappedFile) Size() int64 { return int64(m.Len()) }

type sizedFile struct {
	File
	size int64
}

func (f sizedFile) Size() int64 { return f.size }
