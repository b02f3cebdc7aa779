package simpledb

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/testseed"
	"github.com/stratadb/strata/vfs"
	"github.com/stretchr/testify/require"
)

// A snapshot taken while a flush waits for the last writes to its memstore
// to be applied keeps its view: the flush must read the list of snapshots
// only once those writes are in.
func TestSnapshotTakenWhileFlushWaits(t *testing.T) {
	db, err := openQuiet(vfs.NewMem())
	require.NoError(t, err)
	defer db.Close()
	key := []byte("k")
	require.NoError(t, db.Put(key, []byte("old"), DefaultSync))

	// Hold a write back between its append and its publication, where a
	// commit group is while its leader has not yet published it.
	db.commits.log.mu.Lock()
	mt := db.mu.memstores.active()
	db.commits.log.lastSeq++
	seq := db.commits.log.lastSeq
	mt.writes.Add(1)
	mt.appended++
	db.commits.log.mu.Unlock()

	flushed := make(chan error, 1)
	go func() { flushed <- db.Flush() }()
	require.Eventually(t, func() bool {
		db.mu.Lock()
		defer db.mu.Unlock()
		return db.mu.memstores.immutable() == 1
	}, 5*time.Second, time.Millisecond, "the flush freezes the memstore")
	time.Sleep(20 * time.Millisecond) // and waits for the held-back write
	snap := db.NewSnapshot()
	defer snap.Release()

	require.NoError(t, mt.m.Apply(seq, base.KindSet, key, []byte("new")))
	db.commits.visibleSeq.Store(seq)
	mt.writes.Done()
	require.NoError(t, <-flushed)

	v, err := snap.Get(key)
	require.NoError(t, err)
	require.Equal(t, "old", string(v), "the snapshot's version survives the flush")
	v, err = db.Get(key)
	require.NoError(t, err)
	require.Equal(t, "new", string(v))
}

// Reads stay consistent while flushes replace the read state under them:
// a snapshot reads the same value before and after a flush, and a Get
// never returns a value older than one it returned before.
func TestReadsAcrossFlushes(t *testing.T) {
	duration := 500 * time.Millisecond
	if testseed.Long() {
		duration = 20 * time.Second
	}
	db, err := openQuiet(vfs.NewMem())
	require.NoError(t, err)
	defer db.Close()

	const writers = 8
	key := func(w int) []byte { return fmt.Appendf(nil, "k%d", w) }
	for w := range writers {
		require.NoError(t, db.Put(key(w), []byte("0"), DefaultSync))
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	// Each writer overwrites its own key with ever larger numbers.
	for w := range writers {
		wg.Go(func() {
			for i := 1; !stop.Load(); i++ {
				if err := db.Put(key(w), strconv.AppendInt(nil, int64(i), 10), NoSync); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for !stop.Load() {
			if err := db.Flush(); err != nil {
				t.Error(err)
				return
			}
		}
	})
	var checks atomic.Int64
	for r := range 4 {
		wg.Go(func() {
			last := make([]int64, writers)
			for i := 0; !stop.Load(); i++ {
				w := (r + i) % writers
				snap := db.NewSnapshot()
				before, err := snap.Get(key(w))
				if err == nil {
					err = db.Flush()
				}
				var after, now []byte
				if err == nil {
					after, err = snap.Get(key(w))
				}
				if err == nil {
					now, err = db.Get(key(w))
				}
				snap.Release()
				if err != nil {
					t.Error(err)
					return
				}
				if string(before) != string(after) {
					t.Errorf("a snapshot read %s as %s, then after a flush as %s", key(w), before, after)
					return
				}
				n, _ := strconv.ParseInt(string(now), 10, 64)
				if n < last[w] {
					t.Errorf("Get read %s as %d, then as %d", key(w), last[w], n)
					return
				}
				last[w] = n
				checks.Add(1)
			}
		})
	}
	time.Sleep(duration)
	stop.Store(true)
	wg.Wait()
	t.Logf("%d checks", checks.Load())
}

// A snapshot of an empty database sees nothing written after it, from the
// memstore or, once flushed, from a table.
func TestSnapshotOfEmptyDB(t *testing.T) {
	db, err := Open(t.TempDir(), nil)
	require.NoError(t, err)
	defer db.Close()
	snap := db.NewSnapshot()
	defer snap.Release()
	require.NoError(t, db.Put([]byte("a"), []byte("1"), DefaultSync))
	for _, flush := range []bool{false, true} {
		if flush {
			require.NoError(t, db.Flush())
		}
		_, err := snap.Get([]byte("a"))
		require.ErrorIs(t, err, ErrNotFound)
		it, err := snap.NewIterator(nil, nil)
		require.NoError(t, err)
		require.False(t, it.First(), "flushed: %v", flush)
		require.NoError(t, it.Close())
	}
}

// After Close, a snapshot's reads return ErrClosed, as the docs say, while
// an iterator made from it before goes on.
func TestSnapshotAfterClose(t *testing.T) {
	db, err := Open("/db", &Options{FS: vfs.NewMem(), Logger: quietLogger})
	require.NoError(t, err)
	require.NoError(t, db.Put([]byte("k"), []byte("v"), DefaultSync))
	snap := db.NewSnapshot()
	it, err := snap.NewIterator(nil, nil)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	_, err = snap.Get([]byte("k"))
	require.ErrorIs(t, err, ErrClosed)
	_, err = snap.NewIterator(nil, nil)
	require.ErrorIs(t, err, ErrClosed)
	require.True(t, it.First())
	require.Equal(t, "k", string(it.Key()))
	require.Equal(t, "v", string(it.Value()))
	require.NoError(t, it.Close())
	require.NoError(t, snap.Release())
}
