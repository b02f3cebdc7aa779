package memstore

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/testseed"

	"github.com/stretchr/testify/require"
)

// write is one write of a test's history.
type write struct {
	kind       Kind
	key, value string
}

func set(key, value string) write { return write{KindSet, key, value} }
func del(key string) write        { return write{KindDelete, key, ""} }

// build returns a memstore holding the writes, at sequence numbers 1, 2, ...
func build(t testing.TB, writes ...write) *Memstore {
	t.Helper()
	m := New(nil)
	for _, w := range writes {
		if w.kind == KindSet {
			require.NoError(t, m.Put([]byte(w.key), []byte(w.value)))
		} else {
			require.NoError(t, m.Delete([]byte(w.key)))
		}
	}
	return m
}

func TestGet(t *testing.T) {
	tests := []struct {
		name      string
		writes    []write
		key       string
		want      string
		wantFound Result
	}{
		{name: "empty memstore", key: "a", wantFound: Absent},
		{name: "a value", writes: []write{set("a", "1")}, key: "a", want: "1", wantFound: Found},
		{name: "another key", writes: []write{set("a", "1")}, key: "b", wantFound: Absent},
		{name: "a prefix is another key", writes: []write{set("ab", "1")}, key: "a", wantFound: Absent},
		{name: "a longer key is another key", writes: []write{set("a", "1")}, key: "ab", wantFound: Absent},
		{name: "the newest value wins", writes: []write{set("a", "1"), set("a", "2")}, key: "a", want: "2", wantFound: Found},
		{name: "a tombstone", writes: []write{set("a", "1"), del("a")}, key: "a", wantFound: Deleted},
		{name: "a tombstone without a value", writes: []write{del("a")}, key: "a", wantFound: Deleted},
		{name: "a value after a tombstone", writes: []write{set("a", "1"), del("a"), set("a", "3")}, key: "a", want: "3", wantFound: Found},
		{name: "an empty value is not a deletion", writes: []write{set("a", "1"), set("a", "")}, key: "a", want: "", wantFound: Found},
		{name: "neighbours do not interfere", writes: []write{set("a", "1"), set("b", "2"), del("c"), set("b", "4")}, key: "b", want: "4", wantFound: Found},
		{name: "empty key", writes: []write{set("a", "1")}, key: "", wantFound: Absent},
		{name: "binary keys", writes: []write{set("\x00\xff", "1"), set("\x00", "2")}, key: "\x00\xff", want: "1", wantFound: Found},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := build(t, tt.writes...)
			got, found := m.Get([]byte(tt.key))
			require.Equal(t, tt.wantFound, found)
			if found == Found {
				require.NotNil(t, got, "a found value is never nil")
				require.Equal(t, tt.want, string(got))
			} else {
				require.Nil(t, got)
			}
		})
	}
}

func TestGetAt(t *testing.T) {
	m := build(t,
		set("a", "1"), // 1
		set("b", "x"), // 2
		set("a", "3"), // 3
		del("a"),      // 4
		set("a", "5"), // 5
	)
	tests := []struct {
		seq       uint64
		want      string
		wantFound Result
	}{
		{seq: 0, wantFound: Absent},
		{seq: 1, want: "1", wantFound: Found},
		{seq: 2, want: "1", wantFound: Found},
		{seq: 3, want: "3", wantFound: Found},
		{seq: 4, wantFound: Deleted},
		{seq: 5, want: "5", wantFound: Found},
		{seq: 100, want: "5", wantFound: Found},
		{seq: MaxSeq, want: "5", wantFound: Found},
		{seq: MaxSeq + 1, want: "5", wantFound: Found},
		{seq: ^uint64(0), want: "5", wantFound: Found},
	}
	for _, tt := range tests {
		got, found := m.GetAt([]byte("a"), tt.seq)
		require.Equal(t, tt.wantFound, found, "GetAt(a, %d)", tt.seq)
		require.Equal(t, tt.want, string(got), "GetAt(a, %d)", tt.seq)
	}
}

