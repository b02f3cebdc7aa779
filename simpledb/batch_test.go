package simpledb

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// PutFunc writes what its function appends, as Put writes a value, in
// plain and indexed batches; a function that appends another length than
// declared, or a bad key or length, rejects the write and the batch.
func TestBatchPutFunc(t *testing.T) {
	appending := func(v string) func([]byte) []byte {
		return func(dst []byte) []byte { return append(dst, v...) }
	}
	for _, tc := range []struct {
		name     string
		key      string
		valueLen int
		append   func([]byte) []byte
		err      error
	}{
		{"value", "k", 5, appending("hello"), nil},
		{"empty value", "k", 0, appending(""), nil},
		{"large value", "k", 1 << 20, func(dst []byte) []byte { return append(dst, make([]byte, 1<<20)...) }, nil},
		{"shorter than declared", "k", 6, appending("hello"), ErrValueLength},
		{"longer than declared", "k", 4, appending("hello"), ErrValueLength},
		{"negative length", "k", -1, appending(""), ErrValueLength},
		{"over the limit", "k", MaxValueSize + 1, appending(""), ErrValueTooLarge},
		{"empty key", "", 5, appending("hello"), ErrEmptyKey},
	} {
		for _, indexed := range []bool{false, true} {
			t.Run(tc.name, func(t *testing.T) {
				db, err := Open(t.TempDir(), smallOptions())
				require.NoError(t, err)
				defer db.Close()
				b := db.NewBatch()
				if indexed {
					b = db.NewIndexedBatch()
				}
				require.NoError(t, b.Put([]byte("before"), []byte("b")))
				err = b.PutFunc([]byte(tc.key), tc.valueLen, tc.append)
				if tc.err != nil {
					require.ErrorIs(t, err, tc.err)
					require.Equal(t, 1, b.Len(), "a rejected write left in the batch")
					require.ErrorIs(t, db.Write(b, DefaultSync), tc.err)
					_, err := db.Get([]byte("before"))
					require.ErrorIs(t, err, ErrNotFound, "a rejected batch applied")
					return
				}
				require.NoError(t, err)
				want := tc.append([]byte{})
				if indexed {
					got, err := b.Get([]byte(tc.key))
					require.NoError(t, err)
					require.Equal(t, want, got)
				}
				require.NoError(t, b.Put([]byte("after"), []byte("a")))
				require.NoError(t, db.Write(b, DefaultSync))
				for k, v := range map[string][]byte{"before": []byte("b"), tc.key: want, "after": []byte("a")} {
					got, err := db.Get([]byte(k))
					require.NoError(t, err)
					require.Equal(t, v, got, "key %q", k)
				}
			})
		}
	}
}
