package simpledb

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/vfs/errorfs"
	"github.com/stretchr/testify/require"
)

// What each failure is: whether Resume may clear it, and whether the
// database waits it out by itself.
func TestFailureKinds(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		err                     error
		recoverable, outOfSpace bool
	}{
		{"EIO", syscall.EIO, true, false},
		{"ENOSPC", syscall.ENOSPC, true, true},
		{"EDQUOT", syscall.EDQUOT, true, true},
		{"wrapped ENOSPC", fmt.Errorf("flush: %w", syscall.ENOSPC), true, true},
		{"a path error", &fs.PathError{Op: "write", Path: "/db/1.log", Err: errors.New("odd")}, true, false},
		{"a path error out of space", &fs.PathError{Op: "write", Path: "/db/1.log", Err: syscall.EDQUOT}, true, true},
		{"injected ENOSPC", &errorfs.InjectedError{Op: errorfs.OpSync, Path: "/db/1.log", Err: syscall.ENOSPC}, true, true},
		{"not the filesystem's", errors.New("a broken invariant"), false, false},
		{"ErrCorruption", ErrCorruption, false, false},
		{"damage found by a read", base.Corruptf("/db/1.sst", 42, ErrCorruption, "bad block"), false, false},
		// Damage stays damage whatever else the error carries.
		{"damage that wraps an errno", fmt.Errorf("%w: %w", ErrCorruption, syscall.EIO), false, false},
		{"damage in a path error", &fs.PathError{Op: "read", Path: "/db/1.sst", Err: ErrCorruption}, false, false},
		{"damage out of space", fmt.Errorf("%w: %w", ErrCorruption, syscall.ENOSPC), false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.recoverable, recoverable(tc.err), "recoverable")
			require.Equal(t, tc.outOfSpace, outOfSpace(tc.err), "outOfSpace")

			var f failureState
			require.True(t, f.set(tc.err))
			require.ErrorIs(t, f.err(), ErrBackground)
			require.ErrorIs(t, f.err(), tc.err)
			err, ok := f.resumable()
			require.Equal(t, f.err(), err)
			require.Equal(t, tc.recoverable, ok, "resumable")
			// Only what Resume can clear and waiting can cure is retried.
			require.Equal(t, tc.recoverable && tc.outOfSpace, f.startAutoResume(), "startAutoResume")
		})
	}
}

// The first failure is the one recorded; a failed Resume replaces it, and
// a successful one clears it.
func TestFailureFirstWins(t *testing.T) {
	first, second := fmt.Errorf("log: %w", syscall.EIO), errors.New("a broken invariant")
	resumeFailed := fmt.Errorf("resume: %w", syscall.ENOSPC)
	var f failureState
	require.NoError(t, f.err())
	require.True(t, f.set(first))
	require.False(t, f.set(second), "a second failure")
	require.ErrorIs(t, f.err(), first)
	require.NotErrorIs(t, f.err(), second)
	_, ok := f.resumable()
	require.True(t, ok, "the first failure's kind, not the second's")

	f.replace(resumeFailed)
	require.ErrorIs(t, f.err(), ErrBackground)
	require.ErrorIs(t, f.err(), resumeFailed)
	require.NotErrorIs(t, f.err(), first)

	f.clear()
	require.NoError(t, f.err())
	err, ok := f.resumable()
	require.NoError(t, err)
	require.False(t, ok, "nothing to resume")
	require.True(t, f.set(second), "a failure after a clear")
	require.ErrorIs(t, f.err(), second)
	_, ok = f.resumable()
	require.False(t, ok)
}

// One goroutine at a time retries Resume: another starts only once it has
// ended, the failure still out of space.
func TestStartAutoResumeOnce(t *testing.T) {
	var f failureState
	require.False(t, f.startAutoResume(), "no failure")
	f.set(syscall.ENOSPC)
	require.True(t, f.startAutoResume())
	require.False(t, f.startAutoResume(), "one retries already")
	f.replace(fmt.Errorf("resume: %w", syscall.EDQUOT))
	require.False(t, f.startAutoResume(), "one retries already, after a failed Resume")
	f.autoResumeEnded()
	require.True(t, f.startAutoResume(), "the last one ended")
	f.autoResumeEnded()
	f.replace(fmt.Errorf("resume: %w", syscall.EIO))
	require.False(t, f.startAutoResume(), "no longer out of space")
	f.clear()
	require.False(t, f.startAutoResume(), "cleared")
}

// A compaction out of space puts the next off by a back-off that doubles
// from resumeFirstDelay up to resumeMaxDelay; the next is due once it has
// passed.
func TestCompactionPauseBackoff(t *testing.T) {
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var c compactionState
	require.True(t, c.due(now), "never paused")
	require.NoError(t, c.pausedBy())
	want := []time.Duration{resumeFirstDelay, 2 * resumeFirstDelay, 4 * resumeFirstDelay, 8 * resumeFirstDelay,
		16 * resumeFirstDelay, 32 * resumeFirstDelay, resumeMaxDelay, resumeMaxDelay}
	require.True(t, 32*resumeFirstDelay < resumeMaxDelay && resumeMaxDelay < 64*resumeFirstDelay,
		"the bound falls between the sixth doubling and the seventh")
	for i, w := range want {
		err := fmt.Errorf("compaction %d: %w", i, syscall.ENOSPC)
		require.Equal(t, w, c.paused(err, now), "pause %d", i)
		require.ErrorIs(t, c.pausedBy(), err)
		require.False(t, c.due(now), "pause %d, at once", i)
		require.False(t, c.due(now.Add(w-time.Nanosecond)), "pause %d, just before", i)
		require.True(t, c.due(now.Add(w)), "pause %d, once passed", i)
		now = now.Add(w)
	}
}

// Resume lets the next compaction start at once but keeps the back-off,
// the disk having filled up once already; a compaction that succeeds
// resets it.
func TestCompactionUnpauseAndSuccess(t *testing.T) {
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var c compactionState
	require.False(t, c.unpause(), "nothing paused")

	c.paused(syscall.ENOSPC, now)
	require.Equal(t, 2*resumeFirstDelay, c.paused(syscall.ENOSPC, now))
	require.False(t, c.due(now))
	require.True(t, c.unpause())
	require.NoError(t, c.pausedBy())
	require.True(t, c.due(now), "due at once after unpause")
	require.False(t, c.unpause(), "unpaused already")
	require.Equal(t, 4*resumeFirstDelay, c.paused(syscall.ENOSPC, now), "the back-off goes on doubling")

	c.succeeded()
	require.NoError(t, c.pausedBy())
	require.Equal(t, resumeFirstDelay, c.paused(syscall.ENOSPC, now), "a success resets the back-off")
}

// begin and end bracket the one compaction running.
func TestCompactionBusy(t *testing.T) {
	var c compactionState
	require.False(t, c.busy())
	c.begin()
	require.True(t, c.busy())
	c.end()
	require.False(t, c.busy())
}
