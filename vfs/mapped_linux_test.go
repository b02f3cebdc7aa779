//go:build linux

package vfs

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A mapped file appends across chunks, shows what it wrote to other
// readers at once (it is in the page cache, as after write(2)), reports
// its logical length, and is cut to it on Close.
func TestCreateMapped(t *testing.T) {
	page := int64(os.Getpagesize())
	name := filepath.Join(t.TempDir(), "log")
	f, err := Default.(MappedCreator).CreateMapped(name, page)
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

func TestCreateMappedRejectsBadChunk(t *testing.T) {
	_, err := Default.(MappedCreator).CreateMapped(filepath.Join(t.TempDir(), "log"), 1000)
	require.Error(t, err)
}