func TestWriteErrors(t *testing.T) {
	big := func(n int) []byte { return make([]byte, n) }
	tests := []struct {
		name  string
		seq   uint64
		kind  Kind
		key   []byte
		value []byte
		want  error
	}{
		{name: "nil key", seq: 10, kind: KindSet, key: nil, want: ErrEmptyKey},
		{name: "empty key", seq: 10, kind: KindSet, key: []byte{}, want: ErrEmptyKey},
		{name: "empty key delete", seq: 10, kind: KindDelete, key: []byte{}, want: ErrEmptyKey},
		{name: "key over MaxKeySize", seq: 10, kind: KindSet, key: big(MaxKeySize + 1), want: ErrKeyTooLarge},
		{name: "key of MaxKeySize", seq: 10, kind: KindSet, key: big(MaxKeySize)},
		{name: "value over MaxValueSize", seq: 10, kind: KindSet, key: []byte("k"), value: big(MaxValueSize + 1), want: ErrValueTooLarge},
		{name: "a tombstone ignores its value", seq: 10, kind: KindDelete, key: []byte("k"), value: big(MaxValueSize + 1)},
		{name: "seq 0", seq: 0, kind: KindSet, key: []byte("k"), want: ErrSeqNotIncreasing},
		{name: "seq equal to LastSeq", seq: 5, kind: KindSet, key: []byte("k"), want: ErrSeqNotIncreasing},
		{name: "seq below LastSeq", seq: 4, kind: KindSet, key: []byte("k"), want: ErrSeqNotIncreasing},
		{name: "seq above MaxSeq", seq: MaxSeq + 1, kind: KindSet, key: []byte("k"), want: ErrSeqTooLarge},
		{name: "seq far above MaxSeq", seq: 1<<64 - 1, kind: KindSet, key: []byte("k"), want: ErrSeqTooLarge},
		{name: "seq of MaxSeq", seq: MaxSeq, kind: KindSet, key: []byte("k")},
		{name: "seq with a gap", seq: 1000, kind: KindSet, key: []byte("k")},
		{name: "unknown kind", seq: 10, kind: Kind(7), key: []byte("k"), want: ErrInvalidKind},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(nil)
			require.NoError(t, m.Apply(5, KindSet, []byte("before"), nil))
			err := m.Apply(tt.seq, tt.kind, tt.key, tt.value)
			if tt.want != nil {
				require.ErrorIs(t, err, tt.want)
				require.Equal(t, uint64(5), m.LastSeq(), "a failed write changes nothing")
				require.Equal(t, 1, m.Len())
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.seq, m.LastSeq())
			_, found := m.Get(tt.key)
			require.Equal(t, map[Kind]Result{KindSet: Found, KindDelete: Deleted}[tt.kind], found)
		})
	}
}

func TestPutAndDeleteValidate(t *testing.T) {
	m := New(nil)
	require.ErrorIs(t, m.Put(nil, []byte("v")), ErrEmptyKey)
	require.ErrorIs(t, m.Delete(nil), ErrEmptyKey)
	require.ErrorIs(t, m.Put(make([]byte, MaxKeySize+1), nil), ErrKeyTooLarge)
	require.ErrorIs(t, m.Delete(make([]byte, MaxKeySize+1)), ErrKeyTooLarge)
	require.Zero(t, m.Len())
	require.Zero(t, m.LastSeq())
}

func TestErrorsCarryDetail(t *testing.T) {
	m := New(nil)
	require.NoError(t, m.Apply(7, KindSet, []byte("k"), nil))
	require.EqualError(t, m.Apply(7, KindSet, []byte("k"), nil), "memstore: sequence number not increasing: sequence number 7, last 7")
	require.EqualError(t, m.Apply(MaxSeq+1, KindSet, []byte("k"), nil), "memstore: sequence number above MaxSeq: sequence number 72057594037927936, MaxSeq 72057594037927935")
	require.EqualError(t, m.Put(make([]byte, MaxKeySize+1), nil), "strata: key over 64 KiB: 65537 bytes")
}

func TestApplySeqZeroOnEmptyMemstore(t *testing.T) {
	m := New(nil)
	require.ErrorIs(t, m.Apply(0, KindSet, []byte("k"), nil), ErrSeqNotIncreasing)
	require.Zero(t, m.Len())
}

