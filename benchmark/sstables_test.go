package benchmark

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stratadb/strata/benchmark/internal/benchdata"
	"github.com/stratadb/strata/sstables"
)

// sstableValueSize is go-sstables' value size for its table benchmarks.
const sstableValueSize = 1024

// sstableKey is go-sstables' key i: the SHA-1 of i as a big-endian uint32.
func sstableKey(i uint32) []byte {
	sum := sha1.Sum(binary.BigEndian.AppendUint32(nil, i))
	return sum[:]
}

// sstableValue is benchdata's value i, 1024 bytes: it starts with i, so
// every read can be checked. Every value differs, and none compresses:
// go-sstables repeats one value, which a compressing table shrinks
// sevenfold and a per-file-byte figure then undercounts.
func sstableValue(i uint32) []byte {
	return benchdata.AppendValue(make([]byte, 0, sstableValueSize), uint64(i), sstableValueSize)
}

// benchTable is a table built once per process and shared by benchmarks.
type benchTable struct {
	path string
	keys [][]byte // sorted
	ids  []uint32 // ids[j] is the i whose key is keys[j]
}

var (
	tablesMu sync.Mutex
	tables   = map[string]*benchTable{}
)

func tableCompressions() []struct {
	name string
	c    sstables.Compression
} {
	return []struct {
		name string
		c    sstables.Compression
	}{{"snappy", sstables.SnappyCompression}, {"none", sstables.NoCompression}}
}

// sharedTable builds (once) a table of about size bytes of go-sstables'
// data with default options but the given compression and a bloom filter.
func sharedTable(b *testing.B, size int64, c sstables.Compression) *benchTable {
	tablesMu.Lock()
	defer tablesMu.Unlock()
	id := fmt.Sprintf("%d-%d", size, c)
	if t, ok := tables[id]; ok {
		return t
	}
	n := uint32(size / (20 + sstableValueSize))
	t := &benchTable{path: filepath.Join(sharedDir, id+".sst")}
	type kv struct {
		key []byte
		i   uint32
	}
	all := make([]kv, n)
	for i := range n {
		all[i] = kv{sstableKey(i), i}
	}
	slices.SortFunc(all, func(a, b kv) int { return bytes.Compare(a.key, b.key) })
	w, err := sstables.NewWriter(t.path, &sstables.WriterOptions{Compression: c, BlockSize: 16 << 10})
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range all {
		if err := w.Add(e.key, sstableValue(e.i)); err != nil {
			b.Fatal(err)
		}
		t.keys = append(t.keys, e.key)
		t.ids = append(t.ids, e.i)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	tables[id] = t
	return t
}

// BenchmarkSSTableScanDefault is go-sstables' table read: one op opens a
// table and scans every record. MB/s counts file bytes; open-µs is the
// open's share, index-bytes what the index takes in memory.
func BenchmarkSSTableScanDefault(b *testing.B) {
	for _, comp := range tableCompressions() {
		for _, fs := range fileSizes() {
			b.Run(comp.name+"/"+fs.name, func(b *testing.B) {
				t := sharedTable(b, fs.bytes, comp.c)
				var opening time.Duration
				var meta sstables.Metadata
				var indexBytes int
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					start := time.Now()
					r, err := sstables.Open(t.path, nil)
					if err != nil {
						b.Fatal(err)
					}
					opening += time.Since(start)
					meta, indexBytes = r.Metadata(), r.IndexSize()
					scanTable(b, r, t, false)
					r.Close()
				}
				b.SetBytes(int64(meta.FileSize))
				b.ReportMetric(float64(opening.Microseconds())/float64(b.N), "open-µs")
				b.ReportMetric(float64(indexBytes), "index-bytes")
				b.ReportMetric(float64(meta.Records), "records")
			})
		}
	}
}

// BenchmarkSSTableScanBackward: one op scans an open 64 MB table from the
// last record down, checking every value, in alternating turns with a
// forward scan, the baseline (see pair).
func BenchmarkSSTableScanBackward(b *testing.B) {
	for _, comp := range tableCompressions() {
		b.Run(comp.name+"/64mb", func(b *testing.B) {
			t := sharedTable(b, 64<<20, comp.c)
			r, err := sstables.Open(t.path, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			p := newPair(b, int64(r.Metadata().FileSize))
			for range b.N {
				p.candidate(func() { scanTable(b, r, t, true) })
				p.baseline(func() { scanTable(b, r, t, false) })
			}
			p.report()
			p.reportRate(len(t.keys), "entries/s")
		})
	}
}

// scanTable scans every record of t, open in r, forward or backward, and
// checks each value.
func scanTable(b *testing.B, r *sstables.Reader, t *benchTable, backward bool) {
	it := r.NewIterator(nil)
	defer it.Close()
	entries, j, step := it.All(), 0, 1
	if backward {
		entries, j, step = it.Backward(), len(t.ids)-1, -1
	}
	n := 0
	for k, v := range entries {
		if len(k) != 20 || j < 0 || j >= len(t.ids) {
			b.Fatalf("bad entry %d", n)
		}
		checkValue(b, v, uint64(t.ids[j]), sstableValueSize)
		j += step
		n++
	}
	if err := it.Err(); err != nil {
		b.Fatal(err)
	}
	if n != len(t.keys) {
		b.Fatalf("scanned %d records, want %d", n, len(t.keys))
	}
}

// BenchmarkSSTableRandomReadDefault: one op is a Get of a random key of an
// open table, its value checked.
func BenchmarkSSTableRandomReadDefault(b *testing.B) {
	for _, comp := range tableCompressions() {
		for _, fs := range fileSizes() {
			b.Run(comp.name+"/"+fs.name, func(b *testing.B) {
				t := sharedTable(b, fs.bytes, comp.c)
				r, err := sstables.Open(t.path, nil)
				if err != nil {
					b.Fatal(err)
				}
				defer r.Close()
				rng := rand.New(rand.NewPCG(1, 2))
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					j := rng.IntN(len(t.keys))
					v, err := r.Get(t.keys[j])
					if err != nil {
						b.Fatal(err)
					}
					checkValue(b, v, uint64(t.ids[j]), sstableValueSize)
				}
			})
		}
	}
}
