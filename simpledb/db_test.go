package simpledb

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/manifest"
	"github.com/stratadb/strata/internal/testseed"
	"github.com/stratadb/strata/vfs"
	"github.com/stratadb/strata/vfs/errorfs"
	"github.com/stretchr/testify/require"
)

// hookFS calls before ahead of each Create and Rename, with the path (the
// new one for a rename).
type hookFS struct {
	vfs.FS
	before func(op errorfs.Op, path string)
}

func (h *hookFS) Create(name string) (vfs.File, error) {
	h.before(errorfs.OpCreate, name)
	return h.FS.Create(name)
}

func (h *hookFS) Rename(oldname, newname string) error {
	h.before(errorfs.OpRename, newname)
	return h.FS.Rename(oldname, newname)
}

// openFilesFS counts the files open through it, or only those whose name
// match accepts: how many are open now, the most at once, and how many
// were ever opened.
type openFilesFS struct {
	vfs.FS
	match             func(name string) bool // nil: every file
	open, peak, opens atomic.Int64
}

// tableFiles accepts tables, not the temporary files they are written as.
func tableFiles(name string) bool { return strings.HasSuffix(name, ".sst") }

func (o *openFilesFS) Create(name string) (vfs.File, error) {
	return o.count(name)(o.FS.Create(name))
}

func (o *openFilesFS) Open(name string) (vfs.File, error) {
	return o.count(name)(o.FS.Open(name))
}

func (o *openFilesFS) ReuseForWrite(oldname, newname string) (vfs.File, error) {
	return o.count(newname)(o.FS.ReuseForWrite(oldname, newname))
}

func (o *openFilesFS) count(name string) func(vfs.File, error) (vfs.File, error) {
	return func(f vfs.File, err error) (vfs.File, error) {
		if err != nil || o.match != nil && !o.match(name) {
			return f, err
		}
		o.opens.Add(1)
		n := o.open.Add(1)
		for peak := o.peak.Load(); n > peak && !o.peak.CompareAndSwap(peak, n); peak = o.peak.Load() {
		}
		return &countedFile{File: f, fs: o}, nil
	}
}

type countedFile struct {
	vfs.File
	fs   *openFilesFS
	once sync.Once
}

func (c *countedFile) Close() error {
	c.once.Do(func() { c.fs.open.Add(-1) })
	return c.File.Close()
}

// An Open that fails opening its nth table closes the tables it opened
// before, and a later Open succeeds.
func TestFailedOpenClosesTables(t *testing.T) {
	mem := vfs.NewMem()
	opts := testOptions(mem)
	opts.DisableAutoCompaction = true
	db, err := Open("/db", opts)
	require.NoError(t, err)
	acked := model{}
	const tables = 4
	for i := range tables {
		for k, v := range putAcked(t, db, i*50, (i+1)*50) {
			acked[k] = v
		}
		require.NoError(t, db.Flush())
	}
	require.Equal(t, tables, db.Stats().Levels[0].Tables)
	require.NoError(t, db.Close())

	for n := range int64(tables) {
		rule := &errorfs.Rule{Ops: errorfs.OpOpen, Match: errorfs.Suffix(".sst"), After: n, Err: syscall.EIO}
		rule.Enable()
		fsys := &openFilesFS{FS: errorfs.Wrap(mem, rule)}
		opts.FS = fsys
		_, err := Open("/db", opts)
		require.ErrorIs(t, err, syscall.EIO, "table open %d fails", n+1)
		require.Zero(t, fsys.open.Load(), "files left open after table open %d failed", n+1)
	}
	fsys := &openFilesFS{FS: mem}
	opts.FS = fsys
	db, err = Open("/db", opts)
	require.NoError(t, err)
	requireAcked(t, db, acked)
	require.NoError(t, db.Close())
	require.Zero(t, fsys.open.Load(), "files left open by Close")
}

