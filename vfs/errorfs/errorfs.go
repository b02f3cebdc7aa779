// Package errorfs wraps a vfs.FS so that chosen operations fail: the way
// tests prove that Strata survives ENOSPC and EIO during log appends and
// syncs, flushes, compactions and manifest writes.
//
//	rule := &errorfs.Rule{Ops: errorfs.OpSync, Match: errorfs.Suffix(".log"), Err: syscall.EIO}
//	fsys := errorfs.Wrap(vfs.NewMem(), rule)
//	rule.Enable()   // from now on, syncing a log fails with EIO
//	...
//	rule.Disable()  // the fault clears
package errorfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync/atomic"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/vfs"
)

// Op is a set of filesystem operations.
type Op uint32

// The operations, one bit each. A file's operations (OpRead, OpReadAt,
// OpWrite, OpSync) match on the path it was created or opened with (the new
// one for a reused file).
const (
	OpCreate  Op = 1 << iota // FS.Create
	OpOpen                   // FS.Open
	OpRead                   // File.Read
	OpReadAt                 // File.ReadAt
	OpWrite                  // File.Write
	OpSync                   // File.Sync
	OpRename                 // FS.Rename, matched on the new name
	OpRemove                 // FS.Remove
	OpList                   // FS.List
	OpMkdir                  // FS.MkdirAll
	OpStat                   // FS.Stat
	OpSyncDir                // FS.SyncDir
	OpLock                   // FS.Lock
	OpReuse                  // FS.ReuseForWrite and MappedCreator.ReuseMapped, matched on the new name
	OpLink                   // FS.Link, matched on the new name
	// OpAll is every operation.
	OpAll Op = 1<<iota - 1
)

var opNames = []string{"create", "open", "read", "readat", "write", "sync", "rename", "remove", "list", "mkdir", "stat", "syncdir", "lock", "reuse", "link"}

// String names the operations in the set.
func (o Op) String() string {
	var names []string
	for i, name := range opNames {
		if o&(1<<i) != 0 {
			names = append(names, name)
		}
	}
	return strings.Join(names, "|")
}

// ErrInjected is matched by every injected error.
var ErrInjected = errors.New("errorfs: injected error")

// InjectedError is an injected failure: the operation, the path, and the
// error it stands for (such as syscall.ENOSPC), which errors.Is matches
// along with ErrInjected.
type InjectedError struct {
	Op   Op
	Path string
	Err  error
}

// Error names the operation, the path and the error injected.
func (e *InjectedError) Error() string {
	return fmt.Sprintf("errorfs: injected %v on %s: %v", e.Op, e.Path, e.Err)
}

// Unwrap exposes ErrInjected and the underlying error.
func (e *InjectedError) Unwrap() []error { return []error{ErrInjected, e.Err} }

// Injector decides whether an operation fails.
type Injector interface {
	// MaybeError returns the error op on path must fail with, or nil.
	MaybeError(op Op, path string) error
}

// Rule fails the operations in Ops on paths Match accepts, once enabled,
// after letting the first After of them through. It is safe for concurrent
// use.
type Rule struct {
	// Ops selects the operations. Zero means OpAll.
	Ops Op
	// Match selects paths; nil matches every path.
	Match func(path string) bool
	// After is the number of matching operations to let through first.
	After int64
	// Err is what failing operations return (wrapped in an
	// *InjectedError).
	Err error

	enabled atomic.Bool
	seen    atomic.Int64
	hits    atomic.Int64
}

// Enable starts injecting.
func (r *Rule) Enable() { r.enabled.Store(true) }

// Disable stops injecting: the fault clears.
func (r *Rule) Disable() { r.enabled.Store(false) }

// Hits counts the errors injected.
func (r *Rule) Hits() int64 { return r.hits.Load() }

// MaybeError implements Injector.
func (r *Rule) MaybeError(op Op, path string) error {
	ops := r.Ops
	if ops == 0 {
		ops = OpAll
	}
	if !r.enabled.Load() || ops&op == 0 || (r.Match != nil && !r.Match(path)) {
		return nil
	}
	if r.seen.Add(1) <= r.After {
		return nil
	}
	r.hits.Add(1)
	return &InjectedError{Op: op, Path: path, Err: r.Err}
}

// Suffix matches paths that end in one of suffixes.
func Suffix(suffixes ...string) func(string) bool {
	return func(path string) bool {
		for _, s := range suffixes {
			if strings.HasSuffix(path, s) {
				return true
			}
		}
		return false
	}
}

// Contains matches paths that contain s.
func Contains(s string) func(string) bool {
	return func(path string) bool { return strings.Contains(path, s) }
}

// FS is a filesystem whose operations an Injector can make fail.
type FS struct {
	fs  vfs.FS
	inj Injector
}

// Wrap returns fsys with errors injected by inj.
func Wrap(fsys vfs.FS, inj Injector) *FS { return &FS{fs: fsys, inj: inj} }

func (f *FS) check(op Op, path string) error { return f.inj.MaybeError(op, path) }

