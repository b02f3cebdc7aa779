//go:build !linux

package vfs

import (
	"errors"

	"github.com/stratadb/strata/internal/errs"
)

// CreateMapped is not supported here: see MappedCreator.
func (osFS) CreateMapped(name string, opts MappedOptions) (File, error) {
	return nil, errs.Errorf("vfs: mapped %s: %w", name, errors.ErrUnsupported)
}

// ReuseMapped is not supported here: see MappedCreator.
func (osFS) ReuseMapped(oldname, newname string, opts MappedOptions) (File, error) {
	return nil, errs.Errorf("vfs: mapped %s: %w", newname, errors.ErrUnsupported)
}
