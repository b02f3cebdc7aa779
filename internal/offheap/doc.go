// Package offheap maps anonymous memory outside the Go heap, for the
// memstores' arenas and the block cache: memory the garbage collector
// neither scans nor counts when it paces itself, and that is returned to
// the system when unmapped rather than when a collection finds it
// unreachable. Where the system has no anonymous mappings, Map fails and
// callers fall back to the heap.
package offheap
