package skiplist

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/stratadb/strata/internal/testseed"
	"github.com/stretchr/testify/require"
)

func TestInsertGetUpsert(t *testing.T) {
	type op struct {
		upsert   bool
		key      string
		value    int
		inserted bool // expected result
	}
	tests := []struct {
		name string
		ops  []op
		want map[string]int // the map's content afterwards
	}{
		{name: "empty", want: map[string]int{}},
		{
			name: "distinct keys",
			ops:  []op{{key: "b", value: 2, inserted: true}, {key: "a", value: 1, inserted: true}, {key: "c", value: 3, inserted: true}},
			want: map[string]int{"a": 1, "b": 2, "c": 3},
		},
		{
			name: "insert keeps the existing value",
			ops:  []op{{key: "a", value: 1, inserted: true}, {key: "a", value: 2}},
			want: map[string]int{"a": 1},
		},
		{
			name: "upsert adds a missing key",
			ops:  []op{{upsert: true, key: "a", value: 1, inserted: true}},
			want: map[string]int{"a": 1},
		},
		{
			name: "upsert replaces, repeatedly",
			ops: []op{
				{key: "a", value: 1, inserted: true},
				{upsert: true, key: "a", value: 2},
				{upsert: true, key: "a", value: 3},
				{key: "a", value: 4},
			},
			want: map[string]int{"a": 3},
		},
		{
			name: "empty string is a key like any other",
			ops:  []op{{key: "", value: 7, inserted: true}, {upsert: true, key: "", value: 8}},
			want: map[string]int{"": 8},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewOrdered[string, int](nil)
			for _, o := range tt.ops {
				if o.upsert {
					require.Equal(t, o.inserted, m.Upsert(o.key, o.value), "Upsert(%q)", o.key)
				} else {
					require.Equal(t, o.inserted, m.Insert(o.key, o.value), "Insert(%q)", o.key)
				}
			}
			require.Equal(t, len(tt.want), m.Len())
			for k, want := range tt.want {
				got, ok := m.Get(k)
				require.True(t, ok, "Get(%q)", k)
				require.Equal(t, want, got, "Get(%q)", k)
			}
			_, ok := m.Get("missing")
			require.False(t, ok)
			got := map[string]int{}
			for k, v := range m.All() {
				got[k] = v
			}
			require.Equal(t, tt.want, got)
		})
	}
}

func TestCeiling(t *testing.T) {
	m := NewOrdered[int, string](nil)
	for _, k := range []int{10, 20, 30} {
		m.Insert(k, fmt.Sprint(k))
	}
	tests := []struct {
		key    int
		want   int
		wantOK bool
	}{
		{key: 5, want: 10, wantOK: true},
		{key: 10, want: 10, wantOK: true},
		{key: 11, want: 20, wantOK: true},
		{key: 30, want: 30, wantOK: true},
		{key: 31, wantOK: false},
	}
	for _, tt := range tests {
		k, v, ok := m.Ceiling(tt.key)
		require.Equal(t, tt.wantOK, ok, "Ceiling(%d)", tt.key)
		if ok {
			require.Equal(t, tt.want, k, "Ceiling(%d)", tt.key)
			require.Equal(t, fmt.Sprint(tt.want), v, "Ceiling(%d)", tt.key)
		}
	}
}

func TestNewBytesOrdersLexicographically(t *testing.T) {
	m := NewBytes[int](nil)
	for i, k := range []string{"b", "a", "ab", "", "ba"} {
		require.True(t, m.Insert([]byte(k), i))
	}
	var keys []string
	for k := range m.All() {
		keys = append(keys, string(k))
	}
	require.Equal(t, []string{"", "a", "ab", "b", "ba"}, keys)
}

func TestCustomComparator(t *testing.T) {
	// Case-insensitive keys: "A" and "a" are the same key.
	m := New[string, int](func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) }, nil)
	require.True(t, m.Insert("A", 1))
	require.False(t, m.Insert("a", 2))
	v, ok := m.Get("a")
	require.True(t, ok)
	require.Equal(t, 1, v)
}

func TestTowerFollowsNode(t *testing.T) {
	// node.link relies on the links of a towered node starting right
	// where its node ends, whatever K and V are.
	require.Equal(t, unsafe.Sizeof(node[int, int]{}),
		unsafe.Offsetof(towered[int, int, [3]atomic.Pointer[node[int, int]]]{}.links))
	require.Equal(t, unsafe.Sizeof(node[[]byte, struct{}]{}),
		unsafe.Offsetof(towered[[]byte, struct{}, [1]atomic.Pointer[node[[]byte, struct{}]]]{}.links))
	require.Equal(t, unsafe.Sizeof(node[struct{}, byte]{}),
		unsafe.Offsetof(towered[struct{}, byte, [2]atomic.Pointer[node[struct{}, byte]]]{}.links))
	require.Equal(t, unsafe.Sizeof(node[bool, [3]byte]{}),
		unsafe.Offsetof(towered[bool, [3]byte, [2]atomic.Pointer[node[bool, [3]byte]]]{}.links))
}

