package skiplist

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestIteratorBounds(t *testing.T) {
	m := NewOrdered[int, int](nil)
	for k := 10; k <= 50; k += 10 {
		m.Insert(k, -k)
	}
	ptr := func(k int) *int { return &k }
	tests := []struct {
		name         string
		lower, upper *int
		seek         *int // SeekGE instead of First when set
		want         []int
	}{
		{name: "unbounded", want: []int{10, 20, 30, 40, 50}},
		{name: "lower only", lower: ptr(25), want: []int{30, 40, 50}},
		{name: "lower is inclusive", lower: ptr(30), want: []int{30, 40, 50}},
		{name: "upper is exclusive", upper: ptr(30), want: []int{10, 20}},
		{name: "both", lower: ptr(20), upper: ptr(41), want: []int{20, 30, 40}},
		{name: "empty range", lower: ptr(30), upper: ptr(30)},
		{name: "inverted range", lower: ptr(40), upper: ptr(20)},
		{name: "above every key", lower: ptr(60)},
		{name: "seek", seek: ptr(31), want: []int{40, 50}},
		{name: "seek exact", seek: ptr(40), want: []int{40, 50}},
		{name: "seek below lower clamps", lower: ptr(20), seek: ptr(5), want: []int{20, 30, 40, 50}},
		{name: "seek past upper", upper: ptr(30), seek: ptr(30)},
		{name: "seek past the end", seek: ptr(51)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			it := m.NewIterator(tt.lower, tt.upper)
			require.False(t, it.Valid(), "a new iterator is unpositioned")
			var ok bool
			if tt.seek != nil {
				ok = it.SeekGE(*tt.seek)
			} else {
				ok = it.First()
			}
			var got []int
			for ; ok; ok = it.Next() {
				require.True(t, it.Valid())
				require.Equal(t, -it.Key(), it.Value())
				got = append(got, it.Key())
			}
			require.Equal(t, tt.want, got)
			require.False(t, it.Valid())
			require.False(t, it.Next(), "Next on an exhausted iterator")
		})
	}
}

func TestIteratorSeesUpsertedValue(t *testing.T) {
	m := NewOrdered[string, int](nil)
	m.Insert("a", 1)
	it := m.NewIterator(nil, nil)
	require.True(t, it.First())
	m.Upsert("a", 2)
	require.Equal(t, 2, it.Value())
}

func TestIteratorSeesInsertAhead(t *testing.T) {
	m := NewOrdered[int, int](nil)
	m.Insert(1, 1)
	m.Insert(3, 3)
	it := m.NewIterator(nil, nil)
	require.True(t, it.First())
	m.Insert(2, 2)
	require.True(t, it.Next())
	require.Equal(t, 2, it.Key())
}

func TestRange(t *testing.T) {
	m := NewOrdered[int, string](nil)
	for _, k := range []int{3, 1, 4, 5, 9, 2, 6} {
		m.Insert(k, "")
	}
	var got []int
	for k := range m.Range(2, 6) {
		got = append(got, k)
	}
	require.Equal(t, []int{2, 3, 4, 5}, got)
}

func TestRangeAndAllStopEarly(t *testing.T) {
	m := NewOrdered[int, int](nil)
	for k := range 10 {
		m.Insert(k, k)
	}
	var got []int
	for k := range m.All() {
		if k == 3 {
			break
		}
		got = append(got, k)
	}
	require.Equal(t, []int{0, 1, 2}, got)
	got = nil
	for k := range m.Range(5, 10) {
		if k == 7 {
			break
		}
		got = append(got, k)
	}
	require.Equal(t, []int{5, 6}, got)
}

// With abbreviated keys, the upper bound is compared by abbreviation first:
// keys that share the bound's first 8 bytes leave the decision to the
// comparator.
func TestIteratorUpperBoundAbbreviated(t *testing.T) {
	m := NewBytes[int](nil)
	keys := []string{"", "a", "prefix0", "prefix00", "prefix00-a", "prefix00-b", "prefix01", "q"}
	for i, k := range keys {
		m.Insert([]byte(k), i)
	}
	tests := []struct {
		lower, upper string
		want         []string
	}{
		{lower: "", upper: "prefix00-b", want: keys[:5]},
		{lower: "prefix00", upper: "prefix00-a0", want: []string{"prefix00", "prefix00-a"}},
		{lower: "prefix0", upper: "prefix00", want: []string{"prefix0"}},
		{lower: "a", upper: "prefix", want: []string{"a"}},
		{lower: "prefix00-b", upper: "z", want: []string{"prefix00-b", "prefix01", "q"}},
		{lower: "b", upper: "\x00", want: nil},
	}
	for _, tt := range tests {
		lower, upper := []byte(tt.lower), []byte(tt.upper)
		var got []string
		it := m.NewIterator(&lower, &upper)
		for ok := it.First(); ok; ok = it.Next() {
			got = append(got, string(it.Key()))
		}
		require.Equal(t, tt.want, got, "[%q, %q)", tt.lower, tt.upper)
		var ranged []string
		for k := range m.Range(lower, upper) {
			ranged = append(ranged, string(k))
		}
		require.Equal(t, tt.want, ranged, "Range(%q, %q)", tt.lower, tt.upper)
	}
}

// An iterator that is not at a key returns zero values, never a panic or
// the last key it was at.
func TestIteratorAccessorsWhenUnpositioned(t *testing.T) {
	full := NewBytes[[]byte](nil)
	full.Insert([]byte("a"), []byte("va"))
	full.Insert([]byte("b"), []byte("vb"))
	tests := []struct {
		name string
		m    *Map[[]byte, []byte]
		move func(t *testing.T, it *Iterator[[]byte, []byte])
	}{
		{name: "fresh", m: full, move: func(*testing.T, *Iterator[[]byte, []byte]) {}},
		{name: "First on an empty map", m: NewBytes[[]byte](nil), move: func(t *testing.T, it *Iterator[[]byte, []byte]) {
			require.False(t, it.First())
		}},
		{name: "Next past the end", m: full, move: func(t *testing.T, it *Iterator[[]byte, []byte]) {
			require.True(t, it.First())
			for it.Next() {
			}
		}},
		{name: "SeekGE past the end", m: full, move: func(t *testing.T, it *Iterator[[]byte, []byte]) {
			require.True(t, it.First())
			require.False(t, it.SeekGE([]byte("z")))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			it := tt.m.NewIterator(nil, nil)
			tt.move(t, it)
			var key, value []byte
			require.NotPanics(t, func() { key, value = it.Key(), it.Value() })
			require.False(t, it.Valid())
			require.Nil(t, key)
			require.Nil(t, value)
			require.False(t, it.Next())
		})
	}
}
