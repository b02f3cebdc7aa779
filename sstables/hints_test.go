package sstables

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stretchr/testify/require"
)

// sortedBlockOf builds a block of keys, sorted and without repeats, each
// at the sequence numbers seqs, newest first: entry gives the trailer and
// value of the i-th key at seq.
func sortedBlockOf(keys []string, restartInterval int, seqs []uint64, entry func(i int, key string, seq uint64) (trailer uint64, value []byte)) []byte {
	slices.Sort(keys)
	keys = slices.Compact(keys)
	b := blockBuilder{restartInterval: restartInterval}
	for i, k := range keys {
		for _, seq := range seqs {
			trailer, value := entry(i, k, seq)
			b.add([]byte(k), trailer, value)
		}
	}
	return b.finish()
}

// indexBlockOf builds an index block of keys, sorted, each with a few
// sequence numbers.
func indexBlockOf(keys []string, restartInterval int) []byte {
	return sortedBlockOf(keys, restartInterval, []uint64{base.MaxSeq, 7, 3}, func(i int, _ string, seq uint64) (uint64, []byte) {
		return indexTrailer(seq), BlockHandle{Offset: uint64(i), Length: 1}.append(nil)
	})
}

// requireSameSeek checks that the hints narrow the search to the restart
// point a search of the block finds, and land where it lands, for each
// target and several sequence numbers.
func requireSameSeek(t *testing.T, block []byte, targets [][]byte) {
	t.Helper()
	var plain, hinted blockIter
	require.NoError(t, plain.init(bytes.Compare, block, true))
	require.NoError(t, hinted.init(bytes.Compare, block, true))
	hinted.buildHints()
	require.NotNil(t, hinted.hints.keys)
	for _, target := range targets {
		for _, seq := range []uint64{base.MaxSeq, 8, 7, 5, 3, 0} {
			// The restart point: the last whose entry sorts before the
			// target, found by reading each.
			wantRestart := 0
			for i := range plain.nrestarts {
				rkey, rseq, ok := plain.restartKey(i)
				require.True(t, ok)
				if compareInternal(bytes.Compare, rkey, rseq, target, seq) < 0 {
					wantRestart = i
				}
			}
			// The hints narrow the search to it, and to restart points
			// they cannot tell from the target.
			lo, hi := hinted.hintedRange(target)
			require.True(t, lo <= wantRestart && wantRestart <= hi, "target %q seq %d: %d not in [%d, %d]", target, seq, wantRestart, lo, hi)
			for i := lo + 1; i <= hi; i++ {
				require.Equal(t, hintOf(target, len(hinted.hints.prefix)), hinted.hints.keys[i], "target %q: restart %d in the range", target, i)
			}

			requireSameLanding(t, &plain, &hinted, target, seq)
		}
	}
}

// requireSameLanding seeks target at seq in both iterators, over one
// block, and checks that the hinted one lands where the plain one does,
// and walks on from there alike.
func requireSameLanding(t *testing.T, plain, hinted *blockIter, target []byte, seq uint64) {
	t.Helper()
	want := plain.seekGE(target, seq)
	got := hinted.seekGE(target, seq)
	require.NoError(t, hinted.err)
	require.Equal(t, want, got, "target %q seq %d", target, seq)
	if !want {
		return
	}
	require.Equal(t, string(plain.key), string(hinted.key), "target %q seq %d", target, seq)
	require.Equal(t, plain.seq(), hinted.seq(), "target %q seq %d", target, seq)
	require.Equal(t, string(plain.value), string(hinted.value), "target %q seq %d", target, seq)
	require.Equal(t, plain.nextEntry(), hinted.nextEntry(), "target %q seq %d, the entry after", target, seq)
	require.Equal(t, string(plain.key), string(hinted.key), "target %q seq %d, the entry after", target, seq)
}

// hintedSeekCases are the key sets both kinds of hints are checked
// against; entry hints only where every key lies within 8 bytes past the
// prefix the first and last share.
var hintedSeekCases = []struct {
	name       string
	keys       []string
	entryHints bool
}{
	{"one key", []string{"k"}, true},
	{"a shared prefix", []string{longPrefix + "a", longPrefix + "b", longPrefix + "c", longPrefix + "d", longPrefix + "e"}, true},
	{"8 bytes past the prefix", []string{longPrefix + "abcdefgh", longPrefix + "abcdefgi", longPrefix + "abcdefh", longPrefix + "z"}, true},
	{"keys alike in the hinted 8 bytes", []string{
		longPrefix + "abcdefgh1", longPrefix + "abcdefgh2", longPrefix + "abcdefgh3", longPrefix + "abcdefgh30", longPrefix + "abcdefgh4", longPrefix + "abcdefgi", longPrefix + "z",
	}, false},
	{"keys shorter than 8 bytes past the prefix, and zeros", []string{
		"p", "p\x00", "p\x00\x00", "pa", "pa\x00", "pb", "pzz",
	}, true},
	{"no shared prefix", []string{"", "a", "b", "ba", "c", "\xff\xff"}, true},
	{"fixed-width numbers", []string{"0000000000000041", "0000000000000042", "0000000000000107", "0000000000999999"}, true},
}