func TestSequenceNumbersExhausted(t *testing.T) {
	m := New(nil)
	require.NoError(t, m.Apply(MaxSeq, KindSet, []byte("k"), []byte("v")))
	require.ErrorIs(t, m.Put([]byte("k"), []byte("w")), ErrSeqTooLarge)
	require.ErrorIs(t, m.Delete([]byte("k")), ErrSeqTooLarge)
	require.Equal(t, uint64(MaxSeq), m.LastSeq())
	v, found := m.Get([]byte("k"))
	require.Equal(t, Found, found)
	require.Equal(t, "v", string(v))
}

func TestPutAssignsSequenceNumbers(t *testing.T) {
	m := New(nil)
	require.Zero(t, m.LastSeq())
	require.NoError(t, m.Put([]byte("a"), nil))
	require.Equal(t, uint64(1), m.LastSeq())
	require.NoError(t, m.Apply(10, KindSet, []byte("b"), nil))
	require.NoError(t, m.Delete([]byte("a")))
	require.Equal(t, uint64(11), m.LastSeq())
}

func TestWritesCopyCallerSlices(t *testing.T) {
	m := New(nil)
	key, value := []byte("key"), []byte("value")
	require.NoError(t, m.Put(key, value))
	copy(key, "KEY")
	copy(value, "VALUE")
	got, found := m.Get([]byte("key"))
	require.Equal(t, Found, found)
	require.Equal(t, "value", string(got))
	_, found = m.Get([]byte("KEY"))
	require.Equal(t, Absent, found)
}

func TestEmptyValues(t *testing.T) {
	for _, value := range [][]byte{nil, {}} {
		m := New(nil)
		require.NoError(t, m.Put([]byte("k"), value))
		got, found := m.Get([]byte("k"))
		require.Equal(t, Found, found)
		require.NotNil(t, got)
		require.Empty(t, got)
	}
}

func TestReturnedSlicesAreCapped(t *testing.T) {
	m := build(t, set("a", "1"), set("b", "2"))
	v, _ := m.Get([]byte("a"))
	_ = append(v, 'X') // must not write over the neighbouring entry
	v, _ = m.Get([]byte("b"))
	require.Equal(t, "2", string(v))
	it := m.NewIterator(nil)
	require.True(t, it.First())
	require.Equal(t, len(it.Key()), cap(it.Key()))
	require.Equal(t, len(it.Value()), cap(it.Value()))
}

func TestLargeEntries(t *testing.T) {
	m := New(nil)
	sizes := []int{arenaLargeEntry - 2, arenaLargeEntry, arenaLargeEntry + 1, arenaChunkSize, 3 * arenaChunkSize}
	for i, n := range sizes {
		value := bytes.Repeat([]byte{byte('a' + i)}, n)
		require.NoError(t, m.Put([]byte{byte('a' + i)}, value))
	}
	for i, n := range sizes {
		got, found := m.Get([]byte{byte('a' + i)})
		require.Equal(t, Found, found)
		require.Equal(t, strings.Repeat(string(rune('a'+i)), n), string(got))
	}
}

// Keys of the sizes around the limits of a chunk, sharing their first
// bytes, are stored whole: a node over arenaLargeEntry gets an allocation
// of its own.
func TestLargeKeys(t *testing.T) {
	m := New(nil)
	sizes := []int{arenaLargeEntry - 100, arenaLargeEntry - 1, arenaLargeEntry, arenaLargeEntry + 1, MaxKeySize}
	key := func(i, n int) []byte {
		k := bytes.Repeat([]byte{'k'}, n)
		k[n-1] = byte('a' + i)
		return k
	}
	for i, n := range sizes {
		require.NoError(t, m.Put(key(i, n), []byte{byte(i)}))
	}
	for i, n := range sizes {
		v, found := m.Get(key(i, n))
		require.Equal(t, Found, found, "key of %d bytes", n)
		require.Equal(t, []byte{byte(i)}, v)
	}
	// They order by length: a key's last byte sorts below the 'k' that
	// every longer key has in its place.
	var got []int
	for k := range m.All() {
		got = append(got, len(k))
	}
	require.Equal(t, sizes, got)
}

