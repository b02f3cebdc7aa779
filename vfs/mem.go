package vfs

import (
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// MemFS is an in-memory filesystem that remembers what is durable, so that
// tests can simulate a power loss. It follows POSIX durability: a file's
// written bytes are durable once Sync returns; a create, rename or remove is
// durable once SyncDir of its directory returns. CrashClone returns the
// filesystem as a power loss at that instant would leave it.
//
// Files are append-only (every Write appends), which is how Strata writes.
// Errors match what package os returns under errors.Is: fs.ErrNotExist,
// syscall.ENOTDIR, syscall.ENOTEMPTY, and fs.ErrClosed for a closed file.
// A MemFS is safe for concurrent use.
type MemFS struct {
	mu    sync.Mutex
	root  *memNode
	locks map[string]bool
}

type memNode struct {
	dir bool
	// A file: its bytes, and how many of them are durable.
	data      []byte
	syncedLen int
	// A directory: its entries now, and as of its last sync.
	children, synced map[string]*memNode
	modTime          time.Time
}

func newDirNode() *memNode {
	return &memNode{dir: true, children: map[string]*memNode{}, synced: map[string]*memNode{}}
}

// NewMem returns an empty in-memory filesystem. Paths are slash-separated;
// relative paths are taken from its root.
func NewMem() *MemFS {
	return &MemFS{root: newDirNode(), locks: map[string]bool{}}
}

func splitPath(name string) []string {
	name = filepath.ToSlash(filepath.Clean("/" + name))
	if name == "/" {
		return nil
	}
	return strings.Split(name[1:], "/")
}

// lookup returns the node at name. The caller holds fs.mu.
func (fsys *MemFS) lookup(name string) (*memNode, error) {
	n := fsys.root
	for _, part := range splitPath(name) {
		if !n.dir {
			return nil, &fs.PathError{Op: "lookup", Path: name, Err: syscall.ENOTDIR}
		}
		child, ok := n.children[part]
		if !ok {
			return nil, &fs.PathError{Op: "lookup", Path: name, Err: fs.ErrNotExist}
		}
		n = child
	}
	return n, nil
}

// parent returns the directory that holds name, and name's last element.
func (fsys *MemFS) parent(name string) (*memNode, string, error) {
	parts := splitPath(name)
	if len(parts) == 0 {
		return nil, "", &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	dir, err := fsys.lookup(strings.Join(parts[:len(parts)-1], "/"))
	if err != nil {
		return nil, "", err
	}
	if !dir.dir {
		return nil, "", &fs.PathError{Op: "open", Path: name, Err: syscall.ENOTDIR}
	}
	return dir, parts[len(parts)-1], nil
}

// Create creates or truncates the named file. Truncating keeps the file, as
// O_TRUNC keeps the inode: the directory entry, durable or not, still names
// it, so data written and synced after the truncation is durable without
// another SyncDir.
func (fsys *MemFS) Create(name string) (File, error) {
	fsys.mu.Lock()
	defer fsys.mu.Unlock()
	dir, base, err := fsys.parent(name)
	if err != nil {
		return nil, err
	}
	n, ok := dir.children[base]
	switch {
	case ok && n.dir:
		return nil, &fs.PathError{Op: "create", Path: name, Err: fs.ErrExist}
	case ok:
		n.data, n.syncedLen, n.modTime = nil, 0, time.Now()
	default:
		n = &memNode{modTime: time.Now()}
		dir.children[base] = n
	}
	return &memFile{fs: fsys, node: n, name: name, writable: true}, nil
}

// Open opens the named file for reading.
func (fsys *MemFS) Open(name string) (File, error) {
	fsys.mu.Lock()
	defer fsys.mu.Unlock()
	n, err := fsys.lookup(name)
	if err != nil {
		return nil, err
	}
	return &memFile{fs: fsys, node: n, name: name}, nil
}

// Remove removes the named file or empty directory.
func (fsys *MemFS) Remove(name string) error {
	fsys.mu.Lock()
	defer fsys.mu.Unlock()
	dir, base, err := fsys.parent(name)
	if err != nil {
		return err
	}
	n, ok := dir.children[base]
	if !ok {
		return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrNotExist}
	}
	if n.dir && len(n.children) > 0 {
		return &fs.PathError{Op: "remove", Path: name, Err: syscall.ENOTEMPTY}
	}
	delete(dir.children, base)
	return nil
}

// Rename renames oldname to newname, replacing newname.
func (fsys *MemFS) Rename(oldname, newname string) error {
	fsys.mu.Lock()
	defer fsys.mu.Unlock()
	from, oldBase, err := fsys.parent(oldname)
	if err != nil {
		return err
	}
	to, newBase, err := fsys.parent(newname)
	if err != nil {
		return err
	}
	n, ok := from.children[oldBase]
	if !ok {
		return &fs.PathError{Op: "rename", Path: oldname, Err: fs.ErrNotExist}
	}
	delete(from.children, oldBase)
	to.children[newBase] = n
	return nil
}

// List returns the sorted names in dir.
func (fsys *MemFS) List(dir string) ([]string, error) {
	fsys.mu.Lock()
	defer fsys.mu.Unlock()
	n, err := fsys.lookup(dir)
	if err != nil {
		return nil, err
	}
	if !n.dir {
		return nil, &fs.PathError{Op: "list", Path: dir, Err: syscall.ENOTDIR}
	}
	names := make([]string, 0, len(n.children))
	for name := range n.children {
		names = append(names, name)
	}
	slices.Sort(names)
	return names, nil
}

// MkdirAll creates dir and any missing parents.
func (fsys *MemFS) MkdirAll(dir string, _ fs.FileMode) error {
	fsys.mu.Lock()
	defer fsys.mu.Unlock()
	n := fsys.root
	for _, part := range splitPath(dir) {
		child, ok := n.children[part]
		if !ok {
			child = newDirNode()
			n.children[part] = child
		}
		if !child.dir {
			return &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
		}
		n = child
	}
	return nil
}

// Stat describes the named file or directory.
func (fsys *MemFS) Stat(name string) (fs.FileInfo, error) {
	fsys.mu.Lock()
	defer fsys.mu.Unlock()
	n, err := fsys.lookup(name)
	if err != nil {
		return nil, err
	}
	return memInfo{name: filepath.Base(name), size: int64(len(n.data)), dir: n.dir, mod: n.modTime}, nil
}

// SyncDir makes dir's current entries durable.
func (fsys *MemFS) SyncDir(dir string) error {
	fsys.mu.Lock()
	defer fsys.mu.Unlock()
	n, err := fsys.lookup(dir)
	if err != nil {
		return err
	}
	if !n.dir {
		return &fs.PathError{Op: "syncdir", Path: dir, Err: syscall.ENOTDIR}
	}
	n.synced = cloneEntries(n.children)
	return nil
}

// Lock takes an exclusive lock on name, creating the file if needed.
func (fsys *MemFS) Lock(name string) (io.Closer, error) {
	fsys.mu.Lock()
	defer fsys.mu.Unlock()
	key := filepath.Clean("/" + name)
	if fsys.locks[key] {
		return nil, fmt.Errorf("vfs: lock %s: %w", name, ErrLocked)
	}
	if _, err := fsys.lookup(name); err != nil {
		dir, base, err := fsys.parent(name)
		if err != nil {
			return nil, err
		}
		dir.children[base] = &memNode{modTime: time.Now()}
	}
	fsys.locks[key] = true
	return memLock{fs: fsys, key: key}, nil
}

type memLock struct {
	fs  *MemFS
	key string
}

func (l memLock) Close() error {
	l.fs.mu.Lock()
	defer l.fs.mu.Unlock()
	delete(l.fs.locks, l.key)
	return nil
}

// CrashOptions shape a simulated power loss.
type CrashOptions struct {
	// Rand, if set, tears writes: each file keeps a random prefix (possibly
	// empty, possibly all) of its unsynced bytes, as when the disk wrote
	// part of what the cache held. Nil keeps only what was synced.
	Rand *rand.Rand
}

// CrashClone returns a new filesystem holding what a power loss at this
// instant would leave: the directory entries as of each directory's last
// sync, and each file's synced bytes (plus, with opts.Rand, a torn part of
// the rest). Locks are not carried over. The original is unchanged and can
// go on being used.
//
// The clone is a function of the filesystem and the state of opts.Rand:
// files draw from it one after another, depth first in order of name, so a
// given seed gives the same clone every time.
func (fsys *MemFS) CrashClone(opts CrashOptions) *MemFS {
	fsys.mu.Lock()
	defer fsys.mu.Unlock()
	clones := map[*memNode]*memNode{}
	var clone func(n *memNode, entries map[string]*memNode) *memNode
	clone = func(n *memNode, entries map[string]*memNode) *memNode {
		if c, ok := clones[n]; ok {
			return c
		}
		if n.dir {
			c := newDirNode()
			clones[n] = c
			// In order of name, not of map iteration, so that the draws
			// from opts.Rand, and so the clone, are the same every time.
			for _, name := range slices.Sorted(maps.Keys(entries)) {
				child := entries[name]
				c.children[name] = clone(child, child.synced)
			}
			c.synced = cloneEntries(c.children)
			return c
		}
		keep := n.syncedLen
		if opts.Rand != nil && len(n.data) > keep {
			keep += opts.Rand.IntN(len(n.data) - keep + 1)
		}
		c := &memNode{data: slices.Clone(n.data[:keep]), syncedLen: keep, modTime: n.modTime}
		clones[n] = c
		return c
	}
	// The root is durable by definition; its entries are those last synced.
	return &MemFS{root: clone(fsys.root, fsys.root.synced), locks: map[string]bool{}}
}

func cloneEntries(m map[string]*memNode) map[string]*memNode {
	c := make(map[string]*memNode, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// memFile is an open file of a MemFS.
type memFile struct {
	fs       *MemFS
	node     *memNode
	name     string
	writable bool
	pos      int
	closed   bool
}

// closedError is what an operation on a closed file returns: the error
// package os returns, so that errors.Is(err, fs.ErrClosed) holds for both
// filesystems.
func (f *memFile) closedError(op string) error {
	return &fs.PathError{Op: op, Path: f.name, Err: fs.ErrClosed}
}

func (f *memFile) Read(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return 0, f.closedError("read")
	}
	if f.pos >= len(f.node.data) {
		return 0, io.EOF
	}
	n := copy(p, f.node.data[f.pos:])
	f.pos += n
	return n, nil
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return 0, f.closedError("readat")
	}
	if off < 0 {
		return 0, &fs.PathError{Op: "readat", Path: f.name, Err: fs.ErrInvalid}
	}
	if off >= int64(len(f.node.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.node.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Write appends p.
func (f *memFile) Write(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return 0, f.closedError("write")
	}
	if !f.writable {
		return 0, &fs.PathError{Op: "write", Path: f.name, Err: fs.ErrPermission}
	}
	f.node.data = append(f.node.data, p...)
	f.node.modTime = time.Now()
	return len(p), nil
}

func (f *memFile) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return f.closedError("sync")
	}
	f.node.syncedLen = len(f.node.data)
	return nil
}

func (f *memFile) Stat() (fs.FileInfo, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return nil, f.closedError("stat")
	}
	return memInfo{name: filepath.Base(f.name), size: int64(len(f.node.data)), mod: f.node.modTime}, nil
}

func (f *memFile) Name() string { return f.name }

func (f *memFile) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return f.closedError("close")
	}
	f.closed = true
	return nil
}

type memInfo struct {
	name string
	size int64
	dir  bool
	mod  time.Time
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) ModTime() time.Time { return i.mod }
func (i memInfo) IsDir() bool        { return i.dir }
func (i memInfo) Sys() any           { return nil }
func (i memInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
