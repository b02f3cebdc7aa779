package benchmark

import (
	"bytes"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/stratadb/strata/memstore"
)

// BenchmarkMemstore measures the memstore on 1M random 16-byte keys with
// 100-byte values: one op is one Put or one Get; Overhead reports the
// memory held per entry beyond its key and value bytes. The Decimal
// variants use 16-byte zero-padded decimal keys (0000000000000042), which
// share their first 10 bytes, in random and in ascending order; Scan reads
// every entry of a full memstore as a flush does, and ScanBackward reads
// them from the last down, in alternating turns with Scan (see pair).
// GetHot gets 100 keys written 10,000 times each, their versions stacked
// (Put) or each an entry (ApplyAll, which does not stack).
func BenchmarkMemstore(b *testing.B) {
	b.Run("Put", benchMemstorePut)
	b.Run("PutDecimalRandom", func(b *testing.B) { benchMemstorePutKeys(b, decimalData().random) })
	b.Run("PutDecimalSequential", func(b *testing.B) { benchMemstorePutKeys(b, decimalData().sequential) })
	b.Run("Get", benchMemstoreGet)
	b.Run("GetDecimal", benchMemstoreGetDecimal)
	b.Run("GetHot/stacked", func(b *testing.B) { benchMemstoreGetHot(b, true) })
	b.Run("GetHot/entries", func(b *testing.B) { benchMemstoreGetHot(b, false) })
	b.Run("Scan", benchMemstoreScan)
	b.Run("ScanBackward", benchMemstoreScanBackward)
	b.Run("Overhead", benchMemstoreOverhead)
}

// decimalKeys holds the data set's 1M indexes as 16-byte zero-padded
// decimal keys, in ascending order and in the data set's random order.
type decimalKeys struct {
	sequential, random [][]byte
}

var decimalData = sync.OnceValue(func() *decimalKeys {
	d := kvData()
	buf := make([]byte, 0, kvCount*kvKeySize)
	k := &decimalKeys{sequential: make([][]byte, kvCount), random: make([][]byte, kvCount)}
	for i := range kvCount {
		buf = fmt.Appendf(buf, "%016d", i)
		k.sequential[i] = buf[i*kvKeySize : (i+1)*kvKeySize : (i+1)*kvKeySize]
	}
	for i, j := range d.order {
		k.random[i] = k.sequential[j]
	}
	return k
})

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

// benchMemstorePut puts the data set's keys in turn into a memstore,
// starting a fresh one, outside the timer, after every 1M puts.
func benchMemstorePut(b *testing.B) { benchMemstorePutKeys(b, kvData().keys) }

// benchMemstorePutKeys puts keys in turn, with the data set's values, into
// a memstore, starting a fresh one, outside the timer, after every 1M puts.
func benchMemstorePutKeys(b *testing.B, keys [][]byte) {
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
		if err := m.Put(keys[i], d.values[i]); err != nil {
			b.Fatal(err)
		}
		i++
	}
	if m.Len() != i {
		b.Fatalf("memstore holds %d entries after %d puts", m.Len(), i)
	}
	reportOpsPerSecond(b, b.N, "puts/s")
}

// benchMemstoreGetDecimal gets the keys of a memstore full of decimal keys
// in random order and checks each value.
func benchMemstoreGetDecimal(b *testing.B) {
	d, keys := kvData(), decimalData()
	m := memstore.New(&memstore.Options{Seed: kvSeed})
	for i, k := range keys.random {
		if err := m.Put(k, d.values[i]); err != nil {
			b.Fatal(err)
		}
	}
	// keys.random[i] holds d.values[i]; look them up in another order.
	benchGets(b, m, keys.random, d.values, d.order)
}

// benchGets gets keys[order[i]] of m for i = 0, 1, ... and checks each
// value against values.
func benchGets(b *testing.B, m *memstore.Memstore, keys, values [][]byte, order []int) {
	i := 0
	for b.Loop() {
		j := order[i]
		v, res := m.Get(keys[j])
		if res != memstore.Found || !bytes.Equal(v, values[j]) {
			b.Fatalf("get %x: %v, wrong value", keys[j], res)
		}
		i = (i + 1) % len(order)
	}
	reportOpsPerSecond(b, b.N, "gets/s")
}

// benchMemstoreScan reads every entry of a full memstore, key and value, in
// order, as a flush does: one op is one scan of the 1M entries.
func benchMemstoreScan(b *testing.B) {
	m := fillMemstore(b)
	b.SetBytes(kvCount * (kvKeySize + kvValueSize))
	for b.Loop() {
		scanMemstore(b, m, false)
	}
	reportOpsPerSecond(b, b.N*kvCount, "entries/s")
}

// benchMemstoreScanBackward is benchMemstoreScan from the last entry down,
// against the forward scan in alternating turns.
func benchMemstoreScanBackward(b *testing.B) {
	m := fillMemstore(b)
	p := newPair(b, kvCount*(kvKeySize+kvValueSize))
	for range b.N {
		p.candidate(func() { scanMemstore(b, m, true) })
		p.baseline(func() { scanMemstore(b, m, false) })
	}
	p.report()
	p.reportRate(kvCount, "entries/s")
}

// scanMemstore reads every entry of m, forward or backward, and checks
// their number and size.
func scanMemstore(b *testing.B, m *memstore.Memstore, backward bool) {
	it := m.NewEntryIterator(nil)
	defer it.Close()
	first, step := it.First, it.Next
	if backward {
		first, step = it.Last, it.Prev
	}
	n, size := 0, 0
	for ok := first(); ok; ok = step() {
		n++
		size += len(it.Key()) + len(it.Value())
	}
	if n != kvCount || size != kvCount*(kvKeySize+kvValueSize) {
		b.Fatalf("scan saw %d entries of %d bytes", n, size)
	}
}

// benchMemstoreGet gets the keys of a full memstore in random order and
// checks each value.
func benchMemstoreGet(b *testing.B) {
	d := kvData()
	benchGets(b, fillMemstore(b), d.keys, d.values, d.order)
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

// benchMemstoreGetHot gets 100 keys, each written 10,000 times in turn,
// at the latest sequence number, in random order; stacked: written by Put,
// else by ApplyAll, which adds an entry for each version.
func benchMemstoreGetHot(b *testing.B, stacked bool) {
	const hot, rounds = 100, 10_000
	d := kvData()
	keys, values := d.keys[:hot], make([][]byte, hot)
	m := memstore.New(&memstore.Options{Seed: kvSeed})
	writes := make([]memstore.Write, 0, hot*rounds)
	for r := range rounds {
		for k, key := range keys {
			values[k] = d.values[(r*hot+k)%kvCount]
			writes = append(writes, memstore.Write{Seq: uint64(len(writes) + 1), Kind: memstore.KindSet, Key: key, Value: values[k]})
		}
	}
	if stacked {
		for _, w := range writes {
			if err := m.Put(w.Key, w.Value); err != nil {
				b.Fatal(err)
			}
		}
	} else if err := m.ApplyAll(writes); err != nil {
		b.Fatal(err)
	}
	order := make([]int, len(d.order))
	for i, j := range d.order {
		order[i] = j % hot
	}
	benchGets(b, m, keys, values, order)
}
