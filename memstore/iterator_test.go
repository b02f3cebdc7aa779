package memstore

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// seen is an entry as an iterator shows it.
type seen struct {
	key   string
	seq   uint64
	kind  Kind
	value string
}

func (s seen) String() string {
	return fmt.Sprintf("%s@%d:%v=%q", s.key, s.seq, s.kind, s.value)
}

// drain returns what the iterator yields from its current position on.
func drain(it *Iterator, ok bool) []seen {
	var out []seen
	for ; ok; ok = it.Next() {
		out = append(out, current(it))
	}
	return out
}

// drainBack returns what the iterator yields from its current position
// down.
func drainBack(it *Iterator, ok bool) []seen {
	var out []seen
	for ; ok; ok = it.Prev() {
		out = append(out, current(it))
	}
	return out
}

func current(it *Iterator) seen {
	return seen{string(it.Key()), it.Seq(), it.Kind(), string(it.Value())}
}

// reversed returns a reversed copy of s.
func reversed[S ~[]E, E any](s S) S {
	r := slices.Clone(s)
	slices.Reverse(r)
	return r
}

// testHistory is written at sequence numbers 1 to 8.
var testHistory = []write{
	set("b", "b1"), // 1
	set("a", "a2"), // 2
	set("c", "c3"), // 3
	del("b"),       // 4
	set("a", "a5"), // 5
	set("d", ""),   // 6
	del("c"),       // 7
	set("b", "b8"), // 8
}

func TestIterators(t *testing.T) {
	m := build(t, testHistory...)
	tests := []struct {
		name     string
		versions bool
		opts     IterOptions
		seek     string // SeekGE instead of First when set
		want     []seen
	}{
		{
			name: "live, latest",
			want: []seen{{"a", 5, KindSet, "a5"}, {"b", 8, KindSet, "b8"}, {"d", 6, KindSet, ""}},
		},
		{
			name: "live, at 4",
			opts: IterOptions{Seq: 4},
			want: []seen{{"a", 2, KindSet, "a2"}, {"c", 3, KindSet, "c3"}},
		},
		{
			name: "live, at 1",
			opts: IterOptions{Seq: 1},
			want: []seen{{"b", 1, KindSet, "b1"}},
		},
		{
			name: "live, bounded",
			opts: IterOptions{LowerBound: []byte("b"), UpperBound: []byte("d")},
			want: []seen{{"b", 8, KindSet, "b8"}},
		},
		{
			name: "live, lower bound between keys",
			opts: IterOptions{LowerBound: []byte("aa")},
			want: []seen{{"b", 8, KindSet, "b8"}, {"d", 6, KindSet, ""}},
		},
		{
			name: "live, empty bounds",
			opts: IterOptions{LowerBound: []byte("b"), UpperBound: []byte("b")},
		},
		{
			name: "live, seek",
			seek: "b",
			want: []seen{{"b", 8, KindSet, "b8"}, {"d", 6, KindSet, ""}},
		},
		{
			name: "live, seek to a deleted key",
			opts: IterOptions{Seq: 7},
			seek: "b",
			want: []seen{{"d", 6, KindSet, ""}},
		},
		{
			name: "live, seek below the lower bound",
			opts: IterOptions{LowerBound: []byte("c")},
			seek: "a",
			want: []seen{{"d", 6, KindSet, ""}},
		},
		{
			name:     "entries, latest",
			versions: true,
			want: []seen{
				{"a", 5, KindSet, "a5"}, {"a", 2, KindSet, "a2"},
				{"b", 8, KindSet, "b8"}, {"b", 4, KindDelete, ""}, {"b", 1, KindSet, "b1"},
				{"c", 7, KindDelete, ""}, {"c", 3, KindSet, "c3"},
				{"d", 6, KindSet, ""},
			},
		},
		{
			name:     "entries, at 4",
			versions: true,
			opts:     IterOptions{Seq: 4},
			want: []seen{
				{"a", 2, KindSet, "a2"},
				{"b", 4, KindDelete, ""}, {"b", 1, KindSet, "b1"},
				{"c", 3, KindSet, "c3"},
			},
		},
		{
			name:     "entries, bounded at 7",
			versions: true,
			opts:     IterOptions{LowerBound: []byte("b"), UpperBound: []byte("c\x00"), Seq: 7},
			want: []seen{
				{"b", 4, KindDelete, ""}, {"b", 1, KindSet, "b1"},
				{"c", 7, KindDelete, ""}, {"c", 3, KindSet, "c3"},
			},
		},
		{
			name:     "entries, seek",
			versions: true,
			opts:     IterOptions{Seq: 5},
			seek:     "bb",
			want:     []seen{{"c", 3, KindSet, "c3"}},
		},
		{
			name:     "entries, seek past the end",
			versions: true,
			seek:     "e",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			var it *Iterator
			if tt.versions {
				it = m.NewEntryIterator(&opts)
			} else {
				it = m.NewIterator(&opts)
			}
			require.False(t, it.Valid(), "a new iterator is unpositioned")
			var ok bool
			if tt.seek != "" {
				ok = it.SeekGE([]byte(tt.seek))
			} else {
				ok = it.First()
			}
			require.Equal(t, tt.want, drain(it, ok))
			require.False(t, it.Valid())
			require.False(t, it.Next(), "Next on an exhausted iterator")
			if tt.seek == "" {
				// Backward, the same entries in reverse: then Prev past
				// the start stays there, and Next turns back.
				require.Equal(t, reversed(tt.want), drainBack(it, it.Last()))
				require.False(t, it.Prev(), "Prev on an exhausted iterator")
				require.Equal(t, tt.want, drain(it, it.Next()))
				require.Equal(t, reversed(tt.want), drainBack(it, it.Prev()))
			}
			require.NoError(t, it.Err())
			require.NoError(t, it.Close())
		})
	}
}

