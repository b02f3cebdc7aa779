package simpledb

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// A database directory holds:
//
//	LOCK                 held by the open database
//	CURRENT              names the live manifest; replaced atomically
//	MANIFEST-000007      the log of version edits
//	000009.log           write-ahead logs, one per memstore
//	000010.sst           tables
//
// Numbers come from one counter, recorded in the manifest, so every file
// name is used once. A log's file may be an obsolete log's, renamed for
// reuse (see log.go): the name is new, the bytes behind its records old.
type fileKind int

const (
	fileUnknown fileKind = iota
	fileLock
	fileCurrent
	fileManifest
	fileLog
	fileTable
	fileTemp
	// fileEmptyLog is a log without records: recovery's word for it, never
	// parseFileName's.
	fileEmptyLog
)

const (
	lockName    = "LOCK"
	currentName = "CURRENT"
)

func logName(dir string, num uint64) string {
	return filepath.Join(dir, fmt.Sprintf("%06d.log", num))
}

func tableName(dir string, num uint64) string {
	return filepath.Join(dir, fmt.Sprintf("%06d.sst", num))
}

func manifestName(dir string, num uint64) string {
	return filepath.Join(dir, fmt.Sprintf("MANIFEST-%06d", num))
}

// parseFileName classifies a directory entry and extracts its number.
func parseFileName(name string) (fileKind, uint64) {
	switch {
	case name == lockName:
		return fileLock, 0
	case name == currentName:
		return fileCurrent, 0
	case strings.HasSuffix(name, ".tmp"):
		return fileTemp, 0
	case strings.HasPrefix(name, "MANIFEST-"):
		if n, err := strconv.ParseUint(name[len("MANIFEST-"):], 10, 64); err == nil {
			return fileManifest, n
		}
	case strings.HasSuffix(name, ".log"):
		if n, err := strconv.ParseUint(strings.TrimSuffix(name, ".log"), 10, 64); err == nil {
			return fileLog, n
		}
	case strings.HasSuffix(name, ".sst"):
		if n, err := strconv.ParseUint(strings.TrimSuffix(name, ".sst"), 10, 64); err == nil {
			return fileTable, n
		}
	}
	return fileUnknown, 0
}
