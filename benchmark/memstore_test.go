package benchmark

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/stratadb/strata/memstore"
)

// BenchmarkMemstore measures the memstore on 1M random 16-byte keys with
// 100-byte values: one op is one Put or one Get; Overhead reports the
// memory held per entry beyond its key and value bytes.
func BenchmarkMemstore(b *testing.B) {
	b.Run("Put", benchMemstorePut)
	b.Run("Get", benchMemstoreGet)
	b.Run("Overhead", benchMemstoreOverhead)
}

// fillMemstore puts the whole data set into a new memstore.
func fillMemstore(b *testing.B) *memstore.Memstore {
	d := kvData()
	m := memstore.New(&memstore.Options{Seed: kvSeed})
	for i, k := range d.keys {
		if err := m.Put(k, d.values[i]); err != nil {
			b.Fatal(err)
		}
	}
	return m
}

// benchMemstorePut puts the keys in turn into a memstore, starting a fresh
// one, outside the timer, after every 1M puts.
func benchMemstorePut(b *testing.B) {
	d := kvData()
	b.SetBytes(kvKeySize + kvValueSize)
	m, i := memstore.New(&memstore.Options{Seed: kvSeed}), 0
	for b.Loop() {
		if i == kvCount {
			b.StopTimer()
			m, i = nil, 0
			runtime.GC()
			m = memstore.New(&memstore.Options{Seed: kvSeed})
			b.StartTimer()
		}
		if err := m.Put(d.keys[i], d.values[i]); err != nil {
			b.Fatal(err)
		}
		i++
	}
	if m.Len() != i {
		b.Fatalf("memstore holds %d entries after %d puts", m.Len(), i)
	}
	reportOpsPerSecond(b, b.N, "puts/s")
}

// benchMemstoreGet gets the keys of a full memstore in random order and
// checks each value.
func benchMemstoreGet(b *testing.B) {
	d := kvData()
	m := fillMemstore(b)
	i := 0
	for b.Loop() {
		j := d.order[i]
		v, res := m.Get(d.keys[j])
		if res != memstore.Found || !bytes.Equal(v, d.values[j]) {
			b.Fatalf("get %x: %v, wrong value", d.keys[j], res)
		}
		i = (i + 1) % kvCount
	}
	reportOpsPerSecond(b, b.N, "gets/s")
}

// benchMemstoreOverhead fills a memstore with the data set (one op) and
// reports SizeBytes per entry beyond the entry's key and value bytes.
func benchMemstoreOverhead(b *testing.B) {
	var m *memstore.Memstore
	for b.Loop() {
		m = fillMemstore(b)
	}
	const payload = kvCount * (kvKeySize + kvValueSize)
	b.ReportMetric(float64(m.SizeBytes()-payload)/kvCount, "overhead-B/entry")
	b.ReportMetric(float64(m.SizeBytes())/(1<<20), "SizeBytes-MiB")
}
