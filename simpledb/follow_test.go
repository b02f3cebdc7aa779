package simpledb

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stratadb/strata/internal/filenames"
	"github.com/stratadb/strata/internal/testseed"
	"github.com/stratadb/strata/recordio"
	"github.com/stratadb/strata/vfs"
	"github.com/stratadb/strata/vfs/errorfs"
	"github.com/stretchr/testify/require"
)

func followOptions(fsys vfs.FS) *Options {
	return &Options{FS: fsys, Follow: true, Logger: quietLogger}
}

// TestFollower follows a database through writes, a flush and a
// compaction that deletes the tables the follower's view reads.
func TestFollower(t *testing.T) {
	fsys := vfs.NewMem()
	dir := "/db"
	db, err := Open(dir, testOptions(fsys))
	require.NoError(t, err)
	defer db.Close()
	put := func(from, to int, tag string) {
		for i := from; i < to; i++ {
			require.NoError(t, db.Put(fmt.Appendf(nil, "key-%04d", i), []byte(tag), DefaultSync))
		}
	}
	put(0, 1000, "first")
	require.NoError(t, db.Flush())
	put(1000, 1200, "first")

	f, err := Open(dir, followOptions(fsys))
	require.NoError(t, err, "a follower takes no lock")
	defer f.Close()
	want := readAll(t, db)
	require.Equal(t, want, readAll(t, f))

	it, err := f.NewIterator(nil, nil)
	require.NoError(t, err)
	snap := f.NewSnapshot()

	put(0, 1200, "second")
	require.NoError(t, db.DeleteRange([]byte("key-0100"), []byte("key-0200"), DefaultSync))
	require.NoError(t, db.Flush())
	require.NoError(t, db.Compact()) // deletes the tables the follower reads
	require.Equal(t, want, readAll(t, f), "before CatchUp the view stays")

	// A checkpoint of the view finds its tables gone: it catches up.
	require.NoError(t, f.Checkpoint("/ckpt"))
	c, err := Open("/ckpt", testOptions(fsys))
	require.NoError(t, err)
	require.Equal(t, readAll(t, db), readAll(t, c))
	require.NoError(t, c.Close())

	require.NoError(t, f.CatchUp())
	require.Equal(t, readAll(t, db), readAll(t, f), "after CatchUp")

	// What was taken before the catch-up keeps its view, though the
	// writer deleted its tables and the follower moved on.
	n := 0
	for _, v := range it.All() {
		require.Equal(t, "first", string(v))
		n++
	}
	require.NoError(t, it.Err())
	require.Equal(t, 1200, n)
	require.NoError(t, it.Close())
	v, err := snap.Get([]byte("key-0150"))
	require.NoError(t, err)
	require.Equal(t, "first", string(v))
	require.NoError(t, snap.Release())

	for name, err := range map[string]error{
		"Put":     f.Put([]byte("k"), []byte("v"), DefaultSync),
		"Delete":  f.Delete([]byte("k"), DefaultSync),
		"Flush":   f.Flush(),
		"Compact": f.Compact(),
	} {
		require.ErrorIs(t, err, ErrReadOnly, name)
	}
	require.NoError(t, db.CatchUp(), "a writer is always caught up")

	// The follower's Close leaves the writer's directory alone.
	require.NoError(t, f.Close())
	require.ErrorIs(t, f.CatchUp(), ErrClosed)
	put(1200, 1300, "third")
	require.NoError(t, db.Close())
	db, err = Open(dir, testOptions(fsys))
	require.NoError(t, err)
	got, err := db.Get([]byte("key-1299"))
	require.NoError(t, err)
	require.Equal(t, "third", string(got))
}

func TestFollowerOfNoDatabase(t *testing.T) {
	fsys := vfs.NewMem()
	require.NoError(t, fsys.MkdirAll("/empty", 0o755))
	_, err := Open("/empty", followOptions(fsys))
	require.ErrorIs(t, err, ErrNotDB)
	names, err := fsys.List("/empty")
	require.NoError(t, err)
	require.Empty(t, names, "a follower creates nothing")
}

// TestVerifyOpenDatabase verifies a database its own process holds open.
func TestVerifyOpenDatabase(t *testing.T) {
	fsys := vfs.NewMem()
	o := testOptions(fsys)
	o.DisableAutoCompaction = true // the damaged table stays
	db, err := Open("/db", o)
	require.NoError(t, err)
	defer db.Close()
	for i := range 3000 {
		require.NoError(t, db.Put(fmt.Appendf(nil, "key-%05d", i%700), fmt.Appendf(nil, "value-%d", i), DefaultSync))
	}
	require.NoError(t, db.Flush())
	report, err := Verify("/db", &Options{FS: fsys}, nil)
	require.NoError(t, err)
	require.Empty(t, report.Damage)
	require.Positive(t, report.Tables)

	// Damage the writer has too is reported: a flipped byte in a table.
	names, err := fsys.List("/db")
	require.NoError(t, err)
	for _, name := range names {
		if kind, _ := filenames.Parse(name); kind == filenames.Table {
			data := readDirFiles(t, fsys, "/db")[name]
			data[100] ^= 0x10
			w, err := fsys.Create("/db/" + name)
			require.NoError(t, err)
			_, err = w.Write(data)
			require.NoError(t, err)
			require.NoError(t, w.Close())
			break
		}
	}
	report, err = Verify("/db", &Options{FS: fsys}, nil)
	require.NoError(t, err)
	require.NotEmpty(t, report.Damage)
	require.ErrorIs(t, report.Damage[0], ErrCorruption)
}

