package vfs

import (
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// Both filesystems behave alike for everything but durability.
func TestFileLifecycle(t *testing.T) {
	t.Run("os", func(t *testing.T) { testFileLifecycle(t, OrDefault(nil), t.TempDir()) })
	t.Run("mem", func(t *testing.T) { testFileLifecycle(t, NewMem(), "/tmp/test") })
}

func testFileLifecycle(t *testing.T, fsys FS, dir string) {
	require.NoError(t, fsys.MkdirAll(filepath.Join(dir, "a", "b"), 0o755))
	name := filepath.Join(dir, "a", "b", "f")
	f, err := fsys.Create(name)
	require.NoError(t, err)
	_, err = f.Write([]byte("hello world"))
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
	require.NoError(t, fsys.SyncDir(filepath.Dir(name)))

	info, err := fsys.Stat(name)
	require.NoError(t, err)
	require.Equal(t, int64(11), info.Size())

	renamed := filepath.Join(dir, "a", "b", "g")
	require.NoError(t, fsys.Rename(name, renamed))
	names, err := fsys.List(filepath.Dir(name))
	require.NoError(t, err)
	require.Equal(t, []string{"g"}, names)

	r, err := fsys.Open(renamed)
	require.NoError(t, err)
	buf := make([]byte, 5)
	_, err = r.ReadAt(buf, 6)
	require.NoError(t, err)
	require.Equal(t, "world", string(buf))
	require.NoError(t, r.Close())

	require.NoError(t, fsys.Remove(renamed))
	_, err = fsys.Stat(renamed)
	require.Error(t, err)
}

// A second Lock of the same file fails, whether or not it spells the name
// the same way.
// Both filesystems fail with errors that the same errors.Is checks match.
func TestErrorsMatchAcrossFilesystems(t *testing.T) {
	t.Run("os", func(t *testing.T) {
		if runtime.GOOS == "windows" {
			t.Skip("Windows reports its own errnos for these, not ENOTDIR and ENOTEMPTY")
		}
		testErrorsMatch(t, Default, t.TempDir())
	})
	t.Run("mem", func(t *testing.T) { testErrorsMatch(t, NewMem(), "/tmp/test") })
}

func testErrorsMatch(t *testing.T, fsys FS, dir string) {
	require.NoError(t, fsys.MkdirAll(filepath.Join(dir, "d"), 0o755))
	file := filepath.Join(dir, "d", "f")
	f, err := fsys.Create(file)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	under := filepath.Join(file, "x") // a path through a file
	_, createErr := fsys.Create(under)
	_, listErr := fsys.List(file)
	_, statErr := fsys.Stat(under)
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"remove a non-empty directory", fsys.Remove(filepath.Join(dir, "d")), syscall.ENOTEMPTY},
		{"create under a file", createErr, syscall.ENOTDIR},
		{"list a file", listErr, syscall.ENOTDIR},
		{"mkdir under a file", fsys.MkdirAll(under, 0o755), syscall.ENOTDIR},
		{"stat under a file", statErr, syscall.ENOTDIR},
	} {
		require.ErrorIs(t, tc.err, tc.want, tc.name)
		var pathErr *fs.PathError
		require.ErrorAs(t, tc.err, &pathErr, tc.name)
	}

	// Every operation on a closed file fails with fs.ErrClosed.
	w, err := fsys.Create(file)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	_, err = w.Write([]byte("x"))
	require.ErrorIs(t, err, fs.ErrClosed, "write")
	require.ErrorIs(t, w.Sync(), fs.ErrClosed, "sync")
	r, err := fsys.Open(file)
	require.NoError(t, err)
	require.NoError(t, r.Close())
	_, err = r.Read(make([]byte, 1))
	require.ErrorIs(t, err, fs.ErrClosed, "read")
	_, err = r.ReadAt(make([]byte, 1), 0)
	require.ErrorIs(t, err, fs.ErrClosed, "readat")
	_, err = r.Stat()
	require.ErrorIs(t, err, fs.ErrClosed, "stat")
	require.ErrorIs(t, r.Close(), fs.ErrClosed, "close")
}

