package simpledb

import (
	"errors"
	"io/fs"
	"syscall"

	"github.com/stratadb/strata/internal/errs"
)

// failureState is the database's failure: the first failure of its write
// path, which refuses writes until Resume or a reopen clears it. It is
// guarded by DB.mu; DB.failed mirrors it for the write path, which reads
// it without the lock.
type failureState struct {
	cause error
	// recoverable: the filesystem caused err, and Resume may clear it;
	// autoResuming: a goroutine retries Resume (out of space).
	recoverable  bool
	autoResuming bool
}

// set records err as the failure, unless one is recorded already, and
// reports whether it did.
func (f *failureState) set(err error) bool {
	if f.cause != nil {
		return false
	}
	f.replace(err)
	return true
}

// replace records err as the failure in place of the one recorded: a
// Resume that failed, whose cause is the one a caller needs to see.
func (f *failureState) replace(err error) {
	f.cause = errs.Errorf("%w: %w", ErrBackground, err)
	f.recoverable = recoverable(err)
}

// clear forgets the failure: Resume recovered from it.
func (f *failureState) clear() { f.cause, f.recoverable = nil, false }

// err returns the failure, matching ErrBackground; nil if none.
func (f *failureState) err() error { return f.cause }

// resumable returns the failure, and whether Resume may clear it.
func (f *failureState) resumable() (error, bool) { return f.cause, f.recoverable }

// startAutoResume reports whether a goroutine should start retrying
// Resume for a failure out of space: none does yet.
func (f *failureState) startAutoResume() bool {
	if f.autoResuming || !f.recoverable || !outOfSpace(f.cause) {
		return false
	}
	f.autoResuming = true
	return true
}

// autoResumeEnded records that the goroutine retrying Resume stopped.
func (f *failureState) autoResumeEnded() { f.autoResuming = false }

// recoverable reports whether a failure came from the filesystem, and so
// may pass: an I/O error, a full disk. Damage never passes.
func recoverable(err error) bool {
	if errors.Is(err, ErrCorruption) {
		return false
	}
	var errno syscall.Errno
	var pe *fs.PathError
	return errors.As(err, &errno) || errors.As(err, &pe)
}

// outOfSpace reports whether a failure is a full disk or quota, which the
// database waits out by itself.
func outOfSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}
