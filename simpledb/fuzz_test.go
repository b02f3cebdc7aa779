package simpledb

import (
	"bytes"
	"testing"

	"github.com/stratadb/strata/internal/base"
)

// FuzzBatch fuzzes the decoder of log records: any bytes either fail to
// decode or yield ops that re-encode to the same record.
func FuzzBatch(f *testing.F) {
	var b Batch
	b.Put([]byte("key"), []byte("value"))
	b.Delete([]byte("gone"))
	b.Put([]byte("empty"), nil)
	b.setSeq(42)
	f.Add(b.data)
	f.Fuzz(func(t *testing.T, data []byte) {
		var again Batch
		seq, count, err := decodeBatch(data, func(_ uint64, kind base.Kind, key, value []byte) error {
			if kind == base.KindSet {
				return again.Put(key, value)
			}
			return again.Delete(key)
		})
		if err != nil {
			return
		}
		if count == 0 {
			return
		}
		again.setSeq(seq)
		if !bytes.Equal(again.data, data) {
			t.Fatalf("batch does not round-trip:\n%x\n%x", data, again.data)
		}
	})
}

// FuzzVersionEdit fuzzes the decoder of manifest records: an edit that
// decodes must encode and decode to the same edit.
func FuzzVersionEdit(f *testing.F) {
	e := versionEdit{comparator: comparatorName, logNum: 7, nextFileNum: 12, lastSeq: 99,
		deleted: []levelTable{{level: 1, info: tableInfo{num: 3}}},
		added:   []levelTable{{level: 2, info: tableInfo{num: 9, size: 100, smallest: []byte("a"), largest: []byte("z"), smallestSeq: 1, largestSeq: 50}}}}
	f.Add(e.encode())
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := decodeEdit(data)
		if err != nil {
			return
		}
		again, err := decodeEdit(e.encode())
		if err != nil {
			t.Fatalf("re-encoded edit does not decode: %v", err)
		}
		if !bytes.Equal(again.encode(), e.encode()) {
			t.Fatal("edit does not round-trip")
		}
	})
}
