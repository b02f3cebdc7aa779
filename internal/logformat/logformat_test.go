package logformat

import (
	"bytes"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stretchr/testify/require"
)

// batch returns the encoding of a batch of ops, its header set.
func batch(seq uint64, ops ...[3][]byte) []byte {
	b := AppendHeader(nil)
	for _, op := range ops {
		b = AppendOp(b, base.Kind(op[0][0]), op[1], op[2])
	}
	SetSeq(b, seq, uint32(len(ops)))
	return b
}

func TestBatchRoundTrip(t *testing.T) {
	rec := batch(7,
		[3][]byte{{byte(base.KindSet)}, []byte("k1"), []byte("v1")},
		[3][]byte{{byte(base.KindDelete)}, []byte("k2"), nil},
		[3][]byte{{byte(base.KindRangeDelete)}, []byte("a"), []byte("c")},
		[3][]byte{{byte(base.KindRangeDelete)}, nil, nil},
		[3][]byte{{byte(base.KindMerge)}, []byte("k3"), []byte("+1")},
	)
	SetSynced(rec, 1234)
	SetStamp(rec, 0xfeedbeef)
	type op struct {
		seq        uint64
		kind       base.Kind
		key, value string
	}
	var got []op
	seq, count, err := Decode(Current, rec, func(seq uint64, kind base.Kind, key, value []byte) error {
		got = append(got, op{seq, kind, string(key), string(value)})
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, uint64(7), seq)
	require.Equal(t, uint32(5), count)
	require.Equal(t, []op{{7, base.KindSet, "k1", "v1"}, {8, base.KindDelete, "k2", ""}, {9, base.KindRangeDelete, "a", "c"},
		{10, base.KindRangeDelete, "", ""}, {11, base.KindMerge, "k3", "+1"}}, got)
	require.Equal(t, int64(1234), Synced(Current, rec))
	require.Equal(t, uint32(0xfeedbeef), Stamp(Current, rec))
	require.Zero(t, Stamp(WithSynced, rec), "format 2 has no stamp")
	require.Zero(t, Synced(V1, rec), "format 1 has no synced length")

	_, _, err = Decode(LogNum, rec, nil)
	require.ErrorIs(t, err, ErrBadBatch, "format 3 has no range deletions")
	_, _, err = Decode(Identity, rec, nil)
	require.ErrorIs(t, err, ErrBadBatch, "format 5 has no merge operands")
	_, _, err = Decode(Current, rec[:len(rec)-1], nil)
	require.ErrorIs(t, err, ErrBadBatch)
}

func TestIdentity(t *testing.T) {
	id := base.NewFileID(0)
	rec := EncodeIdentity(42, id)
	require.Len(t, rec, IdentitySize)
	num, got, ok := DecodeIdentity(rec)
	require.True(t, ok)
	require.Equal(t, uint64(42), num)
	require.Equal(t, id, got)
	_, _, err := Decode(Current, rec, nil)
	require.ErrorIs(t, err, ErrBadBatch, "an identity is no batch")
	_, _, ok = DecodeIdentity(batch(1, [3][]byte{{byte(base.KindSet)}, []byte("k"), []byte("v")}))
	require.False(t, ok, "a batch is no identity")
	_, _, ok = DecodeIdentity(EncodeIdentity(42, 0))
	require.False(t, ok, "an identity is never 0")
}

// FuzzRecord fuzzes what replay reads of a log record, in every format:
// decoding and the header fields (the synced length, the stamp) never
// panic on bytes of any length, formats without them read them as 0; and
// an identity record decodes only as one, and encodes back to its bytes.
func FuzzRecord(f *testing.F) {
	rec := batch(7, [3][]byte{{byte(base.KindSet)}, []byte("key"), []byte("value")})
	SetSynced(rec, 1234)
	SetStamp(rec, 9)
	f.Add(rec)
	f.Add(rec[:HeaderSizeSynced])
	f.Add(rec[:HeaderSizeV1])
	f.Add(batch(7, [3][]byte{{byte(base.KindRangeDelete)}, []byte("a"), []byte("b")}))
	f.Add(batch(7, [3][]byte{{byte(base.KindMerge)}, []byte("k"), []byte("+1")}))
	f.Add(EncodeIdentity(7, base.NewFileID(0)))
	f.Fuzz(func(t *testing.T, data []byte) {
		if num, id, ok := DecodeIdentity(data); ok {
			if !bytes.Equal(EncodeIdentity(num, id), data) {
				t.Fatalf("identity %d %x encodes to other bytes", num, id)
			}
			if _, _, err := Decode(Current, data, nil); err == nil {
				t.Fatal("an identity record decodes as a batch too")
			}
		}
		for _, format := range []uint64{V1, WithSynced, LogNum, RangeDel, Identity, Merge} {
			rangeDel, merge := false, false
			_, _, err := Decode(format, data, func(_ uint64, kind base.Kind, _, _ []byte) error {
				rangeDel = rangeDel || kind == base.KindRangeDelete
				merge = merge || kind == base.KindMerge
				return nil
			})
			if err == nil && rangeDel && format < RangeDel {
				t.Fatalf("a format-%d record holds a range deletion", format)
			}
			if err == nil && merge && format < Merge {
				t.Fatalf("a format-%d record holds a merge operand", format)
			}
			if synced := Synced(format, data); format == V1 && synced != 0 {
				t.Fatalf("a format-1 record has no synced field, read %d", synced)
			}
			if stamp := Stamp(format, data); format < LogNum && stamp != 0 {
				t.Fatalf("a format-%d record has no stamp, read %08x", format, stamp)
			}
		}
	})
}
