//go:build !linux

package main

import "os"

// fdatasync is fsync where fdatasync is not available.
func fdatasync(f *os.File) error { return f.Sync() }