const longPrefix = "tenant/0042/"

// seekTargets are targets at, just after, and just before each of keys,
// and around them all.
func seekTargets(keys []string) [][]byte {
	var targets [][]byte
	for _, k := range keys {
		targets = append(targets, []byte(k), append([]byte(k), 0), []byte(k+"~"))
		if len(k) > 0 {
			targets = append(targets, []byte(k[:len(k)-1]))
		}
	}
	return append(targets, nil, []byte("\x00"), []byte("\xff\xff\xff"), []byte(longPrefix), []byte(longPrefix[:3]), []byte(longPrefix+"abcdefgh1"))
}

func TestHintsSeekAsTheBlockDoes(t *testing.T) {
	for _, tt := range hintedSeekCases {
		targets := seekTargets(tt.keys)
		for _, interval := range []int{1, 2, 16} {
			t.Run(fmt.Sprintf("%s/interval=%d", tt.name, interval), func(t *testing.T) {
				requireSameSeek(t, indexBlockOf(slices.Clone(tt.keys), interval), targets)
				if tt.entryHints {
					requireSameEntrySeek(t, dataBlockOf(slices.Clone(tt.keys), interval), targets)
				}
			})
		}
	}
}

func TestRestartHintsSeekRandomKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("ab\x00\xff")
	randomKey := func() []byte {
		k := []byte("shared/")
		for range rng.IntN(14) {
			k = append(k, alphabet[rng.IntN(len(alphabet))])
		}
		return k
	}
	var keys []string
	for range 500 {
		keys = append(keys, string(randomKey()))
	}
	var targets [][]byte
	for range 500 {
		targets = append(targets, randomKey())
	}
	for _, interval := range []int{1, 3, 16} {
		requireSameSeek(t, indexBlockOf(slices.Clone(keys), interval), targets)
	}
}

// A block whose restart keys are out of order gets no hints: its searches
// go as they would have.
func TestRestartHintsRefuseUnorderedBlock(t *testing.T) {
	b := blockBuilder{restartInterval: 1}
	for _, k := range []string{"prefix-b", "prefix-a", "prefix-c"} {
		b.add([]byte(k), indexTrailer(1), BlockHandle{Length: 1}.append(nil))
	}
	var it blockIter
	require.NoError(t, it.init(bytes.Compare, b.finish(), true))
	it.buildHints()
	require.Nil(t, it.hints.keys)
	require.NoError(t, it.err)
}

// A table with the bytewise comparator holds hints for its index, charged
// to the cache with it, and the data blocks its point reads cache keep
// theirs in a cache of hintedCache or more; one with another comparator
// holds none. Reads by them answer as reads without them.
func TestReaderIndexHints(t *testing.T) {
	for _, cmp := range []*Comparator{Bytewise, reverse} {
		for _, capacity := range []int64{1 << 20, hintedCache} {
			t.Run(fmt.Sprintf("%s/cache=%d", cmp.Name, capacity), func(t *testing.T) {
				es := randomEntries(rand.New(rand.NewPCG(3, 4)), 3000)
				slices.SortFunc(es, func(a, b entry) int { return compareInternal(cmp.Compare, a.key, a.seq, b.key, b.seq) })
				path := filepath.Join(t.TempDir(), "t.sst")
				writeTable(t, path, &WriterOptions{Comparator: cmp, BlockSize: 256}, es)
				cache := NewCache(capacity)
				r, err := Open(path, &ReaderOptions{Comparator: cmp, Cache: cache})
				require.NoError(t, err)
				defer r.Close()
				hints := r.index.hints.size()
				if cmp == Bytewise {
					require.Equal(t, 8*r.index.nrestarts, hints)
				} else {
					require.Zero(t, hints)
				}
				require.Equal(t, len(r.index.entries)+len(r.index.restarts)+4+hints+r.slots.size(), r.IndexSize())
				require.Equal(t, r.heldBytes(), cache.Stats().Reserved)
				checkPointReads(t, r, es, rand.New(rand.NewPCG(5, 6)))

				// The data blocks the point reads cached carry their
				// restart hints, stored and charged with them, which the
				// reads of them above searched by (checkPointReads reads
				// each key more than once).
				withHints, withEntryHints := 0, 0
				for i := range cache.shards {
					s := &cache.shards[i]
					s.mu.Lock()
					for _, e := range s.entries {
						require.Equal(t, storedSize(e.block, e.hints), e.stored)
						if e.hints.keys != nil {
							withHints++
							if e.hints.offs != nil {
								withEntryHints++
							}
							var it blockIter
							require.NoError(t, it.init(cmp.Compare, e.block, false))
							if !it.buildEntryHints() {
								it.buildHints()
							}
							require.Equal(t, it.hints.keys, e.hints.keys)
							require.Equal(t, it.hints.offs, e.hints.offs)
							require.Equal(t, it.hints.prefix, e.hints.prefix)
						}
					}
					s.mu.Unlock()
				}
				if cmp == Bytewise && capacity >= hintedCache {
					// Blocks of short keys have entry hints, and those
					// with a long key among them restart hints.
					require.Positive(t, withEntryHints)
					require.Greater(t, withHints, withEntryHints)
				} else {
					require.Zero(t, withHints)
				}
			})
		}
	}
}