// Close waits for a manual compaction that is writing its output, rather
// than closing the manifest under it.
func TestCloseWaitsForCompact(t *testing.T) {
	reached, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	var armed atomic.Bool
	fsys := &hookFS{FS: vfs.NewMem(), before: func(op errorfs.Op, path string) {
		if armed.Load() && op == errorfs.OpRename && strings.HasSuffix(path, ".sst") {
			once.Do(func() {
				close(reached)
				<-release
			})
		}
	}}
	opts := testOptions(fsys)
	opts.DisableAutoCompaction = true
	db, err := Open("/db", opts)
	require.NoError(t, err)
	acked := putAcked(t, db, 0, 100)
	require.NoError(t, db.Flush())
	for k, v := range putAcked(t, db, 100, 200) {
		acked[k] = v
	}
	require.NoError(t, db.Flush())
	armed.Store(true)

	compacted := make(chan error, 1)
	go func() { compacted <- db.Compact() }()
	<-reached // the compaction is installing its first output
	closed := make(chan error, 1)
	go func() { closed <- db.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while a compaction was writing", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if err := <-compacted; err != nil {
		require.ErrorIs(t, err, ErrClosed)
	}
	require.NoError(t, <-closed)

	armed.Store(false)
	db, err = Open("/db", opts)
	require.NoError(t, err)
	requireAcked(t, db, acked)
	require.NoError(t, db.Close())
}

// A read that passed its closed check just before Close released the read
// state gets ErrClosed, not a state whose tables are closed.
func TestAcquireAfterClose(t *testing.T) {
	opts := testOptions(vfs.NewMem())
	db, err := Open("/db", opts)
	require.NoError(t, err)
	putAcked(t, db, 0, 10)
	require.NoError(t, db.Flush())
	require.NoError(t, db.Close())
	_, err = db.reads.acquire()
	require.ErrorIs(t, err, ErrClosed)
}

// Reads, iterators, snapshots and a manual compaction racing Close (run
// with -race; tables are memory-mapped, so a read of a closed table would
// crash): each call returns a right answer or ErrClosed.
func TestCallsRacingClose(t *testing.T) {
	seed := testseed.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 0))
	for round := range 10 {
		opts := smallOptions()
		opts.MmapTables, opts.Logger, opts.NoSync = true, quietLogger, true
		db, err := Open(t.TempDir(), opts)
		require.NoError(t, err)
		acked := putAcked(t, db, 0, 300)
		require.NoError(t, db.Flush())
		for k, v := range putAcked(t, db, 300, 400) { // in the memstore
			acked[k] = v
		}
		keys := make([][]byte, 0, len(acked))
		for k := range acked {
			keys = append(keys, []byte(k))
		}

		var wg sync.WaitGroup
		check := func(what string, err error) bool {
			if err == nil {
				return true
			}
			if !errors.Is(err, ErrClosed) {
				t.Errorf("seed %d round %d: %s: %v", seed, round, what, err)
			}
			return false
		}
		for g := range 8 {
			wg.Go(func() {
				for i := 0; ; i++ {
					k := keys[(g*131+i)%len(keys)]
					switch g % 4 {
					case 0:
						v, err := db.Get(k)
						if !check("Get", err) {
							return
						}
						if string(v) != acked[string(k)] {
							t.Errorf("Get %s = %q, want %q", k, v, acked[string(k)])
							return
						}
					case 1:
						it, err := db.NewIterator(k, nil)
						if !check("NewIterator", err) {
							return
						}
						for n := 0; n < 20 && it.Next(); n++ {
						}
						err = it.Err()
						it.Close()
						if !check("iterate", err) {
							return
						}
					case 2:
						snap := db.NewSnapshot()
						_, err := snap.Get(k)
						snap.Release()
						if !check("Snapshot.Get", err) {
							return
						}
					case 3:
						if !check("Compact", db.Compact()) {
							return
						}
					}
				}
			})
		}
		time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond)
		require.NoError(t, db.Close(), fmt.Sprintf("seed %d round %d", seed, round))
		wg.Wait()
	}
}

