package vfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"slices"

	"github.com/stratadb/strata/internal/errs"
)

// osFS implements FS with package os.
type osFS struct{}

func (osFS) Create(name string) (File, error) {
	return os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
}

func (osFS) Open(name string) (File, error) {
	return os.Open(name)
}

func (osFS) Remove(name string) error { return os.Remove(name) }

func (osFS) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }

func (osFS) List(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	slices.Sort(names)
	return names, nil
}

func (osFS) Link(oldname, newname string) error { return os.Link(oldname, newname) }

func (osFS) MkdirAll(dir string, perm fs.FileMode) error { return os.MkdirAll(dir, perm) }

func (osFS) Stat(name string) (fs.FileInfo, error) { return os.Stat(name) }

func (osFS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return errs.Errorf("vfs: sync directory %s: %w", dir, err)
	}
	return d.Close()
}

func (osFS) Lock(name string) (io.Closer, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	lock, err := lockFile(f)
	if err != nil {
		f.Close()
		if errors.Is(err, ErrLocked) {
			return nil, &lockedError{name}
		}
		return nil, errs.Errorf("vfs: lock %s: %w", name, err)
	}
	return lock, nil
}

func (osFS) ReuseForWrite(oldname, newname string) (File, error) {
	f, err := openRenamed(oldname, newname)
	if err != nil {
		return nil, err
	}
	return &reusedFile{File: f}, nil
}

// openRenamed renames oldname to newname and opens it for writing from its
// start; if the open fails it renames the file back.
func openRenamed(oldname, newname string) (*os.File, error) {
	if err := os.Rename(oldname, newname); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(newname, os.O_RDWR, 0)
	if err != nil {
		os.Rename(newname, oldname)
		return nil, err
	}
	return f, nil
}

// reusedFile is a file written over from its start: see FS.ReuseForWrite.
type reusedFile struct {
	*os.File
	written int64
}

func (f *reusedFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	f.written += int64(n)
	return n, err
}

// Stat reports the bytes written, not the old bytes beyond them.
func (f *reusedFile) Stat() (fs.FileInfo, error) {
	info, err := f.File.Stat()
	if err != nil {
		return nil, err
	}
	return sizedInfo{info, f.written}, nil
}

// Close cuts the file to the bytes written.
func (f *reusedFile) Close() error {
	err := f.File.Truncate(f.written)
	if cerr := f.File.Close(); err == nil {
		err = cerr
	}
	return err
}

// sizedInfo is a file's description with the size its writer knows.
type sizedInfo struct {
	fs.FileInfo
	size int64
}

func (i sizedInfo) Size() int64 { return i.size }
