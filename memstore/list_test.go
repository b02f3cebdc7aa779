package memstore

import (
	"bytes"
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/testseed"
	"github.com/stretchr/testify/require"
)

// checkList checks the shape of l: at every level the nodes ascend
// strictly, each level's nodes are among those of the level below, and
// level 0 holds length nodes. It returns the keys and trailers in order.
func checkList(t *testing.T, l *list) (keys [][]byte, trailers []uint64) {
	t.Helper()
	tb := l.arena.load()
	below := map[*node]bool{}
	for level := maxHeight - 1; level >= 0; level-- {
		here := map[*node]bool{}
		var prev *node
		for n := l.head; ; {
			x := addr(n.link(level).Load())
			if x == 0 {
				break
			}
			_, n = l.arena.node(tb, x)
			if prev != nil {
				c, _ := compare(prev, n.key(), keyWord(n.key()), n.tail().trailer)
				require.Negative(t, c, "level %d: %q@%x before %q@%x", level, prev.key(), prev.tail().trailer, n.key(), n.tail().trailer)
			}
			here[n] = true
			prev = n
			if level == 0 {
				keys = append(keys, n.key())
				trailers = append(trailers, n.tail().trailer)
			}
		}
		for n := range below {
			require.True(t, here[n], "level %d lacks a node of level %d", level, level+1)
		}
		below = here
	}
	require.Len(t, keys, int(l.length.Load()))
	return keys, trailers
}

// The splice that spares inserts their search must leave the same list as
// searches do: for keys in ascending and descending order, versions of one
// key, and random keys that sometimes land next to the last one.
func TestInsertOrders(t *testing.T) {
	seed := testseed.Seed(t)
	const n = 3000
	key := func(i int) []byte { return fmt.Appendf(nil, "%016d", i) }
	tests := []struct {
		name  string
		write func(rng *rand.Rand, i int) []byte
		// spliced: every insert after the first takes the splice.
		spliced bool
	}{
		{"ascending", func(_ *rand.Rand, i int) []byte { return key(i) }, true},
		{"descending", func(_ *rand.Rand, i int) []byte { return key(n - i) }, true},
		{"one key", func(*rand.Rand, int) []byte { return key(7) }, true},
		{"few keys", func(rng *rand.Rand, _ int) []byte { return key(rng.IntN(5)) }, false},
		{"random", func(rng *rand.Rand, _ int) []byte { return key(rng.IntN(n)) }, false},
		{"runs", func(rng *rand.Rand, i int) []byte { return key(i/50*1000 - i%50*rng.IntN(2)) }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 0))
			var l list
			l.init(seed, nil)
			type entry struct {
				key     []byte
				trailer uint64
			}
			var want []entry
			for i := range n {
				k := tt.write(rng, i)
				tr := base.MakeTrailer(uint64(i+1), KindSet)
				// Where the splice applies, it finds what a search finds.
				var spliced, searched [maxHeight]addr
				if l.spliceAt(k, tr, &spliced) {
					l.find(k, tr, &searched)
					require.Equal(t, searched, spliced, "insert %d", i)
				} else {
					require.False(t, tt.spliced && i > 0, "insert %d takes no splice", i)
				}
				l.insert(k, nil, tr)
				want = append(want, entry{k, tr})
			}
			slices.SortFunc(want, func(a, b entry) int {
				if c := bytes.Compare(a.key, b.key); c != 0 {
					return c
				}
				return cmp.Compare(b.trailer, a.trailer)
			})
			keys, trailers := checkList(t, &l)
			for i, e := range want {
				require.Equal(t, e.key, keys[i], "entry %d", i)
				require.Equal(t, e.trailer, trailers[i], "entry %d", i)
			}
		})
	}
}
