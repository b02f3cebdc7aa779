//go:build !unix

package vfs

const mmapSupported = false

func mapFile(name string) (MappedFile, error) {
	panic("vfs: mmap is not supported on this platform")
}

func (m *mapping) Close() error {
	_, err := m.markClosed()
	return err
}
