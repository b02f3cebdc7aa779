package simpledb

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/filenames"
	"github.com/stratadb/strata/internal/testseed"
	"github.com/stratadb/strata/vfs"
	"github.com/stretchr/testify/require"
)

// setTableCacheCapacity lowers db's bound on open tables, below
// MinMaxOpenFiles too, so that a test with few tables reopens them often.
func setTableCacheCapacity(db *DB, n int) {
	c := db.tables
	c.mu.Lock()
	c.capacity = n
	victims := c.makeRoom()
	c.mu.Unlock()
	closeReaders(victims)
}

// manyTablesKey is key i of openManyTables's database.
func manyTablesKey(i int) []byte { return fmt.Appendf(nil, "key%06d", i) }

func manyTablesValue(i int) []byte {
	return bytes.Repeat(fmt.Appendf(nil, "%d.", i), 20)
}

// openManyTables opens an in-memory database with MaxOpenFiles at its
// minimum and several times as many tables: keys 0 to n-1 compacted into
// small L1 tables, the last fifth of them written again into a few L0
// tables.
func openManyTables(t *testing.T, n int) (*DB, *openFilesFS, *Options) {
	fsys := &openFilesFS{FS: vfs.NewMem(), match: tableFiles}
	opts := testOptions(fsys)
	opts.TargetTableSize, opts.DisableAutoCompaction = 4<<10, true
	opts.MaxOpenFiles = MinMaxOpenFiles
	opts.BlobThreshold = -1 // tables of about 30 keys and their values: the count is what is tested
	db, err := Open("/db", opts)
	require.NoError(t, err)
	put := func(from, to int) {
		b := db.NewBatch()
		for i := from; i < to; i++ {
			require.NoError(t, b.Put(manyTablesKey(i), manyTablesValue(i)))
		}
		require.NoError(t, db.Write(b, DefaultSync))
	}
	put(0, n)
	require.NoError(t, db.Compact())
	for i := 4 * n / 5; i < n; i += n / 20 {
		put(i, i+n/20)
		require.NoError(t, db.Flush())
	}
	st := db.Stats()
	require.Greater(t, st.Levels[1].Tables, 2*MinMaxOpenFiles, "tables in L1")
	require.Positive(t, st.Levels[0].Tables)
	return db, fsys, opts
}

// With MaxOpenFiles at its minimum and many more tables, reads see every
// key and never hold more tables open than the bound.
func TestTableCacheBoundsOpenTables(t *testing.T) {
	t.Parallel()
	const n = 30000
	db, fsys, opts := openManyTables(t, n)
	defer db.Close()
	seed := testseed.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 0))
	for _, tc := range []struct {
		name string
		read func(t *testing.T)
	}{
		{"get every key", func(t *testing.T) {
			for i := range n {
				v, err := db.Get(manyTablesKey(i))
				require.NoError(t, err, "key %d", i)
				require.Equal(t, manyTablesValue(i), v, "key %d", i)
			}
		}},
		{"get random keys", func(t *testing.T) {
			for range n {
				i := rng.IntN(n)
				v, err := db.Get(manyTablesKey(i))
				require.NoError(t, err, "key %d", i)
				require.Equal(t, manyTablesValue(i), v, "key %d", i)
			}
		}},
		{"iterate forward", func(t *testing.T) {
			it, err := db.NewIterator(nil, nil)
			require.NoError(t, err)
			i := 0
			for k, v := range it.All() {
				require.Equal(t, manyTablesKey(i), k)
				require.Equal(t, manyTablesValue(i), v)
				i++
			}
			require.NoError(t, it.Err())
			require.NoError(t, it.Close())
			require.Equal(t, n, i)
		}},
		{"iterate backward", func(t *testing.T) {
			it, err := db.NewIterator(nil, nil)
			require.NoError(t, err)
			i := n
			for k, v := range it.Backward() {
				i--
				require.Equal(t, manyTablesKey(i), k)
				require.Equal(t, manyTablesValue(i), v)
			}
			require.NoError(t, it.Err())
			require.NoError(t, it.Close())
			require.Zero(t, i)
		}},
		{"seek random keys", func(t *testing.T) {
			it, err := db.NewIterator(nil, nil)
			require.NoError(t, err)
			defer it.Close()
			for range 2000 {
				i := rng.IntN(n)
				require.True(t, it.SeekGE(manyTablesKey(i)), "key %d", i)
				require.Equal(t, manyTablesKey(i), it.Key())
				require.Equal(t, manyTablesValue(i), it.Value())
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reopens := db.Stats().TableReopens
			tc.read(t)
			st := db.Stats()
			require.Greater(t, st.TableReopens, reopens, "reads reopened tables")
			require.LessOrEqual(t, fsys.peak.Load(), int64(opts.MaxOpenFiles), "tables open at once")
			require.LessOrEqual(t, st.OpenTables, opts.MaxOpenFiles)
			require.Equal(t, int64(st.OpenTables), fsys.open.Load(), "Stats.OpenTables")
		})
	}
	require.NoError(t, db.Close())
	require.Zero(t, fsys.open.Load(), "tables left open by Close")
}