func TestLockIsExclusiveWithinProcess(t *testing.T) {
	mem := NewMem()
	require.NoError(t, mem.MkdirAll("/d", 0o755))
	dir := t.TempDir()
	sep := string(filepath.Separator)
	for _, tc := range []struct {
		fsys          FS
		name, aliased string
	}{
		{Default, filepath.Join(dir, "LOCK"), dir + sep + "." + sep + "LOCK"},
		{mem, "/d/LOCK", "/d/./LOCK"},
	} {
		first, err := tc.fsys.Lock(tc.name)
		require.NoError(t, err)

		_, err = tc.fsys.Lock(tc.name)
		require.ErrorIs(t, err, ErrLocked)
		_, err = tc.fsys.Lock(tc.aliased)
		require.ErrorIs(t, err, ErrLocked)

		require.NoError(t, first.Close())
		again, err := tc.fsys.Lock(tc.name)
		require.NoError(t, err)
		require.NoError(t, again.Close())
	}
}

// A held lock's error names the file, says "vfs:" once, and matches
// ErrLocked.
func TestLockHeldErrorNamesTheFileOnce(t *testing.T) {
	mem := NewMem()
	require.NoError(t, mem.MkdirAll("/d", 0o755))
	for _, tc := range []struct {
		fsys FS
		name string
	}{
		{Default, filepath.Join(t.TempDir(), "LOCK")},
		{mem, "/d/LOCK"},
	} {
		first, err := tc.fsys.Lock(tc.name)
		require.NoError(t, err)
		_, err = tc.fsys.Lock(tc.name)
		require.ErrorIs(t, err, ErrLocked)
		require.EqualError(t, err, "vfs: lock "+tc.name+" held by another process or Open")
		require.NoError(t, first.Close())
	}
}

func TestOpenReadOnly(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f")
	f, err := Default.Create(name)
	require.NoError(t, err)
	_, err = f.Write([]byte("0123456789"))
	require.NoError(t, err)
	require.NoError(t, f.Close())

	for _, useMmap := range []bool{false, true} {
		ro, err := OpenReadOnly(nil, name, useMmap)
		require.NoError(t, err)
		require.Equal(t, int64(10), ro.Size())
		// The operating system's filesystem maps the file exactly when asked
		// to and the platform can.
		m, ok := ro.(MappedFile)
		require.Equal(t, useMmap && mmapSupported, ok, "useMmap=%v: mapped", useMmap)
		if ok {
			require.Equal(t, "0123456789", string(m.Bytes()))
		}
		buf := make([]byte, 4)
		_, err = ro.ReadAt(buf, 3)
		require.NoError(t, err)
		require.Equal(t, "3456", string(buf))
		n, err := ro.ReadAt(buf, 8)
		require.True(t, errors.Is(err, io.EOF), "useMmap=%v: %v", useMmap, err)
		require.Equal(t, 2, n)
		require.NoError(t, ro.Close())
	}
}

func TestOpenReadOnlyEmptyFile(t *testing.T) {
	name := filepath.Join(t.TempDir(), "empty")
	f, err := Default.Create(name)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	for _, useMmap := range []bool{false, true} {
		ro, err := OpenReadOnly(nil, name, useMmap)
		require.NoError(t, err)
		require.Zero(t, ro.Size())
		_, err = ro.ReadAt(make([]byte, 1), 0)
		require.ErrorIs(t, err, io.EOF)
		require.NoError(t, ro.Close())
	}
}

// Every kind of ReadOnlyFile (mapped, read through os, read through a
// MemFS) rejects a negative offset with fs.ErrInvalid and, once closed,
// fails with fs.ErrClosed instead of reporting the end of the file.
func TestReadOnlyFileErrors(t *testing.T) {
	mem := NewMem()
	require.NoError(t, mem.MkdirAll("/d", 0o755))
	for _, tc := range []struct {
		name    string
		fsys    FS
		path    string
		useMmap bool
	}{
		{"mmap", Default, filepath.Join(t.TempDir(), "f"), true},
		{"os", Default, filepath.Join(t.TempDir(), "f"), false},
		{"mem", mem, "/d/f", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := tc.fsys.Create(tc.path)
			require.NoError(t, err)
			_, err = f.Write([]byte("0123456789"))
			require.NoError(t, err)
			require.NoError(t, f.Close())

			ro, err := OpenReadOnly(tc.fsys, tc.path, tc.useMmap)
			require.NoError(t, err)
			_, err = ro.ReadAt(make([]byte, 1), -1)
			require.ErrorIs(t, err, fs.ErrInvalid)
			require.NoError(t, ro.Close())
			n, err := ro.ReadAt(make([]byte, 1), 0)
			require.ErrorIs(t, err, fs.ErrClosed)
			require.Zero(t, n)
			require.ErrorIs(t, ro.Close(), fs.ErrClosed)
		})
	}
}