func TestIteratorSeekLT(t *testing.T) {
	m := build(t, testHistory...)
	tests := []struct {
		name     string
		versions bool
		opts     IterOptions
		seek     string
		want     []seen // from the entry found down
	}{
		{
			name: "live, between keys",
			seek: "bb",
			want: []seen{{"b", 8, KindSet, "b8"}, {"a", 5, KindSet, "a5"}},
		},
		{
			name: "live, at a key: strictly before it",
			seek: "b",
			want: []seen{{"a", 5, KindSet, "a5"}},
		},
		{
			name: "live, past a deleted key",
			seek: "d",
			want: []seen{{"b", 8, KindSet, "b8"}, {"a", 5, KindSet, "a5"}},
		},
		{
			name: "live, at 7: newest visible versions, deletions hidden",
			opts: IterOptions{Seq: 7},
			seek: "z",
			want: []seen{{"d", 6, KindSet, ""}, {"a", 5, KindSet, "a5"}},
		},
		{
			name: "live, at 3",
			opts: IterOptions{Seq: 3},
			seek: "z",
			want: []seen{{"c", 3, KindSet, "c3"}, {"b", 1, KindSet, "b1"}, {"a", 2, KindSet, "a2"}},
		},
		{
			name: "live, above the upper bound",
			opts: IterOptions{LowerBound: []byte("b"), UpperBound: []byte("c")},
			seek: "z",
			want: []seen{{"b", 8, KindSet, "b8"}},
		},
		{
			name: "live, at the lower bound",
			opts: IterOptions{LowerBound: []byte("b")},
			seek: "b",
		},
		{
			name: "live, before every key",
			seek: "a",
		},
		{
			name:     "entries, every version, oldest first",
			versions: true,
			seek:     "c",
			want: []seen{
				{"b", 1, KindSet, "b1"}, {"b", 4, KindDelete, ""}, {"b", 8, KindSet, "b8"},
				{"a", 2, KindSet, "a2"}, {"a", 5, KindSet, "a5"},
			},
		},
		{
			name:     "entries, at 4",
			versions: true,
			opts:     IterOptions{Seq: 4, LowerBound: []byte("b")},
			seek:     "z",
			want:     []seen{{"c", 3, KindSet, "c3"}, {"b", 1, KindSet, "b1"}, {"b", 4, KindDelete, ""}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			it := m.NewIterator(&opts)
			if tt.versions {
				it = m.NewEntryIterator(&opts)
			}
			require.Equal(t, tt.want, drainBack(it, it.SeekLT([]byte(tt.seek))))
			require.False(t, it.Valid())
			require.NoError(t, it.Close())
		})
	}
}