// Keys that share their first 10 bytes, zero-padded numbers, in random
// order: every one is found, and they iterate in numeric order.
func TestKeysWithLongSharedPrefixes(t *testing.T) {
	rng := rand.New(rand.NewPCG(testseed.Seed(t), 0))
	const n = 20_000
	key := func(i int) []byte { return fmt.Appendf(nil, "%016d", i) }
	m := New(nil)
	for _, i := range rng.Perm(n) {
		require.NoError(t, m.Put(key(2*i), key(i)))
	}
	for i := range n {
		v, found := m.Get(key(2 * i))
		require.Equal(t, Found, found)
		require.Equal(t, key(i), v)
		_, found = m.Get(key(2*i + 1))
		require.Equal(t, Absent, found)
	}
	i := 0
	for k := range m.All() {
		require.Equal(t, key(2*i), k)
		i++
	}
	require.Equal(t, n, i)
	it := m.NewIterator(nil)
	for range 1000 {
		j := rng.IntN(2 * n)
		require.Equal(t, j < 2*n-1, it.SeekGE(key(j)))
		if j < 2*n-1 {
			require.Equal(t, key((j+1)/2*2), it.Key())
		}
	}
}

// Many versions of one key, among writes to its neighbours: each read at a
// sequence number sees the version of that moment, and the versions
// iterate newest first.
func TestManyVersionsOfOneKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(testseed.Seed(t), 0))
	m := New(nil)
	var seqs []uint64 // the writes to "k", ascending
	for range 5000 {
		k := []string{"j", "k", "k", "k", "k\x00", "kk"}[rng.IntN(6)]
		require.NoError(t, m.Put([]byte(k), fmt.Appendf(nil, "%d", m.LastSeq()+1)))
		if k == "k" {
			seqs = append(seqs, m.LastSeq())
		}
	}
	for range 2000 {
		at := rng.Uint64N(m.LastSeq() + 1)
		i, _ := slices.BinarySearch(seqs, at+1)
		v, found := m.GetAt([]byte("k"), at)
		if i == 0 {
			require.Equal(t, Absent, found, "at %d", at)
			continue
		}
		require.Equal(t, Found, found, "at %d", at)
		require.Equal(t, fmt.Sprint(seqs[i-1]), string(v), "at %d", at)
	}
	it := m.NewEntryIterator(&IterOptions{LowerBound: []byte("k"), UpperBound: []byte("k\x00")})
	var got []uint64
	for ok := it.First(); ok; ok = it.Next() {
		got = append(got, it.Seq())
	}
	slices.Reverse(got)
	require.Equal(t, seqs, got)
}

func TestLenCountsEveryVersion(t *testing.T) {
	m := build(t, set("a", "1"), set("a", "2"), del("a"), set("b", ""))
	require.Equal(t, 4, m.Len())
}

func TestSizeBytes(t *testing.T) {
	m := New(nil)
	empty := m.SizeBytes()
	require.Positive(t, empty, "the skiplist's head node counts")
	require.NoError(t, m.Put([]byte("k"), []byte("v")))
	require.GreaterOrEqual(t, m.SizeBytes(), empty+2*arenaFirstChunk, "the first write allocates a chunk of nodes and one of values")
	before := m.SizeBytes()
	require.NoError(t, m.Put([]byte("big"), make([]byte, 100_000)))
	require.GreaterOrEqual(t, m.SizeBytes()-before, int64(100_003), "a large entry is counted whole")
}

func TestResultString(t *testing.T) {
	tests := []struct {
		r    Result
		want string
	}{
		{Absent, "absent"},
		{Found, "found"},
		{Deleted, "deleted"},
		{Result(9), "result(9)"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, tt.r.String())
	}
}

func TestKindReexports(t *testing.T) {
	require.Equal(t, "set", KindSet.String())
	require.Equal(t, "delete", KindDelete.String())
	require.Equal(t, uint64(1<<56-1), MaxSeq)
}