// Reads, writes, flushes and compactions run concurrently through a table
// cache at its minimum size (run with -race): every read sees a value its
// key was given, the tables open never exceed the bound (what they pin at
// once, a few L0 tables and one per level each, stays well below it), and
// once they stop Stats counts every table open.
func TestTableCacheConcurrentReadsAndCompactions(t *testing.T) {
	t.Parallel()
	fsys := &openFilesFS{FS: vfs.NewMem(), match: tableFiles}
	opts := testOptions(fsys)
	opts.TargetTableSize, opts.BaseLevelSize = 4<<10, 64<<10
	opts.MaxOpenFiles = MinMaxOpenFiles
	db, err := Open("/db", opts)
	require.NoError(t, err)
	defer db.Close()

	const keys, writes = 3000, 10000
	// Values of random bytes, which do not compress: they make many
	// tables.
	value := func(rng *rand.Rand, i, version int) []byte {
		v := fmt.Appendf(nil, "%s@%d.", manyTablesKey(i), version)
		for range 16 {
			v = fmt.Appendf(v, "%08x", rng.Uint32())
		}
		return v
	}
	check := func(k, v []byte) error {
		if !bytes.HasPrefix(v, append(k, '@')) {
			return fmt.Errorf("key %s has value %.20q", k, v)
		}
		return nil
	}
	var wg sync.WaitGroup
	var done atomic.Bool
	for w := range 2 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for j := range writes {
				i := rng.IntN(keys)
				if err := db.Put(manyTablesKey(i), value(rng, i, j), DefaultSync); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	var readers sync.WaitGroup
	for r := range 2 {
		readers.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(r), 2))
			for !done.Load() {
				k := manyTablesKey(rng.IntN(keys))
				v, err := db.Get(k)
				if err == ErrNotFound {
					continue
				}
				if err == nil {
					err = check(k, v)
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	readers.Go(func() {
		rng := rand.New(rand.NewPCG(3, 3))
		for !done.Load() {
			it, err := db.NewIterator(manyTablesKey(rng.IntN(keys)), nil)
			if err != nil {
				t.Error(err)
				return
			}
			var last []byte
			for k, v := range it.All() {
				if err := check(k, v); err != nil || bytes.Compare(k, last) <= 0 {
					t.Errorf("key %s after %s: %v", k, last, err)
					break
				}
				last = append(last[:0], k...)
			}
			if err := it.Err(); err != nil {
				t.Error(err)
			}
			it.Close()
		}
	})
	wg.Wait()
	done.Store(true)
	readers.Wait()
	peak := fsys.peak.Load()
	require.NoError(t, db.Compact())
	st := db.Stats()
	t.Logf("levels %v, %d compactions, %d reopens; at most %d tables open at once, %d with the final Compact",
		st.Levels, st.Compactions, st.TableReopens, peak, fsys.peak.Load())
	require.Positive(t, st.TableReopens)
	require.LessOrEqual(t, fsys.peak.Load(), int64(opts.MaxOpenFiles), "tables open at once")
	// A compaction the loop starts after Compact returns (levels above
	// the deepest over their dynamic targets) holds its output open for
	// writing: the counts agree once it is done.
	require.Eventually(t, func() bool { return int64(db.Stats().OpenTables) == fsys.open.Load() }, 10*time.Second, 10*time.Millisecond,
		"Stats.OpenTables against the tables open")
}

// A table the cache closed whose file is then deleted or damaged makes the
// read that reopens it fail with ErrCorruption naming the file; other
// tables read on.
func TestTableCacheReopenOfDamagedTable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, fsys vfs.FS, path string)
	}{
		{"missing", func(t *testing.T, fsys vfs.FS, path string) {
			require.NoError(t, fsys.Remove(path))
		}},
		{"truncated", func(t *testing.T, fsys vfs.FS, path string) {
			rewrite(t, fsys, path, func(b []byte) []byte { return b[:len(b)-1] })
		}},
		{"footer overwritten", func(t *testing.T, fsys vfs.FS, path string) {
			rewrite(t, fsys, path, func(b []byte) []byte {
				copy(b[len(b)-16:], bytes.Repeat([]byte{'x'}, 16))
				return b
			})
		}},
		{"another identity", func(t *testing.T, fsys vfs.FS, path string) {
			rewrite(t, fsys, path, func(b []byte) []byte {
				return foreignTable(t, b, smallOptions().tableWriterOptions(), rand.New(rand.NewPCG(1, 2)))
			})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 30000
			db, fsys, _ := openManyTables(t, n)
			defer db.Close()
			// Reading a key of every L1 table in order leaves the first,
			// read first, closed.
			for _, table := range db.mu.versions.current().levels[1] {
				_, err := db.Get(table.Smallest)
				require.NoError(t, err)
			}
			victim := db.mu.versions.current().levels[1][0]
			db.tables.mu.Lock()
			closed := victim.reader == nil
			db.tables.mu.Unlock()
			require.True(t, closed, "the first table is closed")
			path := filenames.TablePath(db.dir, victim.Num)
			tc.damage(t, fsys.FS, path)

			_, err := db.Get(victim.Smallest)
			require.ErrorIs(t, err, ErrCorruption)
			require.ErrorContains(t, err, path)
			it, err := db.NewIterator(nil, nil)
			require.NoError(t, err)
			require.False(t, it.SeekGE(victim.Smallest))
			require.ErrorIs(t, it.Err(), ErrCorruption)
			require.ErrorContains(t, it.Err(), path)
			require.NoError(t, it.Close())

			v, err := db.Get(manyTablesKey(n - 1))
			require.NoError(t, err)
			require.Equal(t, manyTablesValue(n-1), v)
		})
	}
}

// rewrite replaces a file's bytes with what change makes of them.
func rewrite(t *testing.T, fsys vfs.FS, path string, change func([]byte) []byte) {
	t.Helper()
	f, err := fsys.Open(path)
	require.NoError(t, err)
	b, err := io.ReadAll(f)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	w, err := fsys.Create(path)
	require.NoError(t, err)
	_, err = w.Write(change(b))
	require.NoError(t, err)
	require.NoError(t, w.Close())
}
