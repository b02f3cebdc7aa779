package memstore

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stratadb/strata/internal/testseed"
	"github.com/stretchr/testify/require"
)

// scriptedWrites is a fixed sequence of writes, at sequence numbers 1 to n,
// whose state at any sequence number is known.
type scriptedWrites struct {
	keys  [][]byte
	keyOf []int  // keyOf[seq] indexes keys
	kinds []Kind // kinds[seq]
	// seqsOf[k] lists the sequence numbers that write keys[k], ascending.
	seqsOf [][]uint64
}

// newScriptedWrites returns n writes to numKeys keys named by format, which
// must order them as their numbers do.
func newScriptedWrites(rng *rand.Rand, n, numKeys int, format string) *scriptedWrites {
	s := &scriptedWrites{keyOf: make([]int, n+1), kinds: make([]Kind, n+1), seqsOf: make([][]uint64, numKeys)}
	for k := range numKeys {
		s.keys = append(s.keys, fmt.Appendf(nil, format, k))
	}
	for seq := 1; seq <= n; seq++ {
		k := rng.IntN(numKeys)
		s.keyOf[seq], s.kinds[seq] = k, KindSet
		if rng.IntN(5) == 0 {
			s.kinds[seq] = KindDelete
		}
		s.seqsOf[k] = append(s.seqsOf[k], uint64(seq))
	}
	return s
}

// valueOf returns the value written at seq: short, but now and then too
// large for a chunk.
func valueOf(seq uint64) []byte {
	v := fmt.Appendf(nil, "value%d", seq)
	if seq%97 == 0 {
		v = bytes.Repeat(v, arenaLargeEntry/len(v)+1)
	}
	return v
}

// at returns the sequence number of key k's newest write up to seq, 0 if
// there is none.
func (s *scriptedWrites) at(k int, seq uint64) uint64 {
	i, _ := slices.BinarySearch(s.seqsOf[k], seq+1)
	if i == 0 {
		return 0
	}
	return s.seqsOf[k][i-1]
}

// TestConcurrentReadersSeeSnapshots runs readers that read at the latest
// sequence number while a writer applies writes, and checks every read
// against the known state at the reader's sequence number: an iterator or a
// GetAt at sequence number s never sees a later write, and misses none up
// to s. Keys are short, or share a long prefix; the writer's chunks grow,
// so readers meet nodes in chunks added after they loaded the arena's
// table.
func TestConcurrentReadersSeeSnapshots(t *testing.T) {
	for _, format := range []string{"key%05d", "tenant-0001/table-00000042/user:%016d"} {
		t.Run(format, func(t *testing.T) { testConcurrentReadersSeeSnapshots(t, format) })
	}
}

func testConcurrentReadersSeeSnapshots(t *testing.T, format string) {
	seed := testseed.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 0))
	const n = 20_000
	script := newScriptedWrites(rng, n, 300, format)
	m := New(&Options{Seed: seed, OffHeap: seed%2 == 1})
	defer m.Release()

	var done atomic.Bool
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for r := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[r] = readSnapshots(m, script, &done, seed+uint64(r))
		}()
	}
	for seq := uint64(1); seq <= n; seq++ {
		require.NoError(t, m.Apply(seq, script.kinds[seq], script.keys[script.keyOf[seq]], valueOf(seq)))
	}
	done.Store(true)
	wg.Wait()
	for r, err := range errs {
		require.NoError(t, err, "reader %d", r)
	}
}

// readSnapshots reads m in passes until done, then once more, and returns
// the first read that disagrees with the script.
func readSnapshots(m *Memstore, script *scriptedWrites, done *atomic.Bool, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 1))
	for pass := 0; ; pass++ {
		last := done.Load()
		snap := m.LastSeq()
		if snap == 0 {
			// IterOptions.Seq 0 means "the latest", not "nothing".
			continue
		}

		// Point reads at the snapshot.
		for range 50 {
			k := rng.IntN(len(script.keys))
			got, found := m.GetAt(script.keys[k], snap)
			if err := checkRead(script, k, snap, got, found); err != nil {
				return fmt.Errorf("pass %d: GetAt: %w", pass, err)
			}
		}

		// The live view at the snapshot, read slowly, forward and
		// backward: the writer goes on meanwhile, landing entries between
		// those a backward walk has collected.
		want := script.liveAt(snap)
		it := m.NewIterator(&IterOptions{Seq: snap})
		if got := drain(it, it.First()); !slices.Equal(got, want) {
			return fmt.Errorf("pass %d: the iterator at %d: %v, want %v", pass, snap, got, want)
		}
		if got := drainBack(it, it.Last()); !slices.Equal(got, reversed(want)) {
			return fmt.Errorf("pass %d: the iterator at %d, backward: %v, want %v", pass, snap, got, reversed(want))
		}

		// The raw view at the snapshot over a random range: exactly the
		// writes up to the snapshot.
		lo := rng.IntN(len(script.keys))
		hi := lo + rng.IntN(len(script.keys)-lo+1)
		var upper []byte
		if hi < len(script.keys) {
			upper = script.keys[hi]
		}
		raw := m.NewEntryIterator(&IterOptions{LowerBound: script.keys[lo], UpperBound: upper, Seq: snap})
		ok := raw.First()
		for k := lo; k < hi; k++ {
			for i := len(script.seqsOf[k]) - 1; i >= 0; i-- {
				seq := script.seqsOf[k][i]
				if seq > snap {
					continue
				}
				if !ok || !bytes.Equal(raw.Key(), script.keys[k]) || raw.Seq() != seq || raw.Kind() != script.kinds[seq] {
					return fmt.Errorf("pass %d: entry iterator at %d: want %s@%d", pass, snap, script.keys[k], seq)
				}
				ok = raw.Next()
			}
		}
		if ok {
			return fmt.Errorf("pass %d: entry iterator at %d: unexpected %s@%d", pass, snap, raw.Key(), raw.Seq())
		}
		// And backward, through stacks that grow meanwhile.
		if fwd, back := drain(raw, raw.First()), drainBack(raw, raw.Last()); !slices.Equal(back, reversed(fwd)) {
			return fmt.Errorf("pass %d: entry iterator at %d, backward: %v, want %v", pass, snap, back, reversed(fwd))
		}
		if last {
			return nil
		}
	}
}