// Switching direction at an entry moves to its neighbour, at every entry:
// Next then Prev comes back, and so does Prev then Next.
func TestIteratorSwitchesDirection(t *testing.T) {
	m := build(t, testHistory...)
	for _, versions := range []bool{false, true} {
		for _, seq := range []uint64{3, 4, 7, 8} {
			opts := &IterOptions{Seq: seq}
			it := m.NewIterator(opts)
			if versions {
				it = m.NewEntryIterator(opts)
			}
			all := drain(it, it.First())
			for i := range all {
				require.True(t, it.SeekGE([]byte(all[i].key)))
				for it.Valid() && current(it) != all[i] {
					it.Next()
				}
				if i+1 < len(all) {
					require.True(t, it.Next())
					require.Equal(t, all[i+1], current(it))
					require.True(t, it.Prev(), "versions %v seq %d: back from %v", versions, seq, all[i+1])
					require.Equal(t, all[i], current(it))
				}
				if i > 0 {
					require.True(t, it.Prev())
					require.Equal(t, all[i-1], current(it))
					require.True(t, it.Next())
					require.Equal(t, all[i], current(it))
				}
			}
		}
	}
}

// A backward walk sees a write that lands ahead of it, between entries it
// has already collected, as a forward walk does: here an iterator that
// reads at a sequence number above the memstore's.
func TestIteratorBackwardSeesWritesThatLand(t *testing.T) {
	m := New(nil)
	for i := range 100 {
		require.NoError(t, m.Put(fmt.Appendf(nil, "k%03d", 2*i), nil))
	}
	it := m.NewIterator(&IterOptions{Seq: MaxSeq})
	require.True(t, it.Last())
	require.True(t, it.Prev())
	require.Equal(t, "k196", string(it.Key()))
	// Land keys between the ones the walk has ahead of it.
	for i := range 98 {
		require.NoError(t, m.Put(fmt.Appendf(nil, "k%03d", 2*i+1), nil))
	}
	var got []string
	for ok := it.Prev(); ok; ok = it.Prev() {
		got = append(got, string(it.Key()))
	}
	require.Len(t, got, 196)
	for i, k := range got {
		require.Equal(t, fmt.Sprintf("k%03d", 195-i), k)
	}
}

func TestIteratorValueOfTombstoneIsNil(t *testing.T) {
	m := build(t, del("a"))
	it := m.NewEntryIterator(nil)
	require.True(t, it.First())
	require.Equal(t, KindDelete, it.Kind())
	require.Nil(t, it.Value())
}

func TestIteratorIgnoresLaterWrites(t *testing.T) {
	m := build(t, set("a", "1"), set("c", "3"))
	it := m.NewIterator(nil) // at sequence number 2
	require.True(t, it.First())
	require.NoError(t, m.Put([]byte("b"), []byte("2")))
	require.NoError(t, m.Delete([]byte("c")))
	require.NoError(t, m.Put([]byte("d"), []byte("4")))
	require.Equal(t, []seen{{"a", 1, KindSet, "1"}, {"c", 2, KindSet, "3"}}, drain(it, true))

	// The same again from a fresh start, and for a raw view.
	require.Equal(t, []seen{{"a", 1, KindSet, "1"}, {"c", 2, KindSet, "3"}}, drain(it, it.First()))
	raw := m.NewEntryIterator(&IterOptions{Seq: 2})
	require.Equal(t, []seen{{"a", 1, KindSet, "1"}, {"c", 2, KindSet, "3"}}, drain(raw, raw.First()))
}

func TestIteratorOnEmptyMemstore(t *testing.T) {
	m := New(nil)
	for _, it := range []*Iterator{m.NewIterator(nil), m.NewEntryIterator(nil)} {
		require.False(t, it.First())
		require.False(t, it.SeekGE([]byte("a")))
		require.False(t, it.Next())
	}
}

