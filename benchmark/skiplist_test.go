package benchmark

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/btree"
	"github.com/stratadb/strata/skiplist"
)

// btreeDegree is the google/btree degree of the baseline. On the 1M-key data
// set, degrees 8 and 16 were clearly slower; 32, 64 and 128 were within the
// machine's noise of each other.
const btreeDegree = 32

// orderedKV is an ordered map of byte slices: the skiplist or the btree
// baseline, so that each benchmark runs the same code against both.
type orderedKV interface {
	// put sets key to value, replacing an existing value.
	put(key, value []byte)
	get(key []byte) ([]byte, bool)
	// scan visits every entry in key order and returns how many there are.
	scan() int
}

type skiplistKV struct{ m *skiplist.Map[[]byte, []byte] }

func newSkiplistKV() orderedKV {
	return skiplistKV{skiplist.NewBytes[[]byte](&skiplist.Options{Seed: kvSeed})}
}

func (s skiplistKV) put(key, value []byte)         { s.m.Upsert(key, value) }
func (s skiplistKV) get(key []byte) ([]byte, bool) { return s.m.Get(key) }
func (s skiplistKV) scan() int {
	n := 0
	for range s.m.All() {
		n++
	}
	return n
}

type kvItem struct{ key, value []byte }

type btreeKV struct{ t *btree.BTreeG[kvItem] }

func newBTreeKV() orderedKV {
	return btreeKV{btree.NewG(btreeDegree, func(a, b kvItem) bool { return bytes.Compare(a.key, b.key) < 0 })}
}

func (t btreeKV) put(key, value []byte) { t.t.ReplaceOrInsert(kvItem{key, value}) }
func (t btreeKV) get(key []byte) ([]byte, bool) {
	it, ok := t.t.Get(kvItem{key: key})
	return it.value, ok
}
func (t btreeKV) scan() int {
	n := 0
	t.t.Ascend(func(kvItem) bool {
		n++
		return true
	})
	return n
}

// lockedKV guards an orderedKV with a sync.RWMutex: the usual way to share
// a btree between a writer and readers.
type lockedKV struct {
	mu sync.RWMutex
	kv orderedKV
}

func (l *lockedKV) put(key, value []byte) {
	l.mu.Lock()
	l.kv.put(key, value)
	l.mu.Unlock()
}

func (l *lockedKV) get(key []byte) ([]byte, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.kv.get(key)
}

func (l *lockedKV) scan() int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.kv.scan()
}

// BenchmarkSkiplist compares the skiplist with google/btree on 1M random
// 16-byte keys with 100-byte values. One op is one insert, one get, or one
// full iteration of the 1M entries.
func BenchmarkSkiplist(b *testing.B) {
	kinds := []struct {
		name string
		new  func() orderedKV
	}{
		{"skiplist", newSkiplistKV},
		{"btree", newBTreeKV},
	}
	for _, op := range []struct {
		name  string
		bench func(*testing.B, func() orderedKV)
	}{
		{"Insert", benchInsert},
		{"GetHit", benchGetHit},
		{"GetMiss", benchGetMiss},
		{"Iterate", benchIterate},
	} {
		b.Run(op.name, func(b *testing.B) {
			for _, k := range kinds {
				b.Run(k.name, func(b *testing.B) { op.bench(b, k.new) })
			}
		})
	}
	b.Run("ConcurrentReadsDuringInsert", func(b *testing.B) {
		b.Run("skiplist", concurrentReadsBench(newSkiplistKV()))
		b.Run("btree-rwmutex", concurrentReadsBench(&lockedKV{kv: newBTreeKV()}))
	})
}

// fill puts the whole data set into a new map.
func fill(newKV func() orderedKV) orderedKV {
	d := kvData()
	kv := newKV()
	for i, k := range d.keys {
		kv.put(k, d.values[i])
	}
	return kv
}

// benchInsert inserts the keys in turn into a map, starting a fresh map,
// outside the timer, after every 1M inserts. It reports inserts/s, not
// MB/s: the maps keep the caller's slices and copy no key or value bytes.
func benchInsert(b *testing.B, newKV func() orderedKV) {
	d := kvData()
	kv, i := newKV(), 0
	for b.Loop() {
		if i == kvCount {
			b.StopTimer()
			kv, i = nil, 0
			runtime.GC()
			kv = newKV()
			b.StartTimer()
		}
		kv.put(d.keys[i], d.values[i])
		i++
	}
	if kv.scan() != i {
		b.Fatalf("map holds %d entries after %d inserts", kv.scan(), i)
	}
	reportOpsPerSecond(b, b.N, "inserts/s")
}

// benchGetHit looks up the keys of a full map in random order and checks
// each value.
func benchGetHit(b *testing.B, newKV func() orderedKV) {
	d := kvData()
	kv := fill(newKV)
	i := 0
	for b.Loop() {
		j := d.order[i]
		v, ok := kv.get(d.keys[j])
		if !ok || &v[0] != &d.values[j][0] {
			b.Fatalf("get %x: wrong value", d.keys[j])
		}
		i = (i + 1) % kvCount
	}
	reportOpsPerSecond(b, b.N, "gets/s")
}

// benchGetMiss looks up keys that a full map does not hold.
func benchGetMiss(b *testing.B, newKV func() orderedKV) {
	d := kvData()
	kv := fill(newKV)
	i := 0
	for b.Loop() {
		if _, ok := kv.get(d.misses[i]); ok {
			b.Fatalf("get %x: found a missing key", d.misses[i])
		}
		i = (i + 1) % kvCount
	}
	reportOpsPerSecond(b, b.N, "gets/s")
}

// benchIterate scans a full map from first to last entry. It reports
// entries/s, not MB/s: a scan visits entries without reading their bytes.
func benchIterate(b *testing.B, newKV func() orderedKV) {
	kv := fill(newKV)
	for b.Loop() {
		if n := kv.scan(); n != kvCount {
			b.Fatalf("scan saw %d entries, want %d", n, kvCount)
		}
	}
	reportOpsPerSecond(b, b.N*kvCount, "entries/s")
}

// concurrentReadsBench returns a benchmark in which GOMAXPROCS readers get
// random keys of a full map while one writer puts keys it does not hold
// (and, once those run out, replaces their values). It reports the reads
// and writes per second. The map is filled once and kept across the
// benchmark's rounds; the writer carries on where the last round stopped.
func concurrentReadsBench(kv orderedKV) func(*testing.B) {
	var filled sync.Once
	written := 0
	return func(b *testing.B) {
		d := kvData()
		filled.Do(func() {
			for i, k := range d.keys {
				kv.put(k, d.values[i])
			}
		})
		var stop atomic.Bool
		writes := 0
		writerDone := make(chan struct{})
		go func() {
			defer close(writerDone)
			for ; !stop.Load(); writes++ {
				j := (written + writes) % kvCount
				kv.put(d.misses[j], d.values[j])
			}
		}()
		var reader atomic.Uint64
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			rng := rand.New(rand.NewPCG(kvSeed, reader.Add(1)))
			for pb.Next() {
				j := rng.IntN(kvCount)
				v, ok := kv.get(d.keys[j])
				if !ok || &v[0] != &d.values[j][0] {
					b.Errorf("get %x: wrong value", d.keys[j])
					return
				}
			}
		})
		b.StopTimer()
		stop.Store(true)
		<-writerDone
		written += writes
		reportOpsPerSecond(b, b.N, "reads/s")
		reportOpsPerSecond(b, writes, "writes/s")
	}
}
