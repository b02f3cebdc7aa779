package simpledb

import (
	"bytes"
	"fmt"
	"io/fs"
	"sync"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/filenames"
	"github.com/stratadb/strata/internal/manifest"
	"github.com/stratadb/strata/sstables"
	"github.com/stratadb/strata/vfs"
	"github.com/stretchr/testify/require"
)

// The table cache alone, without a database: tables written by hand into
// an in-memory directory, opened and read through a cache of a few files.

const tableCacheDir = "/db"

func cachedKey(num uint64) []byte   { return fmt.Appendf(nil, "key%03d", num) }
func cachedValue(num uint64) []byte { return fmt.Appendf(nil, "value%03d", num) }

// tableCacheFixture is a table cache of capacity files over n tables,
// numbered 1 to n, each holding cachedKey(num).
type tableCacheFixture struct {
	c      *tableCache
	fs     *openFilesFS // counts the table files open
	blocks *sstables.Cache
	infos  []manifest.TableInfo // what the manifest records of each, in order of number
}

func newTableCacheFixture(t *testing.T, capacity, n int) *tableCacheFixture {
	t.Helper()
	f := &tableCacheFixture{fs: &openFilesFS{FS: vfs.NewMem(), match: tableFiles}, blocks: sstables.NewCache(1 << 20)}
	require.NoError(t, f.fs.MkdirAll(tableCacheDir, 0o755))
	for num := uint64(1); num <= uint64(n); num++ {
		w, err := sstables.NewWriter(filenames.TablePath(tableCacheDir, num), &sstables.WriterOptions{FS: f.fs, ID: base.NewFileID(0)})
		require.NoError(t, err)
		require.NoError(t, w.Add(cachedKey(num), cachedValue(num)))
		require.NoError(t, w.Close())
		m := w.Metadata()
		f.infos = append(f.infos, manifest.TableInfo{Num: num, Size: m.FileSize, Smallest: m.MinKey, Largest: m.MaxKey, ID: m.ID})
	}
	o := (&Options{FS: f.fs, Logger: quietLogger}).withDefaults()
	f.c = newTableCache(capacity, tableCacheDir, &o, f.blocks)
	return f
}

// open opens the tables of infos, each with its one reference.
func (f *tableCacheFixture) open(t *testing.T, infos ...manifest.TableInfo) []*table {
	t.Helper()
	var tables []*table
	for _, info := range infos {
		tb, err := f.c.openTable(info, false)
		require.NoError(t, err)
		tables = append(tables, tb)
		f.requireFiles(t)
	}
	return tables
}

// requireFiles checks that the cache counts the table files open, and
// that they are within its bound unless pins hold more.
func (f *tableCacheFixture) requireFiles(t *testing.T) {
	t.Helper()
	files, _ := f.c.stats()
	require.Equal(t, f.fs.open.Load(), int64(files), "the files the cache counts")
	require.LessOrEqual(t, files, f.c.capacity, "files open")
}

// read reads tb's key through the cache.
func (f *tableCacheFixture) read(t *testing.T, tb *table) {
	t.Helper()
	require.NoError(t, f.tryRead(tb))
}

// tryRead is read for goroutines other than the test's.
func (f *tableCacheFixture) tryRead(tb *table) error {
	r, err := f.c.pin(tb)
	if err != nil {
		return err
	}
	defer f.c.unpin(tb)
	if v, err := r.Get(cachedKey(tb.Num)); err != nil || !bytes.Equal(v, cachedValue(tb.Num)) {
		return fmt.Errorf("table %d read %q, %v", tb.Num, v, err)
	}
	return nil
}

// requireReads checks that r reads table num's key.
func requireReads(t *testing.T, r *sstables.Reader, num uint64) {
	t.Helper()
	v, err := r.Get(cachedKey(num))
	require.NoError(t, err)
	require.Equal(t, cachedValue(num), v)
}

// However many tables there are, at most capacity files are open when
// nothing is pinned; a read of a table whose file was closed reopens it.
func TestTableCacheUnitBoundsOpenFiles(t *testing.T) {
	const n = 6
	for _, tc := range []struct {
		capacity int
		reopens  int64 // reading every table twice in order, after opening them
	}{
		{1, n}, {3, n}, {n - 1, n}, {n, 0}, {n + 2, 0},
	} {
		t.Run(fmt.Sprint(tc.capacity), func(t *testing.T) {
			f := newTableCacheFixture(t, tc.capacity, n)
			tables := f.open(t, f.infos...)
			files, _ := f.c.stats()
			require.Equal(t, min(tc.capacity, n), files)
			for _, tb := range tables {
				f.read(t, tb)
				f.read(t, tb) // its file is open now
				f.requireFiles(t)
			}
			_, reopens := f.c.stats()
			require.Equal(t, tc.reopens, reopens)
			for _, tb := range tables {
				tb.unref()
			}
			files, _ = f.c.stats()
			require.Zero(t, files)
			require.Zero(t, f.fs.open.Load())
		})
	}
}

