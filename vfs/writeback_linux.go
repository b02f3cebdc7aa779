//go:build linux && !arm

package vfs

import "syscall"

// syncFileRangeWrite is SYNC_FILE_RANGE_WRITE: start writing the range's
// dirty pages back, without waiting for them or for metadata.
const syncFileRangeWrite = 2

// startWriteback starts writing back the dirty pages of n bytes of fd at
// off. It is a hint: a failure shows in the next fsync, which it only
// makes shorter.
func startWriteback(fd int, off, n int64) {
	syscall.SyncFileRange(fd, off, n, syncFileRangeWrite)
}
