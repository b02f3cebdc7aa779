package vfs

import "io"

// StartWriteback starts writing back the dirty pages of n bytes of f at
// off, without waiting for them: a hint that spreads a large file's
// writeback over its writing, so that its own fsync, and the fsyncs of
// other files that share the filesystem's journal, find little left to
// write. Only operating-system files, mapped ones included (those with an
// Fd method), take it,
// and only where sync_file_range exists; elsewhere it does nothing. A
// failure shows in the file's next fsync.
func StartWriteback(f io.Writer, off, n int64) {
	if fd, ok := f.(interface{ Fd() uintptr }); ok && n > 0 {
		startWriteback(int(fd.Fd()), off, n)
	}
}
