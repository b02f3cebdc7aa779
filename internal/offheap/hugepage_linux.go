package offheap

import "syscall"

// adviseHuge asks the kernel to back b with transparent huge pages. A
// kernel without them refuses the advice, which costs nothing: b stays in
// ordinary pages.
func adviseHuge(b []byte) { _ = syscall.Madvise(b, syscall.MADV_HUGEPAGE) }
