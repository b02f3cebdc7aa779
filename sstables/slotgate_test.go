package sstables

import (
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// A window opens the gate with three hits in four or more, and closes it
// with fewer, whatever it was; the gate holds until the window ends.
func TestSlotGateWindows(t *testing.T) {
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
				var g slotGate
				g.open.Store(was)
				for i := range gateWindow - 1 {
					g.note(i < tt.hits)
				}
				require.Equal(t, was, g.open.Load())
				g.note(gateWindow-1 < tt.hits)
				require.Equal(t, tt.open, g.open.Load())
				require.Zero(t, g.notes.Load(), "the window is taken away whole")
			}
		})
	}
}

// Reads noting at once lose no note: the one read that completes a window
// takes away that window alone.
func TestSlotGateConcurrentNotes(t *testing.T) {
	const readers, each = 4, 3*gateWindow + 100
	var g slotGate
	for _, hit := range []bool{true, false} {
		var wg sync.WaitGroup
		for range readers {
			wg.Go(func() {
				for range each {
					g.note(hit)
				}
			})
		}
		wg.Wait()
		require.Equal(t, hit, g.open.Load())
	}
	notes := g.notes.Load()
	require.Equal(t, 2*readers*each%gateWindow, int(uint32(notes)))
}

// A cache's point reads go through their Readers' slots while they mostly
// find their blocks cached, as they do from the start, and stop when they
// mostly miss; closed, the gate keeps the reads away from the slots.
func TestReaderSlotGate(t *testing.T) {
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
	require.True(t, cache.slotGate.open.Load())
	read(len(keys), false)
	require.Greater(t, slotted(r), cache.Stats().Blocks/2)

	// Every read misses once the table's blocks go before each: a window
	// of them closes the gate. Closed, the reads cache their blocks and
	// slot none.
	read(2*gateWindow, true)
	require.False(t, cache.slotGate.open.Load())
	cache.EvictTable(r.id)
	read(len(keys), false)
	require.Zero(t, slotted(r))
	require.Greater(t, cache.Stats().Blocks, 10)

	// The window that held those reads' first misses closes it again;
	// the next, all hits, opens it.
	read(2*gateWindow, false)
	require.True(t, cache.slotGate.open.Load())
	read(len(keys), false)
	require.Greater(t, slotted(r), cache.Stats().Blocks/2)
}
