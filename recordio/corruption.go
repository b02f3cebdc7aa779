package recordio

import (
	"errors"
	"fmt"
)

// ErrCorruption is matched (with errors.Is) by every error that reports
// damaged or foreign bytes on disk, in this package and in every layer
// above it, which report damage with the same value. Such errors are
// *CorruptionError values naming the file, the offset and one of the
// specific kinds below.
var ErrCorruption = errors.New("corruption")

// CorruptionError reports damaged bytes: which file, at which offset, and
// which kind of damage. Kind is a sentinel of the package that found it
// (for example ErrHeaderChecksum), so callers can match either the
// specific kind or ErrCorruption.
type CorruptionError struct {
	// Path names the file; it may be empty for an anonymous stream.
	Path string
	// Offset is the byte offset in the file where the damaged structure starts.
	Offset int64
	// Kind is the sentinel describing the damage.
	Kind error
	// Detail adds specifics, such as the expected and the found checksum.
	Detail string
}

// Error reads like "file.rio: offset 42: header checksum mismatch: want 1a, got 2b".
func (e *CorruptionError) Error() string {
	path := e.Path
	if path == "" {
		path = "<stream>"
	}
	msg := fmt.Sprintf("%s: offset %d: %v", path, e.Offset, e.Kind)
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// Unwrap exposes both the specific kind and ErrCorruption to errors.Is.
func (e *CorruptionError) Unwrap() []error {
	return []error{e.Kind, ErrCorruption}
}
