package simpledb

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSmoke(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, &Options{MemstoreSize: 256 << 10})
	require.NoError(t, err)
	for i := range 2000 {
		require.NoError(t, db.Put(fmt.Appendf(nil, "key%05d", i), fmt.Appendf(nil, "value%d", i)))
	}
	require.NoError(t, db.Delete([]byte("key00010")))
	v, err := db.Get([]byte("key00042"))
	require.NoError(t, err)
	require.Equal(t, "value42", string(v))
	_, err = db.Get([]byte("key00010"))
	require.ErrorIs(t, err, ErrNotFound)
	require.NoError(t, db.Flush())
	require.NoError(t, db.Compact())
	t.Logf("%+v", db.Stats())
	it, err := db.NewIterator([]byte("key00005"), []byte("key00015"))
	require.NoError(t, err)
	var keys []string
	for k := range it.All() {
		keys = append(keys, string(k))
	}
	require.NoError(t, it.Err())
	require.NoError(t, it.Close())
	require.Len(t, keys, 9)
	require.NoError(t, db.Close())

	db, err = Open(dir, nil)
	require.NoError(t, err)
	v, err = db.Get([]byte("key01999"))
	require.NoError(t, err)
	require.Equal(t, "value1999", string(v))
	_, err = db.Get([]byte("key00010"))
	require.ErrorIs(t, err, ErrNotFound)
	require.NoError(t, db.Close())
}
