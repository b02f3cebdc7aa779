package recordio

import (
	"errors"
	"fmt"

	"github.com/stratadb/strata/internal/errs"
)

// ErrCorruption is matched (with errors.Is) by every error that reports
// damaged or foreign bytes on disk, in this package and in every layer
// above it, which report damage with the same value. Such errors are
// *CorruptionError values naming the file, the offset and one of the
// specific kinds below.
var ErrCorruption = errors.New("strata: corruption")

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

// Error reads like "recordio: file.rio: offset 42: record header checksum
// mismatch: want 1a, got 2b": the package that names the kind names the
// message, once, at its start.
func (e *CorruptionError) Error() string {
	path := e.Path
	if path == "" {
		path = "<stream>"
	}
	kind, named := errs.Unnamed(e.Kind.Error())
	msg := fmt.Sprintf("%s: offset %d: %s", path, e.Offset, kind)
	if named {
		msg = e.Kind.Error()[:len(e.Kind.Error())-len(kind)] + msg
	}
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// Unwrap exposes both the specific kind and ErrCorruption to errors.Is.
func (e *CorruptionError) Unwrap() []error {
	return []error{e.Kind, ErrCorruption}
}
