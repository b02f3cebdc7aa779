package memstore

import (
	"bytes"
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/itertest"
	"github.com/stratadb/strata/internal/testseed"
	"github.com/stretchr/testify/require"
)

// model is the simplest possible memstore: the list of every write. A
// range deletion is a write of kind KindRangeDelete whose key is the
// range's start and value its end ("" unbounded). A merge ApplyMerge
// folded is a write of the fold, and foldedAt maps the sequence number of
// the version it folded into to its own: from there on, the raw view shows
// the fold instead.
//
// stacks holds, for each key, what its newest entry is: a stack of that
// many versions (1: a single version), or -1 for a fold's entry. Apply
// stacks onto a stack with room, and ApplyMerge folds into any entry but a
// stack of more than one version.
type model struct {
	writes   []seen
	foldedAt map[uint64]uint64
	stacks   map[string]int
}

// wrote notes a write of key through Put, Delete or Apply.
func (md model) wrote(key string) {
	if d := md.stacks[key]; d > 0 && d < maxStack {
		md.stacks[key] = d + 1
		return
	}
	md.stacks[key] = 1
}

// covers reports whether r, a range deletion, covers key in keyCmp's
// order.
func (r seen) covers(keyCmp func(a, b []byte) int, key string) bool {
	return r.kind == KindRangeDelete && (r.key == "" || keyCmp([]byte(key), []byte(r.key)) >= 0) &&
		(r.value == "" || keyCmp([]byte(key), []byte(r.value)) < 0)
}

// coveredAt reports whether a range deletion in (entrySeq, seq] covers key.
func (md model) coveredAt(keyCmp func(a, b []byte) int, key string, entrySeq, seq uint64) bool {
	return slices.ContainsFunc(md.writes, func(r seen) bool { return r.seq > entrySeq && r.seq <= seq && r.covers(keyCmp, key) })
}

// points counts the writes that are entries: not range deletions, nor
// versions folded into.
func (md model) points() int {
	n := 0
	for _, r := range md.writes {
		if _, folded := md.foldedAt[r.seq]; r.kind != KindRangeDelete && !folded {
			n++
		}
	}
	return n
}

// order is a key order the model test runs in: the memstore's comparator
// and the same order for the model.
type order struct {
	name string
	c    *Comparator
}

// orders are bytewise order, which the memstore searches a word at a time,
// and its reverse, which goes through the comparator.
var orders = []order{
	{"bytewise", base.Bytewise},
	{"reverse", &Comparator{Name: "test.reverse", Compare: func(a, b []byte) int { return bytes.Compare(b, a) }}},
}

func (md model) getAt(keyCmp func(a, b []byte) int, key string, seq uint64) (string, Result) {
	if r, ok := md.newest(keyCmp, key, seq); ok {
		switch r.kind {
		case KindRangeDelete, KindDelete:
			return "", Deleted
		case KindMerge:
			return r.value, Merge
		}
		return r.value, Found
	}
	return "", Absent
}

// newest returns the newest write at or below seq that decides key: a
// version of it, or a range deletion covering it.
func (md model) newest(keyCmp func(a, b []byte) int, key string, seq uint64) (seen, bool) {
	var best seen
	found := false
	for _, r := range md.writes {
		if r.seq <= seq && (r.key == key && r.kind != KindRangeDelete || r.covers(keyCmp, key)) && (!found || r.seq > best.seq) {
			best, found = r, true
		}
	}
	return best, found
}

// entries returns the raw view at seq within [lo, hi) (nil: unbounded) in
// keyCmp's order.
func (md model) entries(keyCmp func(a, b []byte) int, seq uint64, lo, hi []byte) []seen {
	var out []seen
	for _, r := range md.writes {
		k := []byte(r.key)
		if f, folded := md.foldedAt[r.seq]; folded && f <= seq {
			continue // the fold above it shows instead
		}
		if r.kind != KindRangeDelete && r.seq <= seq && (lo == nil || keyCmp(k, lo) >= 0) && (hi == nil || keyCmp(k, hi) < 0) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b seen) int {
		if c := keyCmp([]byte(a.key), []byte(b.key)); c != 0 {
			return c
		}
		return cmp.Compare(b.seq, a.seq)
	})
	return out
}

