package simpledb

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/stratadb/strata/vfs"
	"github.com/stretchr/testify/require"
)

// The memory budget bounds the memstores, the open tables' indexes and
// filters and the block cache together, through writes, flushes,
// compactions, reads and a read-only reopen: the cache gives way to the
// rest.
func TestMemoryBudget(t *testing.T) {
	const budget = 4 << 20
	mem := vfs.NewMem()
	opts := &Options{FS: mem, Logger: quietLogger, MemoryBudget: budget, NoSync: true, TargetTableSize: 1 << 20}
	db, err := Open("/db", opts)
	require.NoError(t, err)
	require.Equal(t, int64(budget/3), db.opts.MemstoreSize, "the default MemstoreSize")

	within := func(db *DB, memstoreBytes bool) {
		t.Helper()
		st := db.Stats()
		require.LessOrEqual(t, st.BlockCacheBytes+st.MemoryCharged, max(int64(budget), st.MemoryCharged))
		if memstoreBytes {
			require.GreaterOrEqual(t, st.MemoryCharged, st.MemstoreBytes, "the memstores are charged")
			require.GreaterOrEqual(t, st.MemoryCharged, 2*db.opts.MemstoreSize, "all a writable database may hold")
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	key := func(i uint64) []byte { return binary.BigEndian.AppendUint64([]byte("key"), i) }
	value := make([]byte, 200)
	const n = 60_000 // about 12 MiB: three times the budget
	for i := range n {
		binary.LittleEndian.PutUint64(value, uint64(i))
		require.NoError(t, db.Put(key(rng.Uint64N(n)), value, DefaultSync))
		if i%5000 == 0 {
			within(db, true)
		}
	}
	require.NoError(t, db.Flush())
	require.NoError(t, db.Compact())
	within(db, true)
	for range 20_000 {
		_, err := db.Get(key(rng.Uint64N(n)))
		if err != ErrNotFound {
			require.NoError(t, err)
		}
	}
	st := db.Stats()
	t.Logf("after reads: cache %d bytes, charged %d, %d tables", st.BlockCacheBytes, st.MemoryCharged, st.OpenTables)
	require.Positive(t, st.BlockCacheBytes, "the cache fills what the charges leave")
	require.Positive(t, st.MemoryCharged-st.MemstoreBytes, "the tables' indexes and filters are charged")
	within(db, true)
	require.NoError(t, db.Close())

	opts.ReadOnly = true
	db, err = Open("/db", opts)
	require.NoError(t, err)
	for range 5000 {
		_, err := db.Get(key(rng.Uint64N(n)))
		if err != ErrNotFound {
			require.NoError(t, err)
		}
	}
	within(db, false)
	require.NoError(t, db.Close())
}

// The tables a database writes hold no index or filter until a read needs
// them: flushes and compactions charge nothing to the budget for them, and
// the first read of a table charges its own: a scan (or a compaction) its
// index, a point read its filter too. The tables found at Open are loaded
// at once.
func TestWrittenTablesLoadIndexesOnRead(t *testing.T) {
	mem := vfs.NewMem()
	opts := &Options{FS: mem, Logger: quietLogger, MemoryBudget: 8 << 20, NoSync: true, TargetTableSize: 256 << 10}
	db, err := Open("/db", opts)
	require.NoError(t, err)
	memstores := db.Stats().MemoryCharged
	key := func(i uint64) []byte { return binary.BigEndian.AppendUint64([]byte("key"), i) }
	value := make([]byte, 100)
	const n = 20_000
	for i := range uint64(n) {
		require.NoError(t, db.Put(key(i*7919%n), value, DefaultSync))
	}
	require.NoError(t, db.Flush())
	require.NoError(t, db.Compact())
	st := db.Stats()
	require.Greater(t, st.OpenTables, 1)
	require.Equal(t, memstores, st.MemoryCharged, "no table read yet")

	_, err = db.Get(key(42))
	require.NoError(t, err)
	one := db.Stats().MemoryCharged - memstores
	require.Positive(t, one, "the table read holds its index and filter")
	it, err := db.NewIterator(nil, nil)
	require.NoError(t, err)
	scanned := 0
	for ok := it.First(); ok; ok = it.Next() {
		scanned++
	}
	require.NoError(t, it.Close())
	require.Equal(t, n, scanned)
	indexes := db.Stats().MemoryCharged - memstores
	require.Greater(t, indexes, one, "a scan loads the index of every table")
	for i := range uint64(n) {
		_, err := db.Get(key(i))
		require.NoError(t, err)
	}
	all := db.Stats().MemoryCharged - memstores
	require.Greater(t, all, indexes, "point reads load the filters, which a scan does not")
	require.NoError(t, db.Close())

	db, err = Open("/db", opts)
	require.NoError(t, err)
	require.Equal(t, memstores+all, db.Stats().MemoryCharged, "Open loads the tables it finds")
	require.NoError(t, db.Close())
}