// A pinned Reader stays open, beyond the bound if it must; its last unpin
// closes it if more files than the bound are open then, as the open of a
// new table closes its file at once.
func TestTableCachePinnedReaderStaysOpen(t *testing.T) {
	f := newTableCacheFixture(t, 1, 3)
	tables := f.open(t, f.infos[:2]...)
	a, b := tables[0], tables[1]

	ra, err := f.c.pin(a) // a reopen: b's open closed a's file
	require.NoError(t, err)
	rb, err := f.c.pin(b)
	require.NoError(t, err)
	files, reopens := f.c.stats()
	require.Equal(t, 2, files, "pinned beyond the bound")
	require.Equal(t, int64(2), reopens)
	require.Equal(t, int64(2), f.fs.open.Load())
	c, err := f.c.openTable(f.infos[2], false)
	require.NoError(t, err)
	require.Equal(t, int64(2), f.fs.open.Load(), "a new table's file closed at once")
	f.read(t, c) // opened beside the pinned two, then closed
	require.Equal(t, int64(2), f.fs.open.Load())

	requireReads(t, ra, a.Num)
	requireReads(t, rb, b.Num)
	f.c.unpin(a)
	files, _ = f.c.stats()
	require.Equal(t, 1, files, "the last unpin beyond the bound closes")
	requireReads(t, rb, b.Num)
	f.c.unpin(b)
	f.requireFiles(t)
	_, before := f.c.stats()
	f.read(t, b)
	_, reopens = f.c.stats()
	require.Equal(t, before, reopens, "b stayed open after its unpin within the bound")
}

// Readers pinned and unpinned concurrently keep the count of files right
// and, once none is pinned, within the bound.
func TestTableCacheConcurrentPins(t *testing.T) {
	f := newTableCacheFixture(t, 2, 6)
	tables := f.open(t, f.infos...)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 100 {
				if err := f.tryRead(tables[(g+i)%len(tables)]); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	f.requireFiles(t)
}

// The last reference on a table closes its Reader; if an edit removed the
// table, its file is deleted and its blocks leave the cache, those its
// Reader held too; otherwise both stay.
func TestTableCacheDropRetiresObsoleteTable(t *testing.T) {
	for _, obsolete := range []bool{false, true} {
		t.Run(fmt.Sprintf("obsolete=%v", obsolete), func(t *testing.T) {
			f := newTableCacheFixture(t, 2, 1)
			tb := f.open(t, f.infos...)[0]
			f.read(t, tb)
			blocks := f.blocks.Stats().Blocks
			require.Positive(t, blocks, "the read cached blocks")
			path := filenames.TablePath(tableCacheDir, tb.Num)

			tb.ref() // a second version's
			tb.obsolete.Store(obsolete)
			tb.unref()
			_, err := f.fs.Stat(path)
			require.NoError(t, err, "a reference is left")
			require.Equal(t, int64(1), f.fs.open.Load())

			tb.unref()
			require.Zero(t, f.fs.open.Load())
			files, _ := f.c.stats()
			require.Zero(t, files)
			_, err = f.fs.Stat(path)
			if obsolete {
				require.ErrorIs(t, err, fs.ErrNotExist)
				require.Zero(t, f.blocks.Stats().Blocks)
			} else {
				require.NoError(t, err)
				// More, even: the closed Reader hands the cache the
				// blocks it held, for a reopen to find.
				require.GreaterOrEqual(t, f.blocks.Stats().Blocks, blocks)
			}
		})
	}
}

// A table file that is missing, or not the one the manifest records, is
// ErrCorruption naming it, whether found by openTable or by a reopen; the
// failure holds no file open, and other tables read on.
func TestTableCacheDamagedFile(t *testing.T) {
	type damage func(t *testing.T, fsys vfs.FS, path string, info *manifest.TableInfo)
	file := func(change func([]byte) []byte) damage {
		return func(t *testing.T, fsys vfs.FS, path string, _ *manifest.TableInfo) { rewrite(t, fsys, path, change) }
	}
	// The file itself is whole: only what the manifest records tells it
	// from the table.
	recorded := func(change func(*manifest.TableInfo)) damage {
		return func(_ *testing.T, _ vfs.FS, _ string, info *manifest.TableInfo) { change(info) }
	}
	for _, tc := range []struct {
		name   string
		damage damage
	}{
		{"missing", func(t *testing.T, fsys vfs.FS, path string, _ *manifest.TableInfo) {
			require.NoError(t, fsys.Remove(path))
		}},
		{"cut", file(func(b []byte) []byte { return b[:len(b)-1] })},
		{"emptied", file(func(b []byte) []byte { return b[:0] })},
		{"grown", file(func(b []byte) []byte { return append(b, 0) })},
		{"recorded larger", recorded(func(info *manifest.TableInfo) { info.Size++ })},
		{"recorded smaller", recorded(func(info *manifest.TableInfo) { info.Size-- })},
		{"recorded with another identity", recorded(func(info *manifest.TableInfo) { info.ID ^= 1 })},
	} {
		t.Run(tc.name+"/open", func(t *testing.T) {
			f := newTableCacheFixture(t, 2, 1)
			path := filenames.TablePath(tableCacheDir, 1)
			tc.damage(t, f.fs, path, &f.infos[0])
			_, err := f.c.openTable(f.infos[0], false)
			require.ErrorIs(t, err, ErrCorruption)
			require.ErrorContains(t, err, path)
			f.requireFiles(t)
			require.Zero(t, f.fs.open.Load())
		})
		t.Run(tc.name+"/reopen", func(t *testing.T) {
			f := newTableCacheFixture(t, 1, 2)
			tables := f.open(t, f.infos...) // the second's open closed the first's file
			path := filenames.TablePath(tableCacheDir, 1)
			tc.damage(t, f.fs, path, &tables[0].TableInfo)
			for range 2 { // a failed reopen leaves nothing behind to trip the next
				_, err := f.c.pin(tables[0])
				require.ErrorIs(t, err, ErrCorruption)
				require.ErrorContains(t, err, path)
				f.requireFiles(t)
			}
			f.read(t, tables[1])
		})
	}
}
