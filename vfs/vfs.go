package vfs

import (
	"errors"
	"io"
	"io/fs"

	"github.com/stratadb/strata/internal/errs"
)

// ErrLocked is returned by FS.Lock when the lock is already held. Where
// the operating system's filesystem has flock (Linux, macOS, the BSDs,
// illumos), that means held by this process or another. Elsewhere (Windows,
// Solaris, AIX) the lock is only process-local: ErrLocked means an earlier
// Lock in this process holds it, and another process is not stopped. A
// MemFS's locks are its own, and so process-local too.
var ErrLocked = errors.New("vfs: lock held by another process or Open")

// lockedError is Lock's error when the lock is held: ErrLocked's message
// with the file's name in it, matching ErrLocked under errors.Is.
type lockedError struct{ name string }

func (e *lockedError) Error() string {
	return "vfs: lock " + e.name + " held by another process or Open"
}

func (e *lockedError) Is(target error) bool { return target == ErrLocked }

// File is an open file. Reads and writes through io.Reader and io.Writer
// share one offset; ReadAt does not use it and is safe to call concurrently
// with other ReadAt calls.
type File interface {
	io.Reader
	io.ReaderAt
	io.Writer
	io.Closer
	// Name returns the name the file was opened with.
	Name() string
	// Sync makes the file's written data durable.
	Sync() error
	// Stat describes the file; Size is its current length.
	Stat() (fs.FileInfo, error)
}

// FS is a filesystem. Implementations are safe for concurrent use.
type FS interface {
	// Create creates the named file for reading and writing, truncating it
	// if it exists.
	Create(name string) (File, error)
	// Open opens the named file for reading.
	Open(name string) (File, error)
	// Remove removes the named file or empty directory.
	Remove(name string) error
	// Rename renames oldname to newname, replacing newname if it exists.
	Rename(oldname, newname string) error
	// List returns the names of the entries in dir, sorted.
	List(dir string) ([]string, error)
	// MkdirAll creates dir and any missing parents.
	MkdirAll(dir string, perm fs.FileMode) error
	// Stat describes the named file.
	Stat(name string) (fs.FileInfo, error)
	// SyncDir makes the creates, renames and removes of entries in dir
	// durable.
	SyncDir(dir string) error
	// Lock takes an exclusive lock on the named file, creating it if
	// needed. It fails with ErrLocked, without waiting, if the lock is held,
	// including by an earlier Lock in the same process. Closing the returned
	// Closer releases the lock.
	Lock(name string) (io.Closer, error)
	// ReuseForWrite renames oldname to newname, replacing newname if it
	// exists, and opens it for writing from its start without truncating
	// it: writes overwrite its old bytes in place, then extend it, so that
	// a Sync of space written before commits no allocation and no size
	// change. Stat reports the bytes written; Close cuts the file to them
	// (it does not sync, and until a Sync the cut may not be durable). The
	// rename is durable after SyncDir, as any rename. If opening fails
	// after the rename, the file is renamed back.
	ReuseForWrite(oldname, newname string) (File, error)
	// Link makes newname a hard link to the file oldname: one file under
	// two names, so that removing or renaming either leaves the other
	// whole. It fails if newname exists, and where the filesystem cannot
	// link (across devices, or a filesystem without hard links) with the
	// operating system's error, or one matching errors.ErrUnsupported:
	// LinkOrCopy copies instead. The new name is durable after SyncDir of
	// its directory; the file's bytes are as durable as they were.
	Link(oldname, newname string) error
}

// MappedCreator is implemented by filesystems that can create a file to
// append to without a system call per write: the file's space is allocated
// ahead, chunk bytes at a time, and each Write copies into a shared memory
// mapping of it. ReuseMapped does the same for a file written over from its
// start, as FS.ReuseForWrite. What a Write copied is in the operating
// system's page cache when it returns, as after write(2), so it survives
// the process being killed; Sync makes it durable. Until Close the file's
// size on disk covers the chunk allocated ahead, whose unwritten part reads
// as zeros (in a reused file, as its old bytes); Stat reports the bytes
// written, and Close cuts the file to them (it does not sync).
//
// The operating system's filesystem implements it on Linux; elsewhere, and
// where the filesystem cannot allocate ahead, CreateMapped and ReuseMapped
// return an error matching errors.ErrUnsupported, having renamed nothing,
// and callers use Create or ReuseForWrite.
type MappedCreator interface {
	// CreateMapped creates or truncates the named file for appending
	// through a mapping.
	CreateMapped(name string, opts MappedOptions) (File, error)
	// ReuseMapped renames oldname to newname as FS.ReuseForWrite does and
	// writes over the file from its start through a mapping. The space the
	// file has is mapped as it is, without allocating it again; beyond it,
	// chunks are allocated ahead as CreateMapped allocates them. A
	// filesystem that cannot allocate may then fail only once the file
	// outgrows its space, so callers reuse through a mapping only where
	// CreateMapped works.
	ReuseMapped(oldname, newname string, opts MappedOptions) (File, error)
}

// MappedOptions describe a file appended to through a mapping.
type MappedOptions struct {
	// Chunk, a multiple of the page size, is how much space is allocated
	// and mapped at a time. Default: 1 MiB.
	Chunk int64
	// SyncOften says the file is synced every write or few, as a synced
	// log is. The pages of a chunk mapped ahead in space the file already
	// has (a reused file) are then faulted in for reading, not for
	// writing: a page faulted in for writing is dirty, so the next sync
	// would write the whole chunk out, appended to or not. And the first
	// write after a sync goes through write(2) into the chunk allocated
	// ahead, not through the mapping: a sync write-protects the pages it
	// wrote back, and a store into one faults again, which costs a synced
	// writer more than the system call; writes that no sync separates
	// (unsynced ones in a synced log) still store. Default: false, for
	// appends synced seldom.
	SyncOften bool
}

// chunk returns Chunk, or its default.
func (o MappedOptions) chunk() int64 {
	if o.Chunk == 0 {
		return 1 << 20
	}
	return o.Chunk
}

// Default is the operating system's filesystem.
var Default FS = osFS{}

// OrDefault returns fsys, or Default when fsys is nil. Options structs use it
// so that their zero value means the operating system's filesystem.
func OrDefault(fsys FS) FS {
	if fsys == nil {
		return Default
	}
	return fsys
}

// LinkOrCopy makes newname a hard link to oldname, or, where FS.Link fails
// for any reason but newname existing or oldname missing (across devices,
// a filesystem without hard links), a copy of it, synced. It reports
// whether it linked. Either way newname's directory entry is durable only
// after SyncDir. A failed copy removes what it wrote.
func LinkOrCopy(fsys FS, oldname, newname string) (linked bool, err error) {
	err = fsys.Link(oldname, newname)
	if err == nil || errors.Is(err, fs.ErrExist) || errors.Is(err, fs.ErrNotExist) {
		return err == nil, err
	}
	if err := copyFile(fsys, oldname, newname); err != nil {
		return false, errs.Errorf("vfs: copy %s to %s: %w", oldname, newname, err)
	}
	return false, nil
}

// copyFile copies oldname to a new file newname and syncs it; on failure
// it removes newname.
func copyFile(fsys FS, oldname, newname string) error {
	if _, err := fsys.Stat(newname); err == nil {
		return &fs.PathError{Op: "copy", Path: newname, Err: fs.ErrExist}
	}
	src, err := fsys.Open(oldname)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := fsys.Create(newname)
	if err != nil {
		return err
	}
	_, err = io.Copy(dst, src)
	if err == nil {
		err = dst.Sync()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fsys.Remove(newname)
	}
	return err
}
