//go:build linux

package vfs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// A mapped file appends across chunks, shows what it wrote to other
// readers at once (it is in the page cache, as after write(2)), reports
// its logical length, and is cut to it on Close, whichever way its pages
// are faulted in.
func TestCreateMapped(t *testing.T) {
	for _, syncOften := range []bool{false, true} {
		t.Run(fmt.Sprintf("SyncOften=%v", syncOften), func(t *testing.T) { appendMapped(t, syncOften) })
	}
}

func appendMapped(t *testing.T, syncOften bool) {
	page := int64(os.Getpagesize())
	name := filepath.Join(t.TempDir(), "log")
	f, err := Default.(MappedCreator).CreateMapped(name, MappedOptions{Chunk: page, SyncOften: syncOften})
	require.NoError(t, err)

	var want []byte
	for i := range 50 {
		rec := bytes.Repeat([]byte{byte('a' + i%26)}, 100+i*17) // crosses chunk ends
		n, err := f.Write(rec)
		require.NoError(t, err)
		require.Equal(t, len(rec), n)
		want = append(want, rec...)
	}
	onDisk, err := os.ReadFile(name)
	require.NoError(t, err)
	require.Zero(t, int64(len(onDisk))%page, "the space is allocated a chunk at a time")
	require.Equal(t, want, onDisk[:len(want)], "written bytes are visible to another reader before any sync")
	require.Equal(t, make([]byte, len(onDisk)-len(want)), onDisk[len(want):], "the rest reads as zeros")

	info, err := f.Stat()
	require.NoError(t, err)
	require.Equal(t, int64(len(want)), info.Size())
	got := make([]byte, 300)
	n, err := f.ReadAt(got, int64(len(want))-100)
	require.ErrorIs(t, err, io.EOF)
	require.Equal(t, want[len(want)-100:], got[:n])

	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
	onDisk, err = os.ReadFile(name)
	require.NoError(t, err)
	require.Equal(t, want, onDisk, "Close cuts the file to what was written")
}

// A zero chunk is the default, 1 MiB: the file's space grows by it.
func TestCreateMappedDefaultChunk(t *testing.T) {
	name := filepath.Join(t.TempDir(), "log")
	f, err := Default.(MappedCreator).CreateMapped(name, MappedOptions{})
	require.NoError(t, err)
	_, err = f.Write([]byte("x"))
	require.NoError(t, err)
	info, err := os.Stat(name)
	require.NoError(t, err)
	// The chunk in use, and maybe the next, prepared ahead.
	require.True(t, info.Size() >= 1<<20 && info.Size()%(1<<20) == 0, "%d bytes allocated ahead", info.Size())
	require.NoError(t, f.Close())
}

func TestCreateMappedRejectsBadChunk(t *testing.T) {
	_, err := Default.(MappedCreator).CreateMapped(filepath.Join(t.TempDir(), "log"), MappedOptions{Chunk: 1000})
	require.Error(t, err)
}

// A reused mapped file is written over from its start, across chunks and
// past its old end, shows what it wrote at once, and is cut to it on Close.
func TestReuseMapped(t *testing.T) {
	page := int64(os.Getpagesize())
	for _, tc := range []struct {
		name       string
		oldSize    int64
		writeBytes int
	}{
		{"shorter than the old file", 3*page + 100, int(page) + 17},
		{"past the old end, mid-chunk", 3*page + 100, int(4*page) + 5},
		{"past the old end, chunk-aligned", 2 * page, int(5 * page)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			old, name := filepath.Join(dir, "old"), filepath.Join(dir, "new")
			oldData := bytes.Repeat([]byte{0xee}, int(tc.oldSize))
			require.NoError(t, os.WriteFile(old, oldData, 0o644))

			f, err := Default.(MappedCreator).ReuseMapped(old, name, MappedOptions{Chunk: page})
			require.NoError(t, err)
			require.Equal(t, name, f.Name())
			_, err = os.Stat(old)
			require.ErrorIs(t, err, fs.ErrNotExist, "renamed")
			want := bytes.Repeat([]byte("0123456789"), tc.writeBytes/10+1)[:tc.writeBytes]
			for p := want; len(p) > 0; {
				n, err := f.Write(p[:min(len(p), 333)])
				require.NoError(t, err)
				p = p[n:]
			}
			onDisk, err := os.ReadFile(name)
			require.NoError(t, err)
			require.Equal(t, want, onDisk[:len(want)], "written over, visible before any sync")
			if len(want) < len(oldData) {
				require.Equal(t, oldData[len(want):], onDisk[len(want):len(oldData)], "the old bytes after them are untouched")
			}
			info, err := f.Stat()
			require.NoError(t, err)
			require.Equal(t, int64(len(want)), info.Size())

			require.NoError(t, f.Sync())
			require.NoError(t, f.Close())
			onDisk, err = os.ReadFile(name)
			require.NoError(t, err)
			require.Equal(t, want, onDisk, "Close cuts the file to what was written")
		})
	}
}

// A reuse that cannot open the file leaves nothing renamed or created.
func TestReuseMappedMissingFile(t *testing.T) {
	dir := t.TempDir()
	_, err := Default.(MappedCreator).ReuseMapped(filepath.Join(dir, "missing"), filepath.Join(dir, "new"), MappedOptions{Chunk: int64(os.Getpagesize())})
	require.ErrorIs(t, err, fs.ErrNotExist)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries)
}

// createMapped creates a mapped file in a temporary directory, or skips
// the test where that directory's filesystem is not one logs are mapped on.
func createMapped(t *testing.T, chunk int64) (File, string) {
	t.Helper()
	return createMappedWith(t, MappedOptions{Chunk: chunk})
}