// Key and Value of an iterator not at a key return nil: before, Value
// panicked in the merging iterator. Levels below L0 are covered too.
func TestIteratorNotPositioned(t *testing.T) {
	for _, tt := range []struct {
		name string
		fill func(t *testing.T, db *DB)
	}{
		{"empty", func(*testing.T, *DB) {}},
		{"memstore", func(t *testing.T, db *DB) { putAcked(t, db, 0, 3) }},
		{"levels", func(t *testing.T, db *DB) {
			putAcked(t, db, 0, 3)
			require.NoError(t, db.Flush())
			require.NoError(t, db.Compact())
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db, err := Open("/db", &Options{FS: vfs.NewMem(), Logger: quietLogger})
			require.NoError(t, err)
			defer db.Close()
			tt.fill(t, db)
			it, err := db.NewIterator(nil, nil)
			require.NoError(t, err)
			unpositioned := func(state string) {
				require.False(t, it.Valid(), state)
				require.Nil(t, it.Key(), state)
				require.Nil(t, it.Value(), state)
			}
			unpositioned("before the first move")
			for ok := it.Next(); ok; ok = it.Next() {
			}
			unpositioned("past the end")
			require.False(t, it.SeekGE([]byte("zzz")))
			unpositioned("sought past the end")
			for ok := it.Last(); ok; ok = it.Prev() {
			}
			unpositioned("past the start")
			require.False(t, it.SeekLT([]byte("\x00")))
			unpositioned("sought past the start")
			require.NoError(t, it.Close())
			unpositioned("closed")
			for name, move := range map[string]func() bool{
				"First": it.First, "Last": it.Last, "Next": it.Next, "Prev": it.Prev,
				"SeekGE": func() bool { return it.SeekGE([]byte("a")) },
				"SeekLT": func() bool { return it.SeekLT([]byte("zzz")) },
			} {
				require.False(t, move(), "%s after Close", name)
			}
			require.ErrorIs(t, it.Err(), ErrClosed)
		})
	}
}

// TestCloseFlushes checks that Close writes a memstore of closeFlushBytes
// or more to a table, so that the next Open replays nothing, and leaves a
// smaller one in the log, where the next Open finds it.
func TestCloseFlushes(t *testing.T) {
	for _, tt := range []struct {
		name    string
		keys    int
		flushed bool
	}{{"large", 40000, true}, {"small", 100, false}} {
		t.Run(tt.name, func(t *testing.T) {
			opts := testOptions(vfs.NewMem())
			opts.MemstoreSize = 64 << 20
			db, err := Open("/db", opts)
			require.NoError(t, err)
			value := bytes.Repeat([]byte{'v'}, 100)
			for i := range tt.keys {
				require.NoError(t, db.Put(fmt.Appendf(nil, "key-%06d", i), value, NoSync))
			}
			require.Equal(t, tt.flushed, db.mu.memstores.active().m.SizeBytes() >= closeFlushBytes, "the test's premise")
			order := db.opts.Comparator.Name
			require.NoError(t, db.Close())
			// The logs the manifest names, with the lengths Close recorded.
			name, err := manifest.ReadCurrent(opts.FS, "/db")
			require.NoError(t, err)
			state, err := manifest.Replay(opts.FS, filepath.Join("/db", name), order)
			require.NoError(t, err)
			var logged uint64
			for _, l := range state.Logs {
				logged += l.Size
			}
			if tt.flushed {
				require.Less(t, logged, uint64(4096), "nothing left to replay but the log's header")
			} else {
				require.Greater(t, logged, uint64(tt.keys*100), "the writes are in the log")
			}
			db, err = Open("/db", opts)
			require.NoError(t, err)
			defer db.Close()
			for i := range tt.keys {
				v, err := db.Get(fmt.Appendf(nil, "key-%06d", i))
				require.NoError(t, err)
				require.Equal(t, value, v)
			}
		})
	}
}
