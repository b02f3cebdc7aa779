package sstables

import (
	"math/rand/v2"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// A window opens the slots with three hits in four or more, and closes
// them with fewer, whatever they were; they hold until the window ends.
func TestReadGateWindows(t *testing.T) {
	tests := []struct {
		name string
		hits int
		open bool
	}{
		{"every read hits", gateWindow, true},
		{"three in four", gateHitsToOpen, true},
		{"one fewer", gateHitsToOpen - 1, false},
		{"none", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, was := range []bool{false, true} {
				var g readGate
				g.slots.Store(was)
				for i := range gateWindow - 1 {
					_, ended := g.note(i < tt.hits)
					require.False(t, ended)
				}
				require.Equal(t, was, g.slots.Load())
				hits, ended := g.note(gateWindow-1 < tt.hits)
				require.True(t, ended)
				require.Equal(t, tt.hits, hits)
				g.decide(hits, 1, 1)
				require.Equal(t, tt.open, g.slots.Load())
				require.Zero(t, g.notes.Load(), "the window is taken away whole")
			}
		})
	}
}

// fits holds where the hits' rate, scaled by the cache's capacity over
// what it held during the window (the mean of its ends), is three in four
// or more: the rate a full cache would see.
func TestReadGateFits(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		name           string
		hits           int
		before, cached int64 // bytes cached at the window's start and end
		capacity       int64
		fits           bool
	}{
		{"an empty cache", 0, 0, 0, 256 * mib, true},
		{"the first window of data half the cache", 72, 0, 32 * mib, 256 * mib, true},
		{"the first window of data four times the cache", 6, 0, 12 * mib, 256 * mib, false},
		{"a full cache, three in four hits", gateHitsToOpen, 256 * mib, 256 * mib, 256 * mib, true},
		{"a full cache, one fewer", gateHitsToOpen - 1, 256 * mib, 256 * mib, 256 * mib, false},
		{"half full, half the rate needed", gateHitsToOpen / 2, 128 * mib, 128 * mib, 256 * mib, true},
		{"half full, less", gateHitsToOpen/2 - 1, 128 * mib, 128 * mib, 256 * mib, false},
		{"no hits", 0, mib, mib, 256 * mib, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var g readGate
			g.cached.Store(tt.before)
			g.decide(tt.hits, tt.cached, tt.capacity)
			require.Equal(t, tt.fits, g.fits.Load())
			require.Equal(t, tt.cached, g.cached.Load())
		})
	}
}

// Reads noting at once lose no note: the one read that completes a window
// takes away that window alone, and reports its hits.
func TestReadGateConcurrentNotes(t *testing.T) {
	const readers, each = 4, 3*gateWindow + 100
	var g readGate
	var windows, hits atomic.Int64
	for _, hit := range []bool{true, false} {
		var wg sync.WaitGroup
		for range readers {
			wg.Go(func() {
				for range each {
					if h, ended := g.note(hit); ended {
						windows.Add(1)
						hits.Add(int64(h))
					}
				}
			})
		}
		wg.Wait()
	}
	notes := g.notes.Load()
	require.Equal(t, int64(2*readers*each), windows.Load()*gateWindow+int64(uint32(notes)))
	require.Equal(t, int64(readers*each), hits.Load()+int64(notes>>32))
}

// A cache's point reads go through their Readers' slots while they mostly
// find their blocks cached, as they do from the start, and stop when they
// mostly miss; closed, the gate keeps the reads away from the slots.
func TestReaderReadGate(t *testing.T) {
	es := randomEntries(rand.New(rand.NewPCG(3, 4)), 3000)
	path := filepath.Join(t.TempDir(), "t.sst")
	writeTable(t, path, &WriterOptions{BlockSize: 256}, es)
	cache := NewCache(hintedCache)
	r, err := Open(path, &ReaderOptions{Cache: cache})
	require.NoError(t, err)
	defer r.Close()

	// Reads of these keys are all noted.
	var keys []entry
	for _, e := range es {
		if sampled(r.hash(e.key)) {
			keys = append(keys, e)
		}
	}
	require.Greater(t, len(keys), 100)
	read := func(n int, evict bool) {
		for i := range n {
			if evict {
				cache.EvictTable(r.id)
			}
			e := keys[i%len(keys)]
			_, _, err := r.Find(e.key, e.seq, nil)
			require.NoError(t, err)
		}
	}

	// Open from the start: the reads slot the blocks they cache (but
	// those only keys the numbers cannot place read: TestReaderBlockSlots).
	require.True(t, cache.gate.slots.Load())
	read(len(keys), false)
	require.Greater(t, slotted(r), cache.Stats().Blocks/2)

	// Every read misses once the table's blocks go before each: a window
	// of them closes the gate. Closed, the reads cache their blocks and
	// slot none.
	// Nor would a full cache hold what they read: the blocks they cache
	// get no hints.
	read(2*gateWindow, true)
	require.False(t, cache.gate.slots.Load())
	require.False(t, cache.gate.fits.Load())
	cache.EvictTable(r.id)
	read(len(keys), false)
	require.Zero(t, slotted(r))
	require.Greater(t, cache.Stats().Blocks, 10)
	require.Zero(t, hintedBlocks(cache))

	// The window that held those reads' first misses closes it again;
	// the next, all hits, opens it, and the blocks cached then get hints.
	read(2*gateWindow, false)
	require.True(t, cache.gate.slots.Load())
	require.True(t, cache.gate.fits.Load())
	read(len(keys), false)
	require.Greater(t, slotted(r), cache.Stats().Blocks/2)
	cache.EvictTable(r.id)
	read(len(keys), false)
	require.Equal(t, cache.Stats().Blocks, hintedBlocks(cache))
}

// hintedBlocks counts the blocks cache holds with their hints.
func hintedBlocks(cache *Cache) int {
	n := 0
	for i := range cache.shards {
		s := &cache.shards[i]
		s.mu.Lock()
		for _, e := range s.entries {
			if e.hints.keys != nil {
				n++
			}
		}
		s.mu.Unlock()
	}
	return n
}