// createMappedWith is createMapped with every option.
func createMappedWith(t *testing.T, opts MappedOptions) (File, string) {
	t.Helper()
	name := filepath.Join(t.TempDir(), "log")
	f, err := Default.(MappedCreator).CreateMapped(name, opts)
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("the temporary directory cannot map logs: %v", err)
	}
	require.NoError(t, err)
	return f, name
}

// A store the filesystem refuses raises SIGBUS, which would kill the
// process: the file cut behind the mapping's back does that. Write takes
// the bytes to write(2) instead, and they land where they belong. A file
// synced often writes its first write after a sync through write(2), and
// so never stores it.
func TestMappedWriteSurvivesFault(t *testing.T) {
	page := int64(os.Getpagesize())
	for _, tt := range []struct {
		name      string
		syncOften bool
	}{
		{"stores", false},
		{"synced often", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, name := createMappedWith(t, MappedOptions{Chunk: 4 * page, SyncOften: tt.syncOften})
			defer f.Close()
			first := bytes.Repeat([]byte{'a'}, 100)
			_, err := f.Write(first)
			require.NoError(t, err)
			// Once the next chunk is prepared (its fallocate extends the
			// file), the cut puts the mapped pages past the file's end.
			m := f.(*mappedFile)
			next := <-m.ahead
			m.ahead <- next
			require.NoError(t, os.Truncate(name, 0))

			if tt.syncOften {
				require.NoError(t, f.Sync())
			}
			second := bytes.Repeat([]byte{'b'}, int(2*page)) // spans pages of the chunk
			n, err := f.Write(second)
			require.NoError(t, err)
			require.Equal(t, len(second), n)
			if tt.syncOften {
				require.Zero(t, m.faults, "the first write after a sync: write(2), nothing to fault")
				// The next, with no sync between, stores, and faults.
				_, err = f.Write(bytes.Repeat([]byte{'c'}, int(page)))
				require.NoError(t, err)
			}
			require.Positive(t, m.faults, "the store faulted and went through write(2)")

			onDisk, err := os.ReadFile(name)
			require.NoError(t, err)
			require.GreaterOrEqual(t, len(onDisk), len(first)+len(second))
			require.Equal(t, make([]byte, len(first)), onDisk[:len(first)], "what the cut took stays cut")
			require.Equal(t, second, onDisk[len(first):len(first)+len(second)])
		})
	}
}

// A closed mapped file refuses writes and syncs with fs.ErrClosed, at a
// chunk boundary too, rather than wait for a chunk never prepared or sync
// a descriptor number that may be another file's by then.
func TestMappedFileClosed(t *testing.T) {
	page := int64(os.Getpagesize())
	f, _ := createMapped(t, page)
	_, err := f.Write(make([]byte, page)) // the chunk is full: the next byte needs another
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, err = f.Write([]byte{1})
	require.ErrorIs(t, err, fs.ErrClosed)
	require.ErrorIs(t, f.Sync(), fs.ErrClosed)
	require.ErrorIs(t, f.Close(), fs.ErrClosed)
}

// A filesystem that cannot map the file (mmap fails with ENODEV: FUSE with
// direct I/O, virtiofs without a cache) is no failure of the log:
// CreateMapped says errors.ErrUnsupported, so that the caller appends with
// write(2) instead, and leaves no file behind.
func TestCreateMappedMmapRefused(t *testing.T) {
	f, _ := createMapped(t, int64(os.Getpagesize())) // skips where the directory cannot map at all
	require.NoError(t, f.Close())
	saved := mmap
	mmap = func(int, int64, int, int, int) ([]byte, error) { return nil, syscall.ENODEV }
	t.Cleanup(func() { mmap = saved })

	name := filepath.Join(t.TempDir(), "log")
	_, err := Default.(MappedCreator).CreateMapped(name, MappedOptions{Chunk: int64(os.Getpagesize())})
	require.ErrorIs(t, err, errors.ErrUnsupported)
	require.ErrorIs(t, err, syscall.ENODEV)
	_, err = os.Stat(name)
	require.ErrorIs(t, err, fs.ErrNotExist, "the file it created is removed")
}

// A chunk that could not be allocated ahead, the disk full then, is tried
// again by the write that needs it: space freed meanwhile serves, and no
// error is left behind from a moment when the write had not come yet.
func TestMappedChunkRetried(t *testing.T) {
	var full atomic.Bool
	full.Store(true)
	saved := fallocate
	fallocate = func(fd int, mode uint32, off, n int64) error {
		if off > 0 && full.Load() {
			return syscall.ENOSPC // the first chunk has room, the next none
		}
		return saved(fd, mode, off, n)
	}
	t.Cleanup(func() { fallocate = saved })

	page := int64(os.Getpagesize())
	f, name := createMapped(t, page)
	defer f.Close()
	m := f.(*mappedFile)
	next := <-m.ahead
	require.ErrorIs(t, next.err, syscall.ENOSPC, "the next chunk could not be prepared")
	m.ahead <- next

	want := bytes.Repeat([]byte{'a'}, int(page))
	_, err := f.Write(want) // fills the first chunk
	require.NoError(t, err)
	full.Store(false) // space freed
	more := bytes.Repeat([]byte{'b'}, 100)
	_, err = f.Write(more)
	require.NoError(t, err, "the write that needs the chunk prepares it again")
	want = append(want, more...)

	full.Store(true)
	require.NoError(t, f.Close())
	onDisk, err := os.ReadFile(name)
	require.NoError(t, err)
	require.Equal(t, want, onDisk)
}
