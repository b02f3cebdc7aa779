package vfs

import (
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
// The storage model: a file is its bytes now and its bytes as of its last
// Sync; a directory is its entries now and its entries as of its last
// SyncDir. That is all a power loss needs. What becomes of the unsynced
// bytes is CrashOptions' choice: lost, torn to a prefix, or kept and lost
// page by page in any order. A file's synced bytes are kept as the length
// synced and, for each page written over or cut off since, a copy of the
// page as synced, made when that first happens: appending copies nothing.
//
// Writes go at the file's offset, which Create and ReuseForWrite start at
// 0: a created file is appended to, a reused one written over. A cut
// (Close of a reused file) is durable only after a Sync, as the bytes are.
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
	// A file: its bytes, and its bytes as of its last Sync: the first
	// syncedLen bytes of data, except for the pages in saved, which hold
	// what each page held then (cut at syncedLen).
	data      []byte
	syncedLen int
	saved     map[int][]byte // page number (offset / savePage) -> the page as synced
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
		n.data, n.syncedLen, n.saved, n.modTime = nil, 0, nil, time.Now()
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
	return fsys.rename(oldname, newname)
}

// rename is Rename for a caller holding fsys.mu.
func (fsys *MemFS) rename(oldname, newname string) error {
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

// ReuseForWrite renames oldname to newname and opens it for writing over
// from its start: see FS.ReuseForWrite.
func (fsys *MemFS) ReuseForWrite(oldname, newname string) (File, error) {
	fsys.mu.Lock()
	defer fsys.mu.Unlock()
	n, err := fsys.lookup(oldname)
	if err != nil {
		return nil, err
	}
	if n.dir {
		return nil, &fs.PathError{Op: "reuse", Path: oldname, Err: syscall.EISDIR}
	}
	if err := fsys.rename(oldname, newname); err != nil {
		return nil, err
	}
	n.modTime = time.Now()
	return &memFile{fs: fsys, node: n, name: newname, writable: true, reused: true}, nil
}

// Link makes newname a second name of oldname's file, as link(2) does:
// writes through either name change the one file, and a crash clone keeps
// the file once, under each name whose directory was synced since.
func (fsys *MemFS) Link(oldname, newname string) error {
	fsys.mu.Lock()
	defer fsys.mu.Unlock()
	n, err := fsys.lookup(oldname)
	if err != nil {
		return err
	}
	if n.dir {
		return &fs.PathError{Op: "link", Path: oldname, Err: syscall.EPERM}
	}
	dir, base, err := fsys.parent(newname)
	if err != nil {
		return err
	}
	if _, ok := dir.children[base]; ok {
		return &fs.PathError{Op: "link", Path: newname, Err: fs.ErrExist}
	}
	dir.children[base] = n
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
		return nil, &lockedError{name}
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

// DefaultCrashPageSize is the page size CrashOptions.PageLoss uses when
// CrashOptions.PageSize is zero: 4096 bytes, the page of the page cache and
// the block of common filesystems on common hardware, and so the unit in
// which dirty data reaches the disk.
const DefaultCrashPageSize = 4096

// CrashOptions shape a simulated power loss. The zero value keeps exactly
// what was synced.
type CrashOptions struct {
	// Rand, if set, lets some unsynced bytes survive, drawn from Rand: by
	// default a torn tail (each file keeps a random prefix, possibly empty,
	// possibly all, of its unsynced bytes, as when the disk wrote part of
	// what the cache held, in order); with PageLoss, pages lost in any
	// order. Nil (the default) keeps only what was synced, and the other
	// fields have no effect.
	Rand *rand.Rand

	// PageLoss, with Rand, models a disk that writes dirty pages back in any
	// order, as when the power fails during an fsync or after the kernel
	// has written some pages early: each file keeps a random length between
	// its synced length and its full length (the size the metadata reached),
	// and each page holding unsynced bytes (PageSize bytes aligned to file
	// offsets; a page cut by the synced length or the kept length counts as
	// a page) independently either holds the bytes written or is lost: it
	// reads as it was last synced, and as zeros beyond the synced length. So
	// a log can end in zeros followed by valid records, and a file written
	// over can hold old and new pages in any mix. The synced bytes no write
	// has touched since are never lost. False (the default) tears tails
	// instead.
	//
	// A lost appended page reads as zeros, not as stale bytes, because that
	// is what appends get: they land in newly allocated blocks, and today's
	// filesystems (ext4 and XFS with their unwritten extents, copy-on-write
	// ones such as btrfs) read a block never written as zeros, as they read
	// a hole. Stale contents of a reused block would be the filesystem
	// leaking another file's data; a checksum rejects them as it does any
	// torn record, while zeros are the case a reader can mistake for padding
	// or a clean end of the log. A page written over in place is different:
	// its old contents are the file's own, and a lost write leaves them.
	PageLoss bool

	// PageSize is the unit of PageLoss, in bytes. Zero or less (the default)
	// means DefaultCrashPageSize. A test with small files can set it lower so
	// that a short unsynced tail spans many pages.
	PageSize int
}

// crashFile returns what a power loss leaves of a file. The result does
// not alias the file's bytes.
func (o CrashOptions) crashFile(n *memNode) []byte {
	synced := n.syncedBytes()
	if o.Rand == nil {
		return synced
	}
	// Bytes before first are as synced: nothing has written over them.
	first := len(synced)
	for page := range n.saved {
		first = min(first, page*savePage)
	}
	if !o.PageLoss {
		// A torn tail: the writes since the sync reached the disk in order
		// of offset, up to cut. A cut of the file is never kept.
		cut := first
		if end := max(len(n.data), len(synced)); end > first {
			cut += o.Rand.IntN(end - first + 1)
		}
		kept := min(cut, len(n.data))
		out := append(synced, make([]byte, max(kept-len(synced), 0))...)
		copy(out, n.data[:kept])
		return out
	}
	size := len(synced)
	if len(n.data) > size {
		size += o.Rand.IntN(len(n.data) - size + 1)
	}
	out := make([]byte, size)
	copy(out, synced)
	copy(out, n.data[:min(size, len(n.data))])
	page := o.PageSize
	if page <= 0 {
		page = DefaultCrashPageSize
	}
	// Pages are aligned to file offsets, so the first page drawn may begin
	// among bytes no write touched: those read the same kept or lost.
	for start := first - first%page; start < size; start += page {
		if o.Rand.IntN(2) == 0 {
			end := min(start+page, size)
			mid := min(max(start, len(synced)), end) // synced bytes before it, zeros after
			if start < mid {
				copy(out[start:mid], synced[start:mid])
			}
			clear(out[mid:end])
		}
	}
	return out
}

// CrashClone returns a new filesystem holding what a power loss at this
// instant would leave: the directory entries as of each directory's last
// sync, and each file's synced bytes, plus, with opts.Rand, part of the
// rest (a torn tail, or with opts.PageLoss pages lost in any order; see
// CrashOptions). Every byte of the clone counts as synced. Locks are not
// carried over. The original is unchanged and can go on being used.
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
		data := opts.crashFile(n)
		c := &memNode{data: data, syncedLen: len(data), modTime: n.modTime}
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

// savePage is the unit in which a file's synced bytes are saved before a
// write or a cut changes them.
const savePage = 4096

// save keeps, for a later power loss, the synced bytes of the pages that
// hold [from, to), unless already kept. The caller holds the MemFS's mu.
func (n *memNode) save(from, to int) {
	to = min(to, n.syncedLen)
	if from >= to {
		return
	}
	for page := from / savePage; page*savePage < to; page++ {
		if _, ok := n.saved[page]; ok {
			continue
		}
		if n.saved == nil {
			n.saved = map[int][]byte{}
		}
		start := page * savePage
		n.saved[page] = slices.Clone(n.data[start:min(start+savePage, n.syncedLen)])
	}
}

// write writes p at offset off.
func (n *memNode) write(off int, p []byte) {
	n.save(off, off+len(p))
	if off == len(n.data) {
		n.data = append(n.data, p...)
		return
	}
	if grow := off + len(p) - len(n.data); grow > 0 {
		n.data = append(n.data, make([]byte, grow)...)
	}
	copy(n.data[off:], p)
}

// truncate cuts the file to size bytes, if it is longer.
func (n *memNode) truncate(size int) {
	if size < len(n.data) {
		n.save(size, len(n.data))
		n.data = n.data[:size]
	}
}

func (n *memNode) sync() {
	n.syncedLen, n.saved = len(n.data), nil
}

// syncedBytes returns a copy of the file's bytes as of its last Sync.
func (n *memNode) syncedBytes() []byte {
	b := make([]byte, n.syncedLen)
	copy(b, n.data)
	for page, old := range n.saved {
		copy(b[page*savePage:], old)
	}
	return b
}

// memFile is an open file of a MemFS.
type memFile struct {
	fs       *MemFS
	node     *memNode
	name     string
	writable bool
	// reused: opened by ReuseForWrite, so Stat reports written and Close
	// cuts the file to it.
	reused  bool
	written int
	pos     int
	closed  bool
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

// Write writes p at the file's offset.
func (f *memFile) Write(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return 0, f.closedError("write")
	}
	if !f.writable {
		return 0, &fs.PathError{Op: "write", Path: f.name, Err: fs.ErrPermission}
	}
	f.node.write(f.pos, p)
	f.pos += len(p)
	f.written = max(f.written, f.pos)
	f.node.modTime = time.Now()
	return len(p), nil
}

func (f *memFile) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return f.closedError("sync")
	}
	f.node.sync()
	return nil
}

func (f *memFile) Stat() (fs.FileInfo, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return nil, f.closedError("stat")
	}
	size := len(f.node.data)
	if f.reused {
		size = f.written
	}
	return memInfo{name: filepath.Base(f.name), size: int64(size), mod: f.node.modTime}, nil
}

func (f *memFile) Name() string { return f.name }

func (f *memFile) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return f.closedError("close")
	}
	f.closed = true
	if f.reused {
		f.node.truncate(f.written)
	}
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
