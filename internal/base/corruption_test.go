package base

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCorruptionErrorMatchesKindAndCorruption(t *testing.T) {
	errBadThing := errors.New("bad thing")
	err := fmt.Errorf("reading: %w", Corruptf("/data/x.rio", 42, errBadThing, "want %x, got %x", 1, 2))

	require.ErrorIs(t, err, ErrCorruption)
	require.ErrorIs(t, err, errBadThing)
	require.EqualError(t, err, "reading: /data/x.rio: offset 42: bad thing: want 1, got 2")

	var ce *CorruptionError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, int64(42), ce.Offset)
	require.Equal(t, "/data/x.rio", ce.Path)
}

func TestCorruptionErrorWithoutPathOrDetail(t *testing.T) {
	err := &CorruptionError{Offset: 7, Kind: errors.New("truncated")}
	require.EqualError(t, err, "<stream>: offset 7: truncated")
}
