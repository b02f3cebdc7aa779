package logformat

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stretchr/testify/require"
)

// The golden files under testdata hold a log record of every kind: a batch
// in each format, with the ops that format allows, and an identity record.
// They are the compatibility contract: logs on disk hold these bytes, so a
// change to the encoding shows as a change to a file. Regenerate them, once
// such a change is meant, with:
//
//	go test ./internal/logformat -run Golden -update
var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden returns the contents of testdata/name, first writing encoded
// there under -update.
func golden(t *testing.T, name string, encoded []byte) []byte {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, encoded, 0o644))
	}
	data, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; run with -update")
	return data
}

// decodedBatch is a batch as replay reads it: its header fields, zero where
// the format has none, and its ops.
type decodedBatch struct {
	Seq    uint64
	Count  uint32
	Synced int64
	Stamp  uint32
	Ops    []decodedOp
}

// decodedOp is an op with the sequence number it gets.
type decodedOp struct {
	Seq        uint64
	Kind       base.Kind
	Key, Value string
}

func decodeBatch(format uint64, rec []byte) (decodedBatch, error) {
	b := decodedBatch{Synced: Synced(format, rec), Stamp: Stamp(format, rec)}
	var err error
	b.Seq, b.Count, err = Decode(format, rec, func(seq uint64, kind base.Kind, key, value []byte) error {
		b.Ops = append(b.Ops, decodedOp{seq, kind, string(key), string(value)})
		return nil
	})
	return b, err
}

// encodeBatch encodes b as a log of the given format holds it. The package
// writes only the current header; an older format's is its first bytes,
// seq | count (| synced), as the layout in doc.go says.
func encodeBatch(format uint64, b decodedBatch) []byte {
	rec := AppendHeader(nil)
	for _, op := range b.Ops {
		rec = AppendOp(rec, op.Kind, []byte(op.Key), []byte(op.Value))
	}
	SetSeq(rec, b.Seq, b.Count)
	SetSynced(rec, b.Synced)
	SetStamp(rec, b.Stamp)
	if h := headerSize(format); h < HeaderSize {
		rec = append(rec[:h], rec[HeaderSize:]...)
	}
	return rec
}

func TestGoldenBatches(t *testing.T) {
	tests := []struct {
		file   string
		format uint64
		want   decodedBatch
	}{
		{"batch_v1.bin", V1, decodedBatch{Seq: 1, Count: 2, Ops: []decodedOp{
			{1, base.KindSet, "apple", "red"},
			{2, base.KindDelete, "banana", ""},
		}}},
		{"batch_v2.bin", WithSynced, decodedBatch{Seq: 300, Count: 2, Synced: 4096, Ops: []decodedOp{
			{300, base.KindSet, "apple", ""},
			{301, base.KindDelete, "apple", ""},
		}}},
		{"batch_v3.bin", LogNum, decodedBatch{Seq: 1 << 40, Count: 1, Synced: 1 << 33, Stamp: 9, Ops: []decodedOp{
			{1 << 40, base.KindSet, "k", "v"},
		}}},
		{"batch_v4.bin", RangeDel, decodedBatch{Seq: 77, Count: 3, Synced: 8, Stamp: 12, Ops: []decodedOp{
			{77, base.KindRangeDelete, "a", "c"},
			{78, base.KindRangeDelete, "", "m"},
			{79, base.KindRangeDelete, "x", ""},
		}}},
		{"batch_v5.bin", Identity, decodedBatch{Seq: 5, Count: 2, Synced: 24, Stamp: 0xdeadbeef, Ops: []decodedOp{
			{5, base.KindSet, "user:1", "ada"},
			{6, base.KindRangeDelete, "", ""},
		}}},
		{"batch_v6.bin", Merge, decodedBatch{Seq: base.MaxSeq - 4, Count: 5, Synced: 1 << 20, Stamp: 0x80000001, Ops: []decodedOp{
			{base.MaxSeq - 4, base.KindSet, "counter", "\x00\x00\x00\x01"},
			{base.MaxSeq - 3, base.KindMerge, "counter", "\x00\x00\x00\x02"},
			{base.MaxSeq - 2, base.KindDelete, "gone", ""},
			{base.MaxSeq - 1, base.KindRangeDelete, "p", "q"},
			{base.MaxSeq, base.KindSet, "empty value", ""},
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data := golden(t, tt.file, encodeBatch(tt.format, tt.want))
			got, err := decodeBatch(tt.format, data)
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
			require.Equal(t, data, encodeBatch(tt.format, got), "re-encoded")
		})
	}
}

// decodedIdentity is a log's identity record as replay reads it.
type decodedIdentity struct {
	Num, ID uint64
}

func TestGoldenIdentity(t *testing.T) {
	tests := []struct {
		file string
		want decodedIdentity
	}{
		{"identity.bin", decodedIdentity{Num: 12, ID: 0x8000_0000_dead_beef}},
		{"identity_large.bin", decodedIdentity{Num: 1<<64 - 1, ID: 1<<64 - 1}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data := golden(t, tt.file, EncodeIdentity(tt.want.Num, tt.want.ID))
			num, id, ok := DecodeIdentity(data)
			require.True(t, ok)
			got := decodedIdentity{num, id}
			require.Equal(t, tt.want, got)
			require.Equal(t, data, EncodeIdentity(got.Num, got.ID), "re-encoded")
		})
	}
}
