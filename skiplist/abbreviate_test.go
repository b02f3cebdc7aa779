package skiplist

import (
	"bytes"
	"cmp"
	"math/rand/v2"
	"testing"

	"github.com/stratadb/strata/internal/testseed"
	"github.com/stretchr/testify/require"
)

func TestAbbreviateBytes(t *testing.T) {
	tests := []struct {
		key  string
		want uint64
	}{
		{"", 0},
		{"\x01", 0x01 << 56},
		{"\x01\x02", 0x0102 << 48},
		{"abcdefgh", 0x6162636465666768},
		{"abcdefghij", 0x6162636465666768},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, AbbreviateBytes([]byte(tt.key)), "%q", tt.key)
		require.Equal(t, tt.want, abbreviateString(tt.key), "%q", tt.key)
	}
}

// TestAbbreviationsAreConsistent checks the contract of an abbreviation on
// random keys: a smaller abbreviation means a smaller key.
func TestAbbreviationsAreConsistent(t *testing.T) {
	rng := rand.New(rand.NewPCG(testseed.Seed(t), 0))
	key := func() []byte {
		k := make([]byte, rng.IntN(12))
		for i := range k {
			k[i] = "\x00\x01\xfe\xff"[rng.IntN(4)]
		}
		return k
	}
	for range 100_000 {
		a, b := key(), key()
		if c := cmp.Compare(AbbreviateBytes(a), AbbreviateBytes(b)); c != 0 {
			require.Equal(t, c, bytes.Compare(a, b), "%x vs %x", a, b)
		}
		if c := cmp.Compare(abbreviateString(string(a)), abbreviateString(string(b))); c != 0 {
			require.Equal(t, c, bytes.Compare(a, b), "%x vs %x", a, b)
		}
	}
}

type name string

func TestNewOrderedAbbreviatesStringKinds(t *testing.T) {
	require.NotNil(t, orderedAbbreviation[string]())
	require.NotNil(t, orderedAbbreviation[name]())
	require.Nil(t, orderedAbbreviation[int]())
	require.Nil(t, orderedAbbreviation[float64]())

	m := NewOrdered[name, int](nil)
	for i, k := range []name{"carol", "alice", "bob", "alice-2", ""} {
		m.Insert(k, i)
	}
	var keys []name
	for k := range m.All() {
		keys = append(keys, k)
	}
	require.Equal(t, []name{"", "alice", "alice-2", "bob", "carol"}, keys)
	v, ok := m.Get("bob")
	require.True(t, ok)
	require.Equal(t, 2, v)
}

func TestNewAbbreviated(t *testing.T) {
	// Keys that share their first 8 bytes: the comparator decides.
	m := NewAbbreviated[[]byte, int](bytes.Compare, AbbreviateBytes, nil)
	keys := []string{"prefix00-b", "prefix00-a", "prefix00", "prefix0", "prefix00-c"}
	for i, k := range keys {
		require.True(t, m.Insert([]byte(k), i))
	}
	var got []string
	for k := range m.All() {
		got = append(got, string(k))
	}
	require.Equal(t, []string{"prefix0", "prefix00", "prefix00-a", "prefix00-b", "prefix00-c"}, got)
	for i, k := range keys {
		v, ok := m.Get([]byte(k))
		require.True(t, ok)
		require.Equal(t, i, v)
	}
}

// A write abbreviates its key once, whether it adds the key or not.
func TestWritesAbbreviateOnce(t *testing.T) {
	calls := 0
	counting := func(k []byte) uint64 { calls++; return AbbreviateBytes(k) }
	m := NewAbbreviated[[]byte, int](bytes.Compare, counting, nil)
	for i, write := range []func([]byte, int) bool{m.Insert, m.Upsert, m.Insert, m.Upsert} {
		calls = 0
		write([]byte{byte(i % 2)}, i) // the second Insert and Upsert find the key
		require.Equal(t, 1, calls, "write %d", i)
	}
}
