//go:build !linux

package vfs

import (
	"errors"
	"fmt"
)

// CreateMapped is not supported here: see MappedCreator.
func (osFS) CreateMapped(name string, chunk int64) (File, error) {
	return nil, fmt.Errorf("vfs: create mapped %s: %w", name, errors.ErrUnsupported)
}
