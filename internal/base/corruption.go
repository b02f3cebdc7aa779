package base

import (
	"fmt"

	"github.com/stratadb/strata/recordio"
)

// ErrCorruption and CorruptionError are recordio's, the lowest layer that
// reads bytes from disk: every layer above reports damage with them, so
// that one errors.Is matches damage wherever it was found.
var ErrCorruption = recordio.ErrCorruption

// CorruptionError reports damaged bytes: see recordio.CorruptionError.
type CorruptionError = recordio.CorruptionError

// Corruptf returns a *CorruptionError for the file at path and offset off.
func Corruptf(path string, off int64, kind error, format string, args ...any) *CorruptionError {
	return &CorruptionError{Path: path, Offset: off, Kind: kind, Detail: fmt.Sprintf(format, args...)}
}
