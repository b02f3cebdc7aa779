//go:build unix && !aix && (!solaris || illumos)

package vfs

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// A process forked while the lock is held shares its open file
// description until it execs; Close releases the lock all the same, so
// that the next Open does not fail with ErrLocked.
func TestLockReleasedDespiteForkedCopy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "LOCK")
	lock, err := Default.Lock(path)
	require.NoError(t, err)
	// What a forked child holds: another descriptor of the same open
	// file description.
	dup, err := syscall.Dup(int(lock.(flockedFile).f.Fd()))
	require.NoError(t, err)
	defer syscall.Close(dup)
	require.NoError(t, lock.Close())
	again, err := Default.Lock(path)
	require.NoError(t, err, "the lock outlived its Close")
	require.NoError(t, again.Close())
}
