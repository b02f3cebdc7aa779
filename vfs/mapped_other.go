//go:build !linux

package vfs

import (
	"errors"
	"fmt"
)

// CreateMapped is not supported here: see MappedCreator.
func (osFS) CreateMapped(name string, opts MappedOptions) (File, error) {
	return nil, fmt.Errorf("vfs: mapped %s: %w", name, errors.ErrUnsupported)
}

// ReuseMapped is not supported here: see MappedCreator.
func (osFS) ReuseMapped(oldname, newname string, opts MappedOptions) (File, error) {
	return nil, fmt.Errorf("vfs: mapped %s: %w", newname, errors.ErrUnsupported)
}