// shape returns the height of every node, in key order.
func shape[K, V any](m *Map[K, V]) []int {
	var heights []int
	for n := m.head.link(0).Load(); n != nil; n = n.link(0).Load() {
		h := 1
		for level := 1; level < int(m.height.Load()); level++ {
			// A node has a link at level l when the walk along level l
			// reaches it.
			for x := m.head.link(level).Load(); x != nil; x = x.link(level).Load() {
				if x == n {
					h = level + 1
				}
			}
		}
		heights = append(heights, h)
	}
	return heights
}

func TestSeedMakesShapeReproducible(t *testing.T) {
	build := func(opts *Options) []int {
		m := NewOrdered[int, int](opts)
		for i := range 500 {
			m.Insert(i, i)
		}
		return shape(m)
	}
	require.Equal(t, build(&Options{Seed: 1}), build(&Options{Seed: 1}))
	require.Equal(t, build(&Options{}), build(nil), "nil options are the zero Options")
	require.NotEqual(t, build(&Options{Seed: 1}), build(&Options{Seed: 2}))
}

func TestHeightDistribution(t *testing.T) {
	m := NewOrdered[int, struct{}](nil)
	counts := make([]int, maxHeight+1)
	const n = 1 << 16
	for range n {
		counts[m.randomHeight()]++
	}
	require.Zero(t, counts[0])
	// Each level holds about half the one below.
	for h := 1; h <= 4; h++ {
		want := float64(n) / float64(int(1)<<h)
		require.InDelta(t, want, float64(counts[h]), want*0.1, "height %d", h)
	}
}

func TestAllocatedBytes(t *testing.T) {
	m := NewOrdered[int, int](nil)
	empty := m.AllocatedBytes()
	require.Positive(t, empty, "the head node counts")
	const n = 100_000
	for i := range n {
		m.Insert(i, i)
	}
	perNode := float64(m.AllocatedBytes()-empty) / n
	// Links per node by height class: each height h has probability
	// 2^-h; the class capacities are those of nodeAllocator.
	classes := []struct{ lo, hi, links int }{
		{1, 1, 1}, {2, 2, 2}, {3, 3, 3}, {4, 4, 4}, {5, 6, 6}, {7, 8, 8}, {9, maxHeight, maxHeight},
	}
	links := 0.0
	for _, c := range classes {
		for h := c.lo; h <= c.hi; h++ {
			links += float64(c.links) / float64(int(1)<<h)
		}
	}
	want := float64(unsafe.Sizeof(node[int, int]{})) + links*8
	// Partly used slabs (up to 64 KiB in each class) add a few bytes.
	require.InDelta(t, want+2, perNode, 2, "bytes per node")
}

// TestModel drives a map and a Go map with the same random operations and
// compares them after every step.
func TestModel(t *testing.T) {
	seed := testseed.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 0))
	m := NewOrdered[int, int](&Options{Seed: seed})
	model := map[int]int{}
	const keySpace = 2000
	for step := range 20_000 {
		k := rng.IntN(keySpace)
		switch op := rng.IntN(10); {
		case op < 4:
			_, had := model[k]
			if !had {
				model[k] = step
			}
			require.Equal(t, !had, m.Insert(k, step), "step %d: Insert(%d)", step, k)
		case op < 6:
			_, had := model[k]
			model[k] = step
			require.Equal(t, !had, m.Upsert(k, step), "step %d: Upsert(%d)", step, k)
		case op < 9:
			want, wantOK := model[k]
			got, ok := m.Get(k)
			require.Equal(t, wantOK, ok, "step %d: Get(%d)", step, k)
			require.Equal(t, want, got, "step %d: Get(%d)", step, k)
		default:
			lo, hi := rng.IntN(keySpace), rng.IntN(keySpace)
			require.Equal(t, modelRange(model, &lo, &hi), collect(m.NewIterator(&lo, &hi)), "step %d: [%d, %d)", step, lo, hi)
		}
		require.Equal(t, len(model), m.Len())
	}
	require.Equal(t, modelRange(model, nil, nil), collect(m.NewIterator(nil, nil)))
}

type pair struct{ k, v int }

// modelRange returns the model's pairs with keys in [*lo, *hi), sorted.
func modelRange(model map[int]int, lo, hi *int) []pair {
	var out []pair
	for k, v := range model {
		if (lo == nil || k >= *lo) && (hi == nil || k < *hi) {
			out = append(out, pair{k, v})
		}
	}
	slices.SortFunc(out, func(a, b pair) int { return a.k - b.k })
	return out
}

// collect returns everything it yields from First on.
func collect(it *Iterator[int, int]) []pair {
	var out []pair
	for ok := it.First(); ok; ok = it.Next() {
		out = append(out, pair{it.Key(), it.Value()})
	}
	return out
}