// A reused file is renamed, written over from its start, reports the bytes
// written, and is cut to them on Close, on both filesystems.
func TestReuseForWrite(t *testing.T) {
	t.Run("os", func(t *testing.T) { testReuseForWrite(t, OrDefault(nil), t.TempDir()) })
	t.Run("mem", func(t *testing.T) { testReuseForWrite(t, NewMem(), "/d") })
}

func testReuseForWrite(t *testing.T, fsys FS, dir string) {
	require.NoError(t, fsys.MkdirAll(dir, 0o755))
	old, name := filepath.Join(dir, "old"), filepath.Join(dir, "new")
	f, err := fsys.Create(old)
	require.NoError(t, err)
	_, err = f.Write([]byte("old bytes, many of them"))
	require.NoError(t, err)
	require.NoError(t, f.Close())

	f, err = fsys.ReuseForWrite(old, name)
	require.NoError(t, err)
	require.Equal(t, name, f.Name())
	_, err = fsys.Stat(old)
	require.ErrorIs(t, err, fs.ErrNotExist, "renamed")
	_, err = f.Write([]byte("new"))
	require.NoError(t, err)
	info, err := f.Stat()
	require.NoError(t, err)
	require.Equal(t, int64(3), info.Size(), "the bytes written")
	got, _ := readFile(t, fsys, name)
	require.Equal(t, "new bytes, many of them", got, "written over in place")
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
	got, _ = readFile(t, fsys, name)
	require.Equal(t, "new", got, "Close cuts the file to them")

	_, err = fsys.ReuseForWrite(filepath.Join(dir, "missing"), filepath.Join(dir, "x"))
	require.ErrorIs(t, err, fs.ErrNotExist)
	_, err = fsys.Stat(filepath.Join(dir, "x"))
	require.ErrorIs(t, err, fs.ErrNotExist, "nothing created")
}

func TestLink(t *testing.T) {
	t.Run("os", func(t *testing.T) { testLink(t, OrDefault(nil), t.TempDir()) })
	t.Run("mem", func(t *testing.T) { testLink(t, NewMem(), "/d") })
}

func testLink(t *testing.T, fsys FS, dir string) {
	require.NoError(t, fsys.MkdirAll(dir, 0o755))
	name, link := filepath.Join(dir, "f"), filepath.Join(dir, "g")
	f, err := fsys.Create(name)
	require.NoError(t, err)
	_, err = f.Write([]byte("data"))
	require.NoError(t, err)
	require.NoError(t, f.Close())

	require.NoError(t, fsys.Link(name, link))
	require.ErrorIs(t, fsys.Link(name, link), fs.ErrExist, "the new name exists")
	require.ErrorIs(t, fsys.Link(filepath.Join(dir, "missing"), filepath.Join(dir, "h")), fs.ErrNotExist)
	require.NoError(t, fsys.Remove(name))
	got, ok := readFile(t, fsys, link)
	require.True(t, ok, "the link outlives the first name")
	require.Equal(t, "data", got)
}

// failLinkFS is a filesystem whose Link fails as across devices.
type failLinkFS struct{ FS }

func (failLinkFS) Link(oldname, newname string) error {
	return &fs.PathError{Op: "link", Path: newname, Err: syscall.EXDEV}
}

func TestLinkOrCopy(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fsys   FS
		linked bool
	}{
		{"links", NewMem(), true},
		{"copies where links fail", failLinkFS{NewMem()}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := tc.fsys
			require.NoError(t, fsys.MkdirAll("/d", 0o755))
			f, err := fsys.Create("/d/f")
			require.NoError(t, err)
			_, err = f.Write([]byte("data"))
			require.NoError(t, err)
			require.NoError(t, f.Close())

			linked, err := LinkOrCopy(fsys, "/d/f", "/d/g")
			require.NoError(t, err)
			require.Equal(t, tc.linked, linked)
			got, _ := readFile(t, fsys, "/d/g")
			require.Equal(t, "data", got)

			_, err = LinkOrCopy(fsys, "/d/f", "/d/g")
			require.ErrorIs(t, err, fs.ErrExist, "never over an existing file")
			_, err = LinkOrCopy(fsys, "/d/missing", "/d/h")
			require.ErrorIs(t, err, fs.ErrNotExist)
			_, err = fsys.Stat("/d/h")
			require.ErrorIs(t, err, fs.ErrNotExist, "nothing left behind")
		})
	}
}
