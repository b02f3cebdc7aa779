package memstore

import (
	"fmt"

	"github.com/stratadb/strata/sstables"
)

// FlushTo adds every entry of the memstore to w in one streaming pass: all
// versions, newest first within a key, tombstones and range tombstones
// included, so the table holds exactly what the memstore held. It does not close w. Entries
// written concurrently with the flush may or may not be included; flush a
// memstore that no longer takes writes.
func (m *Memstore) FlushTo(w *sstables.Writer) error {
	for _, f := range m.RangeDeletions() {
		for _, seq := range f.Seqs {
			if err := w.AddRangeDel(f.Start, f.End, seq); err != nil {
				return err
			}
		}
	}
	it := m.NewEntryIterator(nil)
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		if err := w.AddEntry(it.Key(), it.Seq(), it.Kind(), it.Value()); err != nil {
			return err
		}
	}
	return it.Err()
}

// Flush writes the memstore to a new table named name (see FlushTo) and
// returns its metadata. The table appears under its name only once
// complete and durable.
func (m *Memstore) Flush(name string, opts *sstables.WriterOptions) (sstables.Metadata, error) {
	w, err := sstables.NewWriter(name, opts)
	if err != nil {
		return sstables.Metadata{}, err
	}
	if err := m.FlushTo(w); err != nil {
		w.Abort()
		return sstables.Metadata{}, fmt.Errorf("memstore: flush to %s: %w", name, err)
	}
	if err := w.Close(); err != nil {
		return sstables.Metadata{}, err
	}
	return w.Metadata(), nil
}
