package simpledb

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/vfs"
	"github.com/stratadb/strata/vfs/errorfs"
	"github.com/stretchr/testify/require"
)

// createGate holds back the creation of files whose path ends in a suffix
// until it is released.
type createGate struct {
	mu     sync.Mutex
	suffix string
	open   chan struct{}
}

func (g *createGate) block(suffix string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.suffix, g.open = suffix, make(chan struct{})
}

func (g *createGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open != nil {
		close(g.open)
		g.suffix, g.open = "", nil
	}
}

func (g *createGate) wait(op errorfs.Op, path string) {
	g.mu.Lock()
	suffix, open := g.suffix, g.open
	g.mu.Unlock()
	if op == errorfs.OpCreate && open != nil && strings.HasSuffix(path, suffix) {
		<-open
	}
}

// Stats answers while a log rotates and while a writer is stalled: it
// waits for neither.
func TestStatsDoesNotWait(t *testing.T) {
	var gate createGate
	opts := smallOptions()
	opts.FS, opts.Logger = &hookFS{FS: vfs.NewMem(), before: gate.wait}, quietLogger
	opts.MemstoreSize, opts.MaxImmutableMemstores = MinMemstoreSize, 1
	db, err := Open("/db", opts)
	require.NoError(t, err)
	defer db.Close()
	defer gate.release() // before Close, should the test fail

	stats := func(what string) Stats {
		t.Helper()
		done := make(chan Stats, 1)
		go func() { done <- db.Stats() }()
		select {
		case s := <-done:
			return s
		case <-time.After(5 * time.Second):
			t.Fatalf("Stats blocked %s", what)
			return Stats{}
		}
	}

	// A rotation whose new log cannot be created yet.
	require.NoError(t, db.Put([]byte("k"), []byte("v"), DefaultSync))
	gate.block(".log")
	flushed := make(chan error, 1)
	go func() { flushed <- db.Flush() }()
	time.Sleep(20 * time.Millisecond)
	stats("during a log rotation")
	gate.release()
	require.NoError(t, <-flushed)

	// A writer stalled: one memstore awaits a flush that cannot create its
	// table, and the active one is full.
	gate.block(".sst.tmp")
	wrote := make(chan error, 1)
	var stop atomic.Bool
	go func() {
		var err error
		for i := 0; err == nil && !stop.Load(); i++ {
			err = db.Put([]byte{byte(i >> 8), byte(i)}, make([]byte, 200), DefaultSync)
		}
		wrote <- err
	}()
	require.Eventually(t, func() bool {
		db.mu.Lock()
		defer db.mu.Unlock()
		return db.mu.stats.stalls > 0
	}, 5*time.Second, time.Millisecond, "a writer stalls")
	s := stats("during a write stall")
	require.Equal(t, 1, s.ImmutableMemstores)
	require.Positive(t, s.Writes)
	stop.Store(true)
	gate.release()
	require.NoError(t, <-wrote)
}

// Writes counts batches, also those committed in a group with flush
// requests.
func TestStatsCountsWrites(t *testing.T) {
	opts := testOptions(vfs.NewMem())
	opts.NoSync = true
	db, err := Open("/db", opts)
	require.NoError(t, err)
	defer db.Close()
	const writers, each = 8, 200
	var wg sync.WaitGroup
	var stop atomic.Bool
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if err := db.Put([]byte{byte(w), byte(i)}, []byte("v"), DefaultSync); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	flushes := make(chan error, 1)
	go func() {
		var err error
		for err == nil && !stop.Load() {
			err = db.Flush()
		}
		flushes <- err
	}()
	wg.Wait()
	stop.Store(true)
	require.NoError(t, <-flushes)
	require.Equal(t, int64(writers*each), db.Stats().Writes)
}
