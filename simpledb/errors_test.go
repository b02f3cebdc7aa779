package simpledb

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The errors of limits say the limit, as a caller meets them: in a log
// line, far from this package's documentation.
func TestLimitErrorsStateTheLimit(t *testing.T) {
	db, err := Open(t.TempDir(), smallOptions())
	require.NoError(t, err)
	defer db.Close()
	for _, tc := range []struct {
		name    string
		err     error
		limit   error
		message string
	}{
		{"key", db.Put(make([]byte, MaxKeySize+1), nil, DefaultSync), ErrKeyTooLarge, "strata: key over 64 KiB: 65537 bytes"},
		{"range deletion's end", db.DeleteRange(nil, make([]byte, MaxKeySize+1), DefaultSync), ErrKeyTooLarge, "strata: key over 64 KiB: 65537 bytes"},
		{"value", db.Put([]byte("k"), make([]byte, MaxValueSize+1), DefaultSync), ErrValueTooLarge, "simpledb: value over 64 MiB: 67108865 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.ErrorIs(t, tc.err, tc.limit)
			require.EqualError(t, tc.err, tc.message)
		})
	}
	require.EqualError(t, ErrBatchTooLarge, "simpledb: batch over 512 MiB")
}