// live returns the live view at seq within [lo, hi).
func (md model) live(keyCmp func(a, b []byte) int, seq uint64, lo, hi []byte) []seen {
	var out []seen
	entries := md.entries(keyCmp, seq, lo, hi)
	for i, r := range entries {
		// The first entry of each key is its newest version.
		if (i == 0 || entries[i-1].key != r.key) && r.kind != KindDelete && !md.coveredAt(keyCmp, r.key, r.seq, seq) {
			out = append(out, r)
		}
	}
	return out
}

// concatMerge appends newer to older; it is associative. It refuses to
// make a value over 40 bytes, so that some folds fail.
func concatMerge(_, older, newer []byte) ([]byte, error) {
	if len(older)+len(newer) > 40 {
		return nil, fmt.Errorf("%d and %d bytes: too long", len(older), len(newer))
	}
	return append(slices.Clip(older), newer...), nil
}

// fold returns the write ApplyMerge(seq, key, operand) with Folder{Merge:
// concatMerge, Above: above} makes, and whether it folds: it does onto
// key's newest version, if that is numbered above above, no range
// deletion came after it and the merge succeeds. A fold is recorded.
func (md model) fold(keyCmp func(a, b []byte) int, key, operand string, seq, above uint64) (seen, bool) {
	plain := seen{key, seq, KindMerge, operand}
	r, ok := md.newest(keyCmp, key, MaxSeq)
	if !ok || r.kind == KindRangeDelete || r.seq <= above || md.stacks[key] > 1 {
		md.stacks[key] = 1
		return plain, false
	}
	kind, value := KindSet, operand
	if r.kind != KindDelete {
		v, err := concatMerge(nil, []byte(r.value), []byte(operand))
		if err != nil {
			md.stacks[key] = 1
			return plain, false
		}
		kind, value = r.kind, string(v)
	}
	md.foldedAt[r.seq] = seq
	md.stacks[key] = -1
	return seen{key, seq, kind, value}, true
}

// heldIterator is an iterator opened earlier and moved a step at a time
// while writes go on: its view is fixed at its sequence number, so a Cursor
// over what it must show models it.
type heldIterator struct {
	it   *Iterator
	want []seen
	c    *itertest.Cursor
}

// orNil returns s, or nil when it is empty, as drain returns it.
func orNil(s []seen) []seen {
	if len(s) == 0 {
		return nil
	}
	return s
}

// cursor returns a model cursor over the keys of view, in keyCmp's order.
func cursor(view []seen, keyCmp func(a, b []byte) int) *itertest.Cursor {
	keys := make([][]byte, len(view))
	for i, s := range view {
		keys[i] = []byte(s.key)
	}
	return itertest.NewCursorFunc(keys, keyCmp)
}

// TestModel drives a memstore and a model with the same random writes and
// compares their reads, at the latest and at past sequence numbers, after
// every step. Keys come from a tiny alphabet, so that they are often
// prefixes of each other and equal in their first word, and zero bytes
// meet the zero padding of short keys' words.
func TestModel(t *testing.T) {
	for _, o := range orders {
		t.Run(o.name+"/short keys", func(t *testing.T) {
			testModel(t, o.c, func(rng *rand.Rand) []byte { return tinyKey(rng, 1+rng.IntN(10)) })
		})
		// Keys that share prefixes of many lengths, across word
		// boundaries, drive the search's skipping of shared words; now and
		// then a key too large for a chunk.
		const prefix = "tenant-0001/table-00000042/user:00000000000000000000"
		t.Run(o.name+"/shared prefixes", func(t *testing.T) {
			testModel(t, o.c, func(rng *rand.Rand) []byte {
				p := []int{0, 7, 8, 9, 15, 16, 17, 24, 31, 40, len(prefix)}[rng.IntN(11)]
				n := rng.IntN(12)
				if rng.IntN(200) == 0 {
					n = arenaLargeEntry + rng.IntN(100)
				}
				return append([]byte(prefix[:p]), tinyKey(rng, max(n, 1-p))...)
			})
		})
	}
}