// Create implements vfs.FS, failing as OpCreate.
func (f *FS) Create(name string) (vfs.File, error) {
	if err := f.check(OpCreate, name); err != nil {
		return nil, err
	}
	return f.wrap(f.fs.Create(name))
}

// Open implements vfs.FS, failing as OpOpen.
func (f *FS) Open(name string) (vfs.File, error) {
	if err := f.check(OpOpen, name); err != nil {
		return nil, err
	}
	return f.wrap(f.fs.Open(name))
}

// Remove implements vfs.FS, failing as OpRemove.
func (f *FS) Remove(name string) error {
	if err := f.check(OpRemove, name); err != nil {
		return err
	}
	return f.fs.Remove(name)
}

// Rename implements vfs.FS, failing as OpRename on the new name.
func (f *FS) Rename(oldname, newname string) error {
	if err := f.check(OpRename, newname); err != nil {
		return err
	}
	return f.fs.Rename(oldname, newname)
}

// List implements vfs.FS, failing as OpList.
func (f *FS) List(dir string) ([]string, error) {
	if err := f.check(OpList, dir); err != nil {
		return nil, err
	}
	return f.fs.List(dir)
}

// MkdirAll implements vfs.FS, failing as OpMkdir.
func (f *FS) MkdirAll(dir string, perm fs.FileMode) error {
	if err := f.check(OpMkdir, dir); err != nil {
		return err
	}
	return f.fs.MkdirAll(dir, perm)
}

// Stat implements vfs.FS, failing as OpStat.
func (f *FS) Stat(name string) (fs.FileInfo, error) {
	if err := f.check(OpStat, name); err != nil {
		return nil, err
	}
	return f.fs.Stat(name)
}

// SyncDir implements vfs.FS, failing as OpSyncDir.
func (f *FS) SyncDir(dir string) error {
	if err := f.check(OpSyncDir, dir); err != nil {
		return err
	}
	return f.fs.SyncDir(dir)
}

// Lock implements vfs.FS, failing as OpLock.
func (f *FS) Lock(name string) (io.Closer, error) {
	if err := f.check(OpLock, name); err != nil {
		return nil, err
	}
	return f.fs.Lock(name)
}

// ReuseForWrite implements vfs.FS, failing as OpReuse on the new name.
func (f *FS) ReuseForWrite(oldname, newname string) (vfs.File, error) {
	if err := f.check(OpReuse, newname); err != nil {
		return nil, err
	}
	return f.wrap(f.fs.ReuseForWrite(oldname, newname))
}

// Link implements vfs.FS, failing as OpLink on the new name.
func (f *FS) Link(oldname, newname string) error {
	if err := f.check(OpLink, newname); err != nil {
		return err
	}
	return f.fs.Link(oldname, newname)
}

// CreateMapped implements vfs.MappedCreator, failing as OpCreate, when the
// wrapped filesystem does; otherwise it returns errors.ErrUnsupported, and
// callers use Create.
func (f *FS) CreateMapped(name string, opts vfs.MappedOptions) (vfs.File, error) {
	m, ok := f.fs.(vfs.MappedCreator)
	if !ok {
		return nil, errs.Errorf("errorfs: mapped %s: %w", name, errors.ErrUnsupported)
	}
	if err := f.check(OpCreate, name); err != nil {
		return nil, err
	}
	return f.wrap(m.CreateMapped(name, opts))
}

// ReuseMapped implements vfs.MappedCreator, failing as OpReuse on the new
// name, when the wrapped filesystem does; otherwise it returns
// errors.ErrUnsupported.
func (f *FS) ReuseMapped(oldname, newname string, opts vfs.MappedOptions) (vfs.File, error) {
	m, ok := f.fs.(vfs.MappedCreator)
	if !ok {
		return nil, errs.Errorf("errorfs: mapped %s: %w", newname, errors.ErrUnsupported)
	}
	if err := f.check(OpReuse, newname); err != nil {
		return nil, err
	}
	return f.wrap(m.ReuseMapped(oldname, newname, opts))
}

// wrap makes a file's reads, writes and syncs fail as the injector says.
func (f *FS) wrap(file vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return &errFile{File: file, fs: f}, nil
}

// errFile injects errors into a file's reads, writes and syncs.
type errFile struct {
	vfs.File
	fs *FS
}

func (e *errFile) Read(p []byte) (int, error) {
	if err := e.fs.check(OpRead, e.Name()); err != nil {
		return 0, err
	}
	return e.File.Read(p)
}

func (e *errFile) ReadAt(p []byte, off int64) (int, error) {
	if err := e.fs.check(OpReadAt, e.Name()); err != nil {
		return 0, err
	}
	return e.File.ReadAt(p, off)
}

func (e *errFile) Write(p []byte) (int, error) {
	if err := e.fs.check(OpWrite, e.Name()); err != nil {
		return 0, err
	}
	return e.File.Write(p)
}

func (e *errFile) Sync() error {
	if err := e.fs.check(OpSync, e.Name()); err != nil {
		return err
	}
	return e.File.Sync()
}