// TestFollowerWhileWriting follows a database that writers change all the
// time, flushing and compacting: every view a catch-up installs is the
// database after some prefix of the acknowledged batches, at least those
// acknowledged before it began, and never older than the view before.
func TestFollowerWhileWriting(t *testing.T) {
	const keys = 300
	wantViews := 20
	if testseed.Long() {
		wantViews = 500
	}
	fsys := vfs.NewMem()
	db, err := Open("/db", testOptions(fsys))
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.Put([]byte("last"), []byte("-1"), DefaultSync))
	f, err := Open("/db", followOptions(fsys))
	require.NoError(t, err)
	defer f.Close()

	var acked atomic.Int64 // batches [0, acked) returned
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			b := db.NewBatch()
			b.Put(fmt.Appendf(nil, "k%03d", i%keys), []byte(strconv.Itoa(i)))
			b.Put([]byte("last"), []byte(strconv.Itoa(i)))
			if err := db.Write(b, NoSync); err != nil {
				t.Errorf("write %d: %v", i, err)
				return
			}
			acked.Store(int64(i + 1))
		}
	}()
	views, outpaced, prev := 0, 0, 0
	wg.Add(1)
	go func() { // reads during the catch-ups
		defer wg.Done()
		for !stop.Load() {
			if _, err := f.Get([]byte("last")); err != nil {
				t.Errorf("a read during catch-ups: %v", err)
				return
			}
		}
	}()
	defer wg.Wait()
	defer stop.Store(true)
	for views < wantViews {
		floor := acked.Load()
		err := f.CatchUp()
		if errors.Is(err, ErrOutpaced) {
			outpaced++
			continue
		}
		require.NoError(t, err)
		m, err := scanAll(f)
		require.NoError(t, err)
		j, err := strconv.Atoi(m["last"])
		require.NoError(t, err)
		n := j + 1 // the view holds batches [0, n)
		require.GreaterOrEqual(t, int64(n), floor, "a view older than the acknowledged writes")
		require.GreaterOrEqual(t, n, prev, "a view older than the one before")
		require.LessOrEqual(t, int64(n), acked.Load()+1)
		for k := range keys {
			key := fmt.Sprintf("k%03d", k)
			last := n - 1 - (n-1-k)%keys // the last batch below n that wrote key
			if n <= k {
				require.NotContains(t, m, key)
			} else {
				require.Equal(t, strconv.Itoa(last), m[key], "view of %d batches, key %s", n, key)
			}
		}
		prev = n
		views++
	}
	t.Logf("%d views checked, up to %d batches; %d catch-ups outpaced", views, prev, outpaced)
}

// A follower's snapshot holds the view it was taken in, which a CatchUp
// replaces: its Release then drops the view's last reference but for its
// reads'. Reads racing the Release must get the snapshot's value or
// ErrClosed, never a view already released, whose memstore is unmapped.
// (A read that checked the snapshot, then took its reference after the
// Release, once faulted the process.)
func TestFollowerSnapshotReleaseDuringReads(t *testing.T) {
	rounds := 1000
	if testseed.Long() {
		rounds = 20000
	}
	fsys := vfs.NewMem()
	db, err := Open("/db", testOptions(fsys))
	require.NoError(t, err)
	defer db.Close()
	for i := range 200 {
		require.NoError(t, db.Put(fmt.Appendf(nil, "key-%03d", i), []byte("value"), NoSync))
	}
	f, err := Open("/db", followOptions(fsys))
	require.NoError(t, err)
	defer f.Close()

	var closedReads atomic.Int64
	for round := range rounds {
		snap := f.NewSnapshot()
		var wg sync.WaitGroup
		for r := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					key := fmt.Appendf(nil, "key-%03d", (i*7+r)%200)
					var err error
					if i%5 == 4 {
						var it *Iterator
						if it, err = snap.NewIterator(key, nil); err == nil {
							if it.First() && string(it.Value()) != "value" {
								t.Errorf("round %d: iterator read %q", round, it.Value())
							}
							it.Close()
						}
					} else {
						var v []byte
						if v, err = snap.Get(key); err == nil && string(v) != "value" {
							t.Errorf("round %d: read %q", round, v)
						}
					}
					if errors.Is(err, ErrClosed) {
						closedReads.Add(1)
						return
					}
					if err != nil {
						t.Errorf("round %d: %v", round, err)
						return
					}
				}
			}()
		}
		require.NoError(t, f.CatchUp()) // the snapshot's view is no longer the follower's
		require.NoError(t, snap.Release())
		wg.Wait()
	}
	require.Positive(t, closedReads.Load())
}