// tinyKey returns n bytes from the alphabet a, b, 0x00.
func tinyKey(rng *rand.Rand, n int) []byte {
	k := make([]byte, n)
	for i := range k {
		k[i] = "ab\x00"[rng.IntN(3)]
	}
	return k
}

func testModel(t *testing.T, c *Comparator, key func(*rand.Rand) []byte) {
	seed := testseed.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 0))
	// Odd seeds run off the heap: the arena's other allocator.
	m := New(&Options{Seed: seed, Comparator: c, OffHeap: seed%2 == 1})
	defer m.Release()
	keyCmp := c.Compare
	md := model{foldedAt: map[uint64]uint64{}, stacks: map[string]int{}}
	randomKey := func() []byte { return key(rng) }
	randomValue := func() []byte {
		switch rng.IntN(20) {
		case 0:
			return nil
		case 1:
			return make([]byte, arenaLargeEntry+rng.IntN(arenaLargeEntry))
		}
		v := make([]byte, rng.IntN(20))
		for i := range v {
			v[i] = byte(rng.Uint32())
		}
		return v
	}
	randomBound := func() []byte {
		if rng.IntN(3) == 0 {
			return nil
		}
		return randomKey()
	}
	randomSeq := func() uint64 { return 1 + rng.Uint64N(m.LastSeq()+1) }
	// newView returns an iterator over the live or the raw view with o,
	// and what the model says it must show. A zero o.Seq reads at
	// LastSeq.
	newView := func(o *IterOptions) (*Iterator, []seen) {
		seq := o.Seq
		if seq == 0 {
			seq = m.LastSeq()
		}
		if rng.IntN(2) == 0 {
			return m.NewIterator(o), md.live(keyCmp, seq, o.LowerBound, o.UpperBound)
		}
		return m.NewEntryIterator(o), md.entries(keyCmp, seq, o.LowerBound, o.UpperBound)
	}
	var held []*heldIterator

	steps := 2500
	if testseed.Long() {
		steps = 20000
	}
	for step := range steps {
		switch op := rng.IntN(100); {
		case op < 40:
			k, v := randomKey(), randomValue()
			require.NoError(t, m.Put(k, v))
			md.wrote(string(k))
			md.writes = append(md.writes, seen{string(k), m.LastSeq(), KindSet, string(v)})
		case op < 55:
			k := randomKey()
			require.NoError(t, m.Delete(k))
			md.wrote(string(k))
			md.writes = append(md.writes, seen{string(k), m.LastSeq(), KindDelete, ""})
		case op < 60 && rng.IntN(2) == 0:
			// A range deletion, now and then through Apply.
			lo, hi := randomBound(), randomBound()
			if lo != nil && hi != nil && keyCmp(lo, hi) >= 0 {
				require.ErrorIs(t, m.DeleteRange(lo, hi), ErrBadRangeDel)
				continue
			}
			seq := m.LastSeq() + 1
			if rng.IntN(2) == 0 {
				require.NoError(t, m.DeleteRange(lo, hi))
			} else {
				seq += rng.Uint64N(3)
				require.NoError(t, m.Apply(seq, KindRangeDelete, lo, hi))
			}
			md.writes = append(md.writes, seen{string(lo), seq, KindRangeDelete, string(hi)})
		case op < 60:
			k, v, kind := randomKey(), randomValue(), Kind(rng.IntN(2))
			seq := m.LastSeq() + 1 + rng.Uint64N(3)
			require.NoError(t, m.Apply(seq, kind, k, v))
			md.wrote(string(k))
			if kind == KindDelete {
				v = nil
			}
			md.writes = append(md.writes, seen{string(k), seq, kind, string(v)})
		case op < 65:
			// A merge, folded when the memstore can (see ApplyMerge).
			k, v := randomKey(), randomValue()
			seq := m.LastSeq() + 1 + rng.Uint64N(3)
			above := uint64(0)
			if rng.IntN(3) == 0 {
				above = randomSeq()
			}
			want, wantFolded := md.fold(keyCmp, string(k), string(v), seq, above)
			folded, err := m.ApplyMerge(seq, k, v, Folder{Merge: concatMerge, Above: above})
			require.NoError(t, err)
			require.Equal(t, wantFolded, folded, "step %d: ApplyMerge(%q) at %d above %d", step, k, seq, above)
			md.writes = append(md.writes, want)
		case op < 70:
			k := randomKey()
			want, wantFound := md.getAt(keyCmp, string(k), MaxSeq)
			got, found := m.Get(k)
			require.Equal(t, wantFound, found, "step %d: Get(%q)", step, k)
			require.Equal(t, want, string(got), "step %d: Get(%q)", step, k)
		case op < 80:
			k, seq := randomKey(), randomSeq()
			want, wantFound := md.getAt(keyCmp, string(k), seq)
			got, found := m.GetAt(k, seq)
			require.Equal(t, wantFound, found, "step %d: GetAt(%q, %d)", step, k, seq)
			require.Equal(t, want, string(got), "step %d: GetAt(%q, %d)", step, k, seq)
		case op < 86:
			// A whole view, both ways.
			o := IterOptions{LowerBound: randomBound(), UpperBound: randomBound(), Seq: randomSeq()}
			it, want := newView(&o)
			require.Equal(t, want, drain(it, it.First()), "step %d: %+v", step, o)
			require.Equal(t, reversed(want), drainBack(it, it.Last()), "step %d: backward %+v", step, o)
		case op < 89:
			// Seek to a random key of a fresh iterator at a past seq, and
			// walk on from there.
			o := IterOptions{LowerBound: randomBound(), UpperBound: randomBound(), Seq: randomSeq()}
			k := randomKey()
			it, view := newView(&o)
			i := slices.IndexFunc(view, func(s seen) bool { return keyCmp([]byte(s.key), k) >= 0 })
			if i < 0 {
				i = len(view)
			}
			if rng.IntN(2) == 0 {
				require.Equal(t, orNil(view[i:]), drain(it, it.SeekGE(k)), "step %d: SeekGE(%q) %+v", step, k, o)
			} else {
				require.Equal(t, orNil(reversed(view[:i])), drainBack(it, it.SeekLT(k)), "step %d: SeekLT(%q) %+v", step, k, o)
			}
		case op < 92:
			// A random walk, switching direction anywhere.
			o := IterOptions{LowerBound: randomBound(), UpperBound: randomBound(), Seq: randomSeq()}
			it, view := newView(&o)
			itertest.Walk(t, rng, it, cursor(view, keyCmp), 50, randomKey, func(i int) {
				require.Equal(t, view[i], current(it), "step %d: walk %+v", step, o)
			}, fmt.Sprintf("step %d: walk", step))
		case op < 96:
			// A few held iterators at a time: the oldest goes.
			if len(held) == 8 {
				held = held[1:]
			}
			o := IterOptions{LowerBound: randomBound(), UpperBound: randomBound()}
			h := &heldIterator{}
			h.it, h.want = newView(&o)
			h.c = cursor(h.want, keyCmp)
			require.Equal(t, h.c.First(), h.it.First())
			held = append(held, h)
		default:
			// Move every held iterator a step or a few, either way.
			for i, h := range held {
				itertest.Walk(t, rng, h.it, h.c, 1, randomKey, func(j int) {
					require.Equal(t, h.want[j], current(h.it), "step %d: held iterator %d", step, i)
				}, fmt.Sprintf("step %d: held iterator %d", step, i))
			}
		}
		require.Equal(t, md.points(), m.Len())
	}
}
