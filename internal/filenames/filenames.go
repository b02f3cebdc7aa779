// Package filenames names the files of a database directory and tells
// them apart:
//
//	LOCK                 held by the open database
//	CURRENT              names the live manifest; replaced atomically
//	MANIFEST-000007      the log of version edits
//	000009.log           write-ahead logs, one per memstore
//	000010.sst           tables
//	000011.blob          blob files: values the tables name by handle
//	*.tmp                files being written, renamed into place when whole
//
// Numbers come from one counter, recorded in the manifest, so every file
// name is used once. A log's file may be an obsolete log's, renamed for
// reuse: the name is new, the bytes behind its records old.
package filenames

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// Kind is what a directory entry is, by its name.
type Kind int

// The kinds of file a database directory holds.
const (
	Unknown Kind = iota
	Lock
	Current
	Manifest
	Log
	Table
	Temp
	Blob
)

// The names of the lock file and of CURRENT.
const (
	LockName    = "LOCK"
	CurrentName = "CURRENT"
)

// LogPath is the path of log num in dir.
func LogPath(dir string, num uint64) string {
	return filepath.Join(dir, fmt.Sprintf("%06d.log", num))
}

// TablePath is the path of table num in dir.
func TablePath(dir string, num uint64) string {
	return filepath.Join(dir, fmt.Sprintf("%06d.sst", num))
}

// BlobPath is the path of blob file num in dir.
func BlobPath(dir string, num uint64) string {
	return filepath.Join(dir, fmt.Sprintf("%06d.blob", num))
}

// ManifestPath is the path of manifest num in dir.
func ManifestPath(dir string, num uint64) string {
	return filepath.Join(dir, fmt.Sprintf("MANIFEST-%06d", num))
}

// Parse tells what a directory entry is, and its number.
func Parse(name string) (Kind, uint64) {
	switch {
	case name == LockName:
		return Lock, 0
	case name == CurrentName:
		return Current, 0
	case strings.HasSuffix(name, ".tmp"):
		return Temp, 0
	case strings.HasPrefix(name, "MANIFEST-"):
		if n, err := strconv.ParseUint(name[len("MANIFEST-"):], 10, 64); err == nil {
			return Manifest, n
		}
	case strings.HasSuffix(name, ".log"):
		if n, err := strconv.ParseUint(strings.TrimSuffix(name, ".log"), 10, 64); err == nil {
			return Log, n
		}
	case strings.HasSuffix(name, ".sst"):
		if n, err := strconv.ParseUint(strings.TrimSuffix(name, ".sst"), 10, 64); err == nil {
			return Table, n
		}
	case strings.HasSuffix(name, ".blob"):
		if n, err := strconv.ParseUint(strings.TrimSuffix(name, ".blob"), 10, 64); err == nil {
			return Blob, n
		}
	}
	return Unknown, 0
}