// A follower's Close waits for a CatchUp under way, which ends with nil or
// ErrClosed: none reads the view or the tables Close releases.
func TestFollowerCloseDuringCatchUp(t *testing.T) {
	fsys := vfs.NewMem()
	db, err := Open("/db", testOptions(fsys))
	require.NoError(t, err)
	defer db.Close()
	putAcked(t, db, 0, 300)
	require.NoError(t, db.Flush())
	putAcked(t, db, 300, 400)
	for range 20 {
		f, err := Open("/db", followOptions(fsys))
		require.NoError(t, err)
		caught := make(chan error, 1)
		go func() {
			for {
				if err := f.CatchUp(); err != nil {
					caught <- err
					return
				}
			}
		}()
		require.NoError(t, db.Put([]byte("moving"), []byte("on"), NoSync))
		require.NoError(t, f.Close())
		require.ErrorIs(t, <-caught, ErrClosed)
	}
}

// followHook is an errorfs.Injector that fails nothing: it runs act before
// each of the follower's operations that match, so that a test changes the
// database at a chosen point of a catch-up.
type followHook struct {
	match func(op errorfs.Op, path string) bool
	act   func()
}

func (h *followHook) MaybeError(op errorfs.Op, path string) error {
	if h.match(op, path) {
		h.act()
	}
	return nil
}

// A writer that flushes faster than a follower captures must not outpace
// it: here every capture lists the directory just after a flush made the
// log it is about to read obsolete. That log is still whole, and the view
// of it and the tables of the mark is one moment. (Captures were once void
// after any flush, and a follower of a writer flushing every 10 ms failed
// with ErrOutpaced on a loaded machine.)
func TestFollowerCatchUpBesideFlushes(t *testing.T) {
	fsys := vfs.NewMem()
	o := testOptions(fsys)
	o.DisableAutoCompaction = true // no table a capture opens is deleted
	db, err := Open("/db", o)
	require.NoError(t, err)
	defer db.Close()
	next := 0
	put := func() {
		require.NoError(t, db.Put(fmt.Appendf(nil, "key-%05d", next), []byte("value"), NoSync))
		next++
	}
	for range 100 {
		put()
	}
	var armed atomic.Bool
	flushes := 0
	hook := &followHook{
		match: func(op errorfs.Op, _ string) bool { return op == errorfs.OpList && armed.Load() },
		act: func() {
			put()
			require.NoError(t, db.Flush())
			flushes++
		},
	}
	f, err := Open("/db", followOptions(errorfs.Wrap(fsys, hook)))
	require.NoError(t, err)
	defer f.Close()
	armed.Store(true)
	for range 5 {
		for range 100 {
			put()
		}
		floor := next
		require.NoError(t, f.CatchUp())
		m, err := scanAll(f)
		require.NoError(t, err)
		require.GreaterOrEqual(t, len(m), floor, "the view lacks writes made before the catch-up")
		for i := range len(m) {
			require.Contains(t, m, fmt.Sprintf("key-%05d", i), "the view is not a prefix of the writes")
		}
	}
	require.GreaterOrEqual(t, flushes, 5)
}

// A log a capture reads may be flushed and its file reused for a newer
// log under the read: the walk then reads the newer log's records, ends
// the log there, and would give a view without the rest of it. The walk
// finds the file no longer begins with the log's identity, and the
// capture starts over.
func TestFollowerLogRecycledUnderRead(t *testing.T) {
	fsys := vfs.NewMem()
	o := testOptions(fsys)
	o.MemstoreSize = 8 << 20 // the log holds all the writes below
	o.DisableAutoCompaction = true
	db, err := Open("/db", o)
	require.NoError(t, err)
	defer db.Close()
	const valueSize = 4000
	next := 0
	put := func(n int) {
		for range n {
			require.NoError(t, db.Put(fmt.Appendf(nil, "key-%05d", next), make([]byte, valueSize), NoSync))
			next++
		}
	}
	// Three buffers' worth of records in the log, and a hook on the reads
	// of the catch-up's walk: before its second read, the log is flushed,
	// its file reused for a newer log, and that one filled past where the
	// walk has read, and closed (which cuts the file to its length).
	put(3 * recordio.DefaultBufferSize / valueSize)
	floor := next
	var reads atomic.Int64
	recycled := false
	hook := &followHook{
		match: func(op errorfs.Op, path string) bool {
			return op == errorfs.OpReadAt && strings.HasSuffix(path, ".log") && reads.Add(1) == 2
		},
		act: func() {
			require.NoError(t, db.Flush()) // the log read is obsolete, its file kept for reuse
			put(1)
			require.NoError(t, db.Flush()) // the next log is in the file read
			put(2 * recordio.DefaultBufferSize / valueSize)
			require.NoError(t, db.Flush()) // which is closed
			recycled = true
		},
	}
	f, err := Open("/db", followOptions(errorfs.Wrap(fsys, hook)))
	require.NoError(t, err)
	defer f.Close()
	require.True(t, recycled, "the hook did not run")
	m, err := scanAll(f)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(m), floor, "the view lacks writes made before the follower opened")
	for i := range len(m) {
		require.Contains(t, m, fmt.Sprintf("key-%05d", i), "the view is not a prefix of the writes")
	}
}
