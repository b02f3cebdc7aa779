//go:build unix && !linux

package offheap

// adviseHuge does nothing where the system has no such advice.
func adviseHuge([]byte) {}
