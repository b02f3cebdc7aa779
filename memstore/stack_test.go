package memstore

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// A key written many times keeps its versions in stacks of at most
// maxStack, each an entry: reads at every sequence number, and the raw
// view both ways, see every version, whatever the stacks' boundaries.
func TestStacks(t *testing.T) {
	for _, writes := range []int{1, 2, maxStack - 1, maxStack, maxStack + 1, 3*maxStack + 5} {
		t.Run(fmt.Sprint(writes), func(t *testing.T) {
			m := New(nil)
			require.NoError(t, m.Put([]byte("j"), []byte("j")))
			// The versions of k, oldest first; every seventh a tombstone.
			var versions []seen
			for i := range writes {
				seq := m.LastSeq() + 1
				if i%7 == 6 {
					require.NoError(t, m.Delete([]byte("k")))
					versions = append(versions, seen{"k", seq, KindDelete, ""})
					continue
				}
				v := fmt.Sprintf("v%d", seq)
				require.NoError(t, m.Apply(seq, KindSet, []byte("k"), []byte(v)))
				versions = append(versions, seen{"k", seq, KindSet, v})
			}
			require.NoError(t, m.Put([]byte("l"), []byte("l")))
			require.Equal(t, writes+2, m.Len())
			require.LessOrEqual(t, entriesOf(m, "k"), (writes+maxStack-1)/maxStack, "stacks of up to maxStack")

			for seq := uint64(1); seq <= m.LastSeq(); seq++ {
				// What the raw view over all keys shows at seq: j, then
				// k's versions newest first, then l.
				want := []seen{{"j", 1, KindSet, "j"}}
				var newest *seen
				for i := len(versions) - 1; i >= 0; i-- {
					if versions[i].seq <= seq {
						want = append(want, versions[i])
						if newest == nil {
							newest = &versions[i]
						}
					}
				}
				if last := m.LastSeq(); seq == last {
					want = append(want, seen{"l", last, KindSet, "l"})
				}

				v, res := m.GetAt([]byte("k"), seq)
				switch {
				case newest == nil:
					require.Equal(t, Absent, res, "at %d", seq)
				case newest.kind == KindDelete:
					require.Equal(t, Deleted, res, "at %d", seq)
				default:
					require.Equal(t, Found, res, "at %d", seq)
					require.Equal(t, newest.value, string(v), "at %d", seq)
				}

				it := m.NewEntryIterator(&IterOptions{Seq: seq})
				require.Equal(t, want, drain(it, it.First()), "forward at %d", seq)
				require.Equal(t, reversed(want), drainBack(it, it.Last()), "backward at %d", seq)
				// Turning at each version: one step forward and back
				// returns to it.
				for i := range want {
					require.True(t, seekTo(it, want[i]), "at %d, %v", seq, want[i])
					// A move off an end comes back with the move the
					// other way.
					if it.Next() {
						require.Equal(t, want[i+1], current(it))
					}
					require.True(t, it.Prev())
					require.Equal(t, want[i], current(it), "at %d, back to %v", seq, want[i])
					if it.Prev() {
						require.Equal(t, want[i-1], current(it))
					}
					require.True(t, it.Next())
					require.Equal(t, want[i], current(it), "at %d, on to %v", seq, want[i])
				}
				// SeekLT of the next key lands on k's oldest version.
				if newest != nil {
					require.True(t, it.SeekLT([]byte("l")))
					require.Equal(t, versions[0], current(it), "at %d", seq)
				}
			}
		})
	}
}

// seekTo positions it at e, by SeekGE on its key and steps forward.
func seekTo(it *Iterator, e seen) bool {
	for ok := it.SeekGE([]byte(e.key)); ok; ok = it.Next() {
		if current(it) == e {
			return true
		}
	}
	return false
}

// entriesOf counts the entries of key in m's list: its stacks.
func entriesOf(m *Memstore, key string) int {
	n := 0
	t := m.list.arena.load()
	for x := m.list.head; ; {
		t, x = m.list.next(t, x)
		if x == nil {
			return n
		}
		if string(x.key()) == key {
			n++
		}
	}
}

// A stack stops at a fold's entry and a fold at a stack: a merge onto a
// stack starts an entry, and so does a write onto a fold's entry, which
// the next merge folds into again.
func TestStacksBesideFolds(t *testing.T) {
	m := New(nil)
	k := []byte("k")
	require.NoError(t, m.Apply(1, KindSet, k, u64(5)))
	require.NoError(t, m.Apply(2, KindSet, k, u64(6))) // stacked
	folded, err := m.ApplyMerge(3, k, u64(1), Folder{Merge: addMerge})
	require.NoError(t, err)
	require.False(t, folded, "not into a stack")
	folded, err = m.ApplyMerge(4, k, u64(1), Folder{Merge: addMerge})
	require.NoError(t, err)
	require.True(t, folded, "into the operand's entry")
	require.NoError(t, m.Apply(5, KindSet, k, u64(9))) // not onto the fold
	require.Equal(t, 3, entriesOf(m, "k"))
	require.Equal(t, 4, m.Len())

	for seq, want := range map[uint64]uint64{1: 5, 2: 6, 5: 9} {
		v, res := m.GetAt(k, seq)
		require.Equal(t, Found, res, "at %d", seq)
		require.Equal(t, u64(want), v, "at %d", seq)
	}
	for seq, want := range map[uint64]uint64{3: 1, 4: 2} {
		v, res := m.GetAt(k, seq)
		require.Equal(t, Merge, res, "at %d", seq)
		require.Equal(t, u64(want), v, "at %d", seq)
	}
	it := m.NewEntryIterator(nil)
	var seqs []uint64
	for ok := it.First(); ok; ok = it.Next() {
		seqs = append(seqs, it.Seq())
	}
	require.Equal(t, []uint64{5, 4, 2, 1}, seqs, "the fold shows once, each stacked version on its own")
}
