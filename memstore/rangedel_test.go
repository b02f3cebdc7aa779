package memstore

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDeleteRange(t *testing.T) {
	m := New(nil)
	require.NoError(t, m.Put([]byte("a"), []byte("1"))) // 1
	require.NoError(t, m.Put([]byte("b"), []byte("2"))) // 2
	require.NoError(t, m.Put([]byte("c"), []byte("3"))) // 3
	require.NoError(t, m.DeleteRange([]byte("b"), []byte("d")))
	require.NoError(t, m.Put([]byte("c"), []byte("5"))) // 5
	require.Equal(t, uint64(5), m.LastSeq())
	require.Equal(t, 4, m.Len(), "a range deletion is not an entry")

	tests := []struct {
		key  string
		seq  uint64
		want string
		res  Result
	}{
		{"a", MaxSeq, "1", Found},
		{"b", MaxSeq, "", Deleted},
		{"b", 3, "2", Found},
		{"c", MaxSeq, "5", Found},
		{"c", 4, "", Deleted},
		{"bb", MaxSeq, "", Deleted}, // no entry, but covered
		{"bb", 3, "", Absent},
		{"d", MaxSeq, "", Absent}, // the end is exclusive
	}
	for _, tt := range tests {
		v, res := m.GetAt([]byte(tt.key), tt.seq)
		require.Equal(t, tt.res, res, "%s@%d", tt.key, tt.seq)
		require.Equal(t, tt.want, string(v), "%s@%d", tt.key, tt.seq)
	}
	var live []string
	for k := range m.All() {
		live = append(live, string(k))
	}
	require.Equal(t, []string{"a", "c"}, live)
	live = live[:0]
	for k := range m.Backward() {
		live = append(live, string(k))
	}
	require.Equal(t, []string{"c", "a"}, live)
	// The raw view shows every entry: the range deletion is apart.
	it := m.NewEntryIterator(nil)
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	require.Equal(t, 4, n)
	frags := m.RangeDeletions()
	require.Len(t, frags, 1)
	require.Equal(t, []uint64{4}, frags[0].Seqs)
}

func TestDeleteRangeRejectsBadInput(t *testing.T) {
	m := New(nil)
	require.ErrorIs(t, m.DeleteRange([]byte("b"), []byte("b")), ErrBadRangeDel)
	require.ErrorIs(t, m.DeleteRange(make([]byte, MaxKeySize+1), nil), ErrKeyTooLarge)
	require.ErrorIs(t, m.Apply(0, KindRangeDelete, nil, nil), ErrSeqNotIncreasing)
	require.Equal(t, uint64(0), m.LastSeq())
	require.NoError(t, m.DeleteRange(nil, nil), "everything")
	_, res := m.Get([]byte("x"))
	require.Equal(t, Deleted, res)
}

func TestDeleteRangeCountsInSize(t *testing.T) {
	m := New(nil)
	before := m.SizeBytes()
	for i := range 100 {
		require.NoError(t, m.DeleteRange([]byte{byte(2 * i)}, []byte{byte(2*i + 1)}))
	}
	require.Greater(t, m.SizeBytes(), before+100*2)
}
