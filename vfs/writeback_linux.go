//go:build linux && !arm

package vfs

import "syscall"

// syncFileRangeWrite is SYNC_FILE_RANGE_WRITE: start writing back the
// range's dirty pages, without waiting for them or for metadata.
const syncFileRangeWrite = 2

func startWriteback(fd int, off, n int64) {
	syscall.SyncFileRange(fd, off, n, syncFileRangeWrite)
}
