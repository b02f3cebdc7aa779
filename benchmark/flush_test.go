package benchmark

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stratadb/strata/memstore"
	"github.com/stratadb/strata/recordio"
	"github.com/stratadb/strata/sstables"
)

// memstoreSizes are go-sstables' flush sizes: the file sizes up to 2 GB,
// that is 32 MB to 1 GB, and 2 GB with -large.
func memstoreSizes() []sizeCase {
	return slices.DeleteFunc(fileSizes(), func(s sizeCase) bool { return s.bytes > 2048<<20 })
}

// BenchmarkSSTableMemstoreFlush is go-sstables' flush benchmark: a memstore
// of 4-byte big-endian keys and 1024-byte values (distinct, incompressible)
// flushed to a durable table per op. SetBytes counts the keys' and values'
// bytes. The baseline (x-baseline) writes the same bytes through recordio,
// uncompressed, one record (key then value) per entry, also made durable,
// in alternating turns (see pair). Both read the entries from the memstore,
// so the ratio compares only how they write them.
func BenchmarkSSTableMemstoreFlush(b *testing.B) {
	for _, comp := range tableCompressions() {
		for _, ms := range memstoreSizes() {
			b.Run(comp.name+"/"+ms.name, func(b *testing.B) {
				n := uint32(ms.bytes / (4 + sstableValueSize))
				m := memstore.New(nil)
				for i := range n {
					if err := m.Put(binary.BigEndian.AppendUint32(nil, i), sstableValue(i)); err != nil {
						b.Fatal(err)
					}
				}
				dir := benchDir(b)
				table, raw := filepath.Join(dir, "flushed.sst"), filepath.Join(dir, "raw.rio")
				p := newPair(b, int64(n)*(4+sstableValueSize))
				for range b.N {
					p.candidate(func() {
						meta, err := flushMemstore(m, table, &sstables.WriterOptions{Compression: comp.c, BlockSize: 16 << 10, BloomBitsPerKey: -1})
						if err != nil {
							b.Fatal(err)
						}
						if meta.Records != uint64(n) {
							b.Fatalf("flushed %d records, want %d", meta.Records, n)
						}
					})
					p.baseline(func() {
						w, err := recordio.Create(raw, nil)
						if err != nil {
							b.Fatal(err)
						}
						record := make([]byte, 0, 4+sstableValueSize)
						written := uint32(0)
						for k, v := range m.All() {
							record = append(append(record[:0], k...), v...)
							if _, err := w.Write(record); err != nil {
								b.Fatal(err)
							}
							written++
						}
						if err := w.Close(); err != nil {
							b.Fatal(err)
						}
						if written != n {
							b.Fatalf("wrote %d records, want %d", written, n)
						}
					})
					os.Remove(table)
					os.Remove(raw)
				}
				p.report()
			})
		}
	}
}

// flushMemstore writes every entry of m, all versions in the memstore's
// order, to a new table named name in one streaming pass, and returns its
// metadata; the table appears under its name only once complete and
// durable. The benchmark's memstores hold no range deletions, so it writes
// entries only.
func flushMemstore(m *memstore.Memstore, name string, opts *sstables.WriterOptions) (sstables.Metadata, error) {
	w, err := sstables.NewWriter(name, opts)
	if err != nil {
		return sstables.Metadata{}, err
	}
	it := m.NewEntryIterator(nil)
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		if err := w.AddEntry(it.Key(), it.Seq(), it.Kind(), it.Value()); err != nil {
			w.Abort()
			return sstables.Metadata{}, err
		}
	}
	if err := it.Err(); err != nil {
		w.Abort()
		return sstables.Metadata{}, err
	}
	if err := w.Close(); err != nil {
		return sstables.Metadata{}, err
	}
	return w.Metadata(), nil
}