// dataBlockOf builds a data block of keys, sorted, each in a few versions.
func dataBlockOf(keys []string, restartInterval int) []byte {
	return sortedBlockOf(keys, restartInterval, []uint64{9, 7, 3}, func(_ int, k string, seq uint64) (uint64, []byte) {
		return seq<<8 | uint64(KindSet), fmt.Appendf(nil, "%s@%d%s", k, seq, strings.Repeat(".", 40))
	})
}

// requireSameEntrySeek checks that a data block's entry hints land each
// seek where the block's own search lands, for each target and several
// sequence numbers.
func requireSameEntrySeek(t *testing.T, block []byte, targets [][]byte) {
	t.Helper()
	var plain, hinted blockIter
	require.NoError(t, plain.init(bytes.Compare, block, false))
	require.NoError(t, hinted.init(bytes.Compare, block, false))
	require.True(t, hinted.buildEntryHints())
	require.Len(t, hinted.hints.offs, len(hinted.hints.keys))
	for _, target := range targets {
		for _, seq := range []uint64{base.MaxSeq, 9, 8, 7, 5, 3, 0} {
			requireSameLanding(t, &plain, &hinted, target, seq)
		}
	}
}

func TestEntryHintsSeekRandomKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte("ab\x00\xff")
	randomKey := func(n int) []byte {
		k := []byte("shared/")
		for range rng.IntN(n) {
			k = append(k, alphabet[rng.IntN(len(alphabet))])
		}
		return k
	}
	var keys []string
	for range 300 {
		keys = append(keys, string(randomKey(9)))
	}
	var targets [][]byte
	for range 500 {
		targets = append(targets, randomKey(12))
	}
	for _, interval := range []int{1, 3, 16} {
		requireSameEntrySeek(t, dataBlockOf(slices.Clone(keys), interval), targets)
	}
}

// A block that entry hints cannot describe whole gets none, and keeps its
// restart hints or its own search.
func TestEntryHintsRefused(t *testing.T) {
	inOrder := dataBlockOf([]string{"key-1", "key-2", "key-3", "key-4"}, 2)
	// The second restart point moved off its entry, onto the first one's
	// value.
	offRestart := bytes.Clone(inOrder)
	restarts := len(offRestart) - 4 - 4*2
	offRestart[restarts+4]++
	bigValues := blockBuilder{restartInterval: 8}
	for i := range 3 {
		bigValues.add(fmt.Appendf(nil, "k%d", i), 1<<8|uint64(KindSet), make([]byte, 30<<10))
	}
	tiny := blockBuilder{restartInterval: 8}
	for i := range 100 {
		tiny.add(fmt.Appendf(nil, "k%03d", i), 1<<8|uint64(KindSet), []byte("v"))
	}
	unordered := blockBuilder{restartInterval: 8}
	for _, k := range []string{"key-1", "key-3", "key-2"} {
		unordered.add([]byte(k), 1<<8|uint64(KindSet), nil)
	}
	tests := []struct {
		name  string
		block []byte
	}{
		{"a key over 8 bytes past the prefix", dataBlockOf([]string{"key-1", "key-123456789", "kez"}, 2)},
		{"entries beyond 64 KiB", bigValues.finish()},
		{"entries too small for hints of their own", tiny.finish()},
		{"keys out of order", unordered.finish()},
		{"a restart point off its entry", offRestart},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var it blockIter
			require.NoError(t, it.init(bytes.Compare, tt.block, false))
			require.False(t, it.buildEntryHints())
			require.Nil(t, it.hints.keys)
			require.NoError(t, it.err)
		})
	}
	var it blockIter
	require.NoError(t, it.init(bytes.Compare, inOrder, false))
	require.True(t, it.buildEntryHints())
}

func TestLowerBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 2, 31, linearBound, linearBound + 1, 100, 500, 1000} {
		keys := make([]uint64, n)
		for i := range keys {
			keys[i] = rng.Uint64N(uint64(n) + 1) // repeats among them
		}
		if n > 0 {
			keys[0] = math.MaxUint64
		}
		slices.Sort(keys)
		for target := uint64(0); target <= uint64(n)+2; target++ {
			want, _ := slices.BinarySearch(keys, target)
			require.Equal(t, want, lowerBound(keys, target), "%d keys, target %d", n, target)
		}
		want, _ := slices.BinarySearch(keys, math.MaxUint64)
		require.Equal(t, want, lowerBound(keys, math.MaxUint64), "%d keys, target MaxUint64", n)
	}
}
