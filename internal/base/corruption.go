package base

import (
	"fmt"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/recordio"
)

// ErrCorruption and CorruptionError are recordio's, the lowest layer that
// reads bytes from disk: every layer above reports damage with them, so
// that one errors.Is matches damage wherever it was found.
var ErrCorruption = recordio.ErrCorruption

// CorruptionError reports damaged bytes: see recordio.CorruptionError.
type CorruptionError = recordio.CorruptionError

// Corruptf returns a *CorruptionError for the file at path and offset off.
// An error among args enters the detail without its package's name: the
// message names one, that of kind.
func Corruptf(path string, off int64, kind error, format string, args ...any) *CorruptionError {
	for i, a := range args {
		if err, ok := a.(error); ok && err != nil {
			args[i], _ = errs.Unnamed(err.Error())
		}
	}
	return &CorruptionError{Path: path, Offset: off, Kind: kind, Detail: fmt.Sprintf(format, args...)}
}