// liveAt returns the live view at seq.
func (s *scriptedWrites) liveAt(seq uint64) []seen {
	var out []seen
	for k, key := range s.keys {
		if at := s.at(k, seq); at != 0 && s.kinds[at] == KindSet {
			out = append(out, seen{string(key), at, KindSet, string(valueOf(at))})
		}
	}
	return out
}

// checkRead checks a read of key k at seq against the script.
func checkRead(script *scriptedWrites, k int, seq uint64, got []byte, found Result) error {
	want := script.at(k, seq)
	switch {
	case want == 0 && found != Absent:
		return fmt.Errorf("%s at %d: %v, want absent", script.keys[k], seq, found)
	case want != 0 && script.kinds[want] == KindDelete && found != Deleted:
		return fmt.Errorf("%s at %d: %v, want deleted", script.keys[k], seq, found)
	case want != 0 && script.kinds[want] == KindSet && (found != Found || !bytes.Equal(got, valueOf(want))):
		return fmt.Errorf("%s at %d: %v %q, want %q", script.keys[k], seq, found, got, valueOf(want))
	}
	return nil
}

// TestConcurrentWriters runs writers that Put at once, and readers that
// scan meanwhile: writes are serialised with distinct sequence numbers and
// none is lost.
func TestConcurrentWriters(t *testing.T) {
	const writers, perWriter = 4, 2000
	m := New(nil)
	var wg sync.WaitGroup
	var done atomic.Bool
	scanErr := make(chan error, 1)
	go func() {
		defer close(scanErr)
		for !done.Load() {
			var prev []byte
			for k := range m.All() {
				if prev != nil && bytes.Compare(prev, k) >= 0 {
					scanErr <- fmt.Errorf("scan went from %q to %q", prev, k)
					return
				}
				prev = k
			}
		}
	}()
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				if err := m.Put(fmt.Appendf(nil, "w%d/%05d", w, i), fmt.Appendf(nil, "%d", i)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	done.Store(true)
	require.NoError(t, <-scanErr)

	require.Equal(t, writers*perWriter, m.Len())
	require.Equal(t, uint64(writers*perWriter), m.LastSeq())
	seqs := map[uint64]bool{}
	it := m.NewEntryIterator(nil)
	for ok := it.First(); ok; ok = it.Next() {
		seqs[it.Seq()] = true
	}
	require.Len(t, seqs, writers*perWriter, "every write has its own sequence number")
}

// TestConcurrentReadersDuringAscendingInserts runs readers while a writer
// puts keys in ascending order, the inserts that skip their search: every
// key whose Put returned is found, and scans ascend and miss none.
func TestConcurrentReadersDuringAscendingInserts(t *testing.T) {
	seed := testseed.Seed(t)
	const n = 20_000
	key := func(i int) []byte { return fmt.Appendf(nil, "%016d", i) }
	m := New(&Options{Seed: seed})
	var published atomic.Int64
	var done atomic.Bool
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for r := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(r)))
			for {
				last := done.Load()
				p := int(published.Load())
				for range 20 {
					if p == 0 {
						break
					}
					i := rng.IntN(p)
					if v, res := m.Get(key(i)); res != Found || !bytes.Equal(v, valueOf(uint64(i+1))) {
						errs[r] = fmt.Errorf("Get(%s) after its Put returned: %v", key(i), res)
						return
					}
				}
				i := 0
				for k := range m.All() {
					if !bytes.Equal(k, key(i)) {
						errs[r] = fmt.Errorf("scan: %s where %s was due", k, key(i))
						return
					}
					i++
				}
				if i < p {
					errs[r] = fmt.Errorf("scan saw %d keys, %d were published", i, p)
					return
				}
				p = int(published.Load())
				var back [][]byte
				for k := range m.Backward() {
					back = append(back, k)
				}
				if len(back) < p {
					errs[r] = fmt.Errorf("backward scan saw %d keys, %d were published", len(back), p)
					return
				}
				for j, k := range back {
					if want := key(len(back) - 1 - j); !bytes.Equal(k, want) {
						errs[r] = fmt.Errorf("backward scan: %s where %s was due", k, want)
						return
					}
				}
				if last {
					return
				}
			}
		}()
	}
	for i := range n {
		require.NoError(t, m.Put(key(i), valueOf(uint64(i+1))))
		published.Store(int64(i + 1))
	}
	done.Store(true)
	wg.Wait()
	for r, err := range errs {
		require.NoError(t, err, "reader %d", r)
	}
}
