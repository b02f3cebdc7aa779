package vfs

import (
	"errors"
	"io"
	"path/filepath"
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
		if m, ok := ro.(MappedFile); ok {
			require.True(t, useMmap)
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