// An iterator that is not at an entry returns zero values, never a panic or
// the last entry it was at; a closed one also refuses to move.
func TestIteratorAccessorsWhenUnpositioned(t *testing.T) {
	full := build(t, set("a", "va"), del("b"), set("c", "vc"))
	empty := New(nil)
	views := []struct {
		name string
		open func(m *Memstore) *Iterator
	}{
		{"live", func(m *Memstore) *Iterator { return m.NewIterator(nil) }},
		{"entries", func(m *Memstore) *Iterator { return m.NewEntryIterator(nil) }},
	}
	states := []struct {
		name string
		m    *Memstore
		move func(t *testing.T, it *Iterator)
		// next is what Next returns then: after a backward move ran off
		// the start, it turns back to the first entry.
		next bool
	}{
		{name: "fresh", m: full, move: func(*testing.T, *Iterator) {}},
		{name: "First on an empty memstore", m: empty, move: func(t *testing.T, it *Iterator) {
			require.False(t, it.First())
		}},
		{name: "Next past the end", m: full, move: func(t *testing.T, it *Iterator) {
			require.True(t, it.First())
			for it.Next() {
			}
		}},
		{name: "SeekGE past the end", m: full, move: func(t *testing.T, it *Iterator) {
			require.True(t, it.First())
			require.False(t, it.SeekGE([]byte("z")))
		}},
		{name: "Last on an empty memstore", m: empty, move: func(t *testing.T, it *Iterator) {
			require.False(t, it.Last())
		}},
		{name: "Prev past the start", m: full, next: true, move: func(t *testing.T, it *Iterator) {
			require.True(t, it.Last())
			for it.Prev() {
			}
		}},
		{name: "SeekLT before the start", m: full, next: true, move: func(t *testing.T, it *Iterator) {
			require.True(t, it.Last())
			require.False(t, it.SeekLT([]byte("a")))
		}},
		{name: "Close", m: full, move: func(t *testing.T, it *Iterator) {
			require.True(t, it.First())
			require.NoError(t, it.Close())
		}},
		{name: "First after Close", m: full, move: func(t *testing.T, it *Iterator) {
			require.NoError(t, it.Close())
			require.False(t, it.First())
		}},
		{name: "SeekGE after Close", m: full, move: func(t *testing.T, it *Iterator) {
			require.NoError(t, it.Close())
			require.False(t, it.SeekGE([]byte("a")))
		}},
		{name: "Last and Prev after Close", m: full, move: func(t *testing.T, it *Iterator) {
			require.True(t, it.First())
			require.NoError(t, it.Close())
			require.False(t, it.Last())
			require.False(t, it.Prev())
			require.False(t, it.SeekLT([]byte("z")))
		}},
	}
	for _, v := range views {
		for _, st := range states {
			t.Run(v.name+"/"+st.name, func(t *testing.T) {
				it := v.open(st.m)
				require.NotPanics(t, func() { st.move(t, it) })
				var got seen
				var key, value []byte
				require.NotPanics(t, func() { key, got.seq, got.kind, value = it.Key(), it.Seq(), it.Kind(), it.Value() })
				require.False(t, it.Valid())
				require.Nil(t, key)
				require.Nil(t, value)
				require.Zero(t, got)
				require.Equal(t, st.next, it.Next())
				require.NoError(t, it.Err())
			})
		}
	}
}

func TestAll(t *testing.T) {
	m := build(t, testHistory...)
	var got []string
	for k, v := range m.All() {
		got = append(got, string(k)+"="+string(v))
	}
	require.Equal(t, []string{"a=a5", "b=b8", "d="}, got)

	got = nil
	for k := range m.All() {
		if string(k) == "b" {
			break
		}
		got = append(got, string(k))
	}
	require.Equal(t, []string{"a"}, got)
}

func TestBackward(t *testing.T) {
	m := build(t, testHistory...)
	var got []string
	for k, v := range m.Backward() {
		got = append(got, string(k)+"="+string(v))
	}
	require.Equal(t, []string{"d=", "b=b8", "a=a5"}, got)

	got = nil
	for k := range m.Backward() {
		if string(k) == "a" {
			break
		}
		got = append(got, string(k))
	}
	require.Equal(t, []string{"d", "b"}, got)
}
