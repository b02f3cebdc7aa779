package simpledb

import (
	"bytes"
	"slices"
	"testing"

	"github.com/stratadb/strata/internal/manifest"
	"github.com/stretchr/testify/require"
)

// pickOptions are small sizes for picking by hand: L0 is due at 4 tables,
// L1's target is 1000 bytes, L2's 10000, and a move may overlap 1000 bytes
// of its grandparents.
func pickOptions() *Options {
	o := (&Options{L0CompactionTrigger: 4, BaseLevelSize: 1000, LevelSizeRatio: 10, TargetTableSize: 100}).withDefaults()
	return &o
}

// pt is a table of size bytes holding keys smallest to largest; only what
// picking reads is set. Its number orders L0: the higher, the newer.
func pt(num, size uint64, smallest, largest string) *table {
	return &table{TableInfo: manifest.TableInfo{Num: num, Size: size, Smallest: []byte(smallest), Largest: []byte(largest)}}
}

// pickVersion returns a version of the tables given per level, in the
// order reads visit them.
func pickVersion(levels map[int][]*table) *version {
	v := &version{cmp: bytes.Compare}
	for level, tables := range levels {
		v.levels[level] = tables
	}
	v.sortLevels()
	return v
}

func tableNums(tables []*table) []uint64 {
	var nums []uint64
	for _, t := range tables {
		nums = append(nums, t.Num)
	}
	return nums
}

func TestLevelTargetAndGrandparentLimit(t *testing.T) {
	o := pickOptions()
	for level, want := range map[int]int64{1: 1000, 2: 10_000, 3: 100_000, 6: 100_000_000} {
		require.Equal(t, want, o.levelTarget(level), "L%d", level)
	}
	require.Equal(t, int64(1000), o.maxGrandparentOverlap())
}

// newCompaction takes the tables of the next level that the union of its
// inputs' ranges overlaps, bounds included.
func TestNewCompactionInputs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		level  int
		from   []*table
		next   []*table // level+1
		inputs []uint64 // inputs[1]
	}{
		{"one table, touching bounds count", 1, []*table{pt(1, 10, "c", "f")},
			[]*table{pt(10, 10, "a", "b"), pt(11, 10, "b", "c"), pt(12, 10, "d", "e"), pt(13, 10, "f", "g"), pt(14, 10, "h", "i")},
			[]uint64{11, 12, 13}},
		// A table of the next level between two inputs is in their range,
		// and so in the compaction, though neither input overlaps it.
		{"the union of several ranges", 0, []*table{pt(2, 10, "k", "m"), pt(1, 10, "c", "d")},
			[]*table{pt(10, 10, "a", "b"), pt(11, 10, "e", "f"), pt(12, 10, "l", "n"), pt(13, 10, "o", "p")},
			[]uint64{11, 12}},
		{"nothing overlapped", 2, []*table{pt(1, 10, "c", "d")},
			[]*table{pt(10, 10, "a", "b"), pt(11, 10, "e", "f")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := pickVersion(map[int][]*table{tc.level: tc.from, tc.level + 1: tc.next})
			c := newCompaction(v, tc.level, tc.from)
			require.Equal(t, tc.level, c.level)
			require.Equal(t, tableNums(tc.from), tableNums(c.inputs[0]))
			require.Equal(t, tc.inputs, tableNums(c.inputs[1]))
		})
	}
}

// pickWant is the compaction pick must return: nil if level is -1.
type pickWant struct {
	level        int
	inputs, next []uint64 // inputs[0] and inputs[1]
	move         bool
	ptr          string // the level's compaction pointer after the pick, L1 and below
}

func TestPick(t *testing.T) {
	big := func(num uint64, smallest, largest string) *table { return pt(num, 600, smallest, largest) }
	for _, tc := range []struct {
		name   string
		levels map[int][]*table
		want   pickWant
	}{
		// The last level has no target: however large, it is never due.
		{"nothing due", map[int][]*table{
			0: {pt(3, 10, "a", "b"), pt(2, 10, "a", "b"), pt(1, 10, "a", "b")},
			1: {pt(10, 999, "a", "z")},
			2: {pt(20, 9999, "a", "z")},
			6: {pt(60, 1<<40, "a", "z")},
		}, pickWant{level: -1}},
		{"a level exactly at its target is not due", map[int][]*table{
			1: {pt(10, 500, "a", "b"), pt(11, 500, "c", "d")},
		}, pickWant{level: -1}},
		// Every L0 table overlaps L1 or an older L0 table: none can move.
		{"L0 at the trigger merges with the L1 tables it overlaps", map[int][]*table{
			0: {pt(4, 10, "b", "d"), pt(3, 10, "c", "e"), pt(2, 10, "b", "c"), pt(1, 10, "d", "f")},
			1: {pt(10, 10, "a", "c"), pt(11, 10, "e", "g"), pt(12, 10, "x", "z")},
		}, pickWant{level: 0, inputs: []uint64{4, 3, 2, 1}, next: []uint64{10, 11}}},
		// 1 overlaps L1, 2 overlaps the older 1, 4 overlaps the older 2;
		// 3 and 5 may move, and 3 is the older.
		{"L0 moves its oldest movable table", map[int][]*table{
			0: {pt(5, 10, "x", "y"), pt(4, 10, "a", "b"), pt(3, 10, "m", "n"), pt(2, 10, "a", "c"), pt(1, 10, "b", "d")},
			1: {pt(10, 10, "c", "d")},
		}, pickWant{level: 0, inputs: []uint64{3}, move: true}},
		{"L0 over a smaller score of L1", map[int][]*table{
			0: {pt(6, 10, "a", "b"), pt(5, 10, "a", "b"), pt(4, 10, "a", "b"), pt(3, 10, "a", "b"), pt(2, 10, "a", "b"), pt(1, 10, "a", "b")},
			1: {pt(10, 1200, "a", "c")},
		}, pickWant{level: 0, inputs: []uint64{6, 5, 4, 3, 2, 1}, next: []uint64{10}}},
		// L0 at its trigger scores 1; L1 at 1.5 beats it and L2 at 1.2.
		{"L1 over a smaller score of L0 and L2", map[int][]*table{
			0: {pt(4, 10, "a", "b"), pt(3, 10, "a", "b"), pt(2, 10, "a", "b"), pt(1, 10, "a", "b")},
			1: {big(10, "a", "c"), big(11, "d", "f"), pt(12, 300, "g", "h")},
			2: {pt(20, 12_000, "b", "e")},
		}, pickWant{level: 1, inputs: []uint64{10}, next: []uint64{20}, ptr: "c"}},
		{"L2 over a smaller score of L1", map[int][]*table{
			1: {pt(10, 1100, "a", "c")},
			2: {pt(20, 30_000, "m", "p")},
		}, pickWant{level: 2, inputs: []uint64{20}, move: true, ptr: "p"}},
		{"a sorted level's move refused by its grandparents", map[int][]*table{
			1: {pt(10, 1100, "a", "c")},
			3: {pt(30, 1001, "b", "b")},
		}, pickWant{level: 1, inputs: []uint64{10}, ptr: "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cs compactionState
			c := cs.pick(pickVersion(tc.levels), pickOptions())
			if tc.want.level < 0 {
				require.Nil(t, c)
				require.Equal(t, [NumLevels][]byte{}, cs.ptr, "a pick of nothing moves no pointer")
				return
			}
			require.NotNil(t, c)
			require.Equal(t, tc.want.level, c.level)
			require.Equal(t, tc.want.inputs, tableNums(c.inputs[0]))
			require.Equal(t, tc.want.next, tableNums(c.inputs[1]))
			require.Equal(t, tc.want.move, c.move)
			if tc.want.level > 0 {
				require.Equal(t, tc.want.ptr, string(cs.ptr[tc.want.level]))
			}
		})
	}
}

// Picks of a level over its target walk its tables in key order, each
// starting past where the last ended, and wrap around at its end.
func TestPickRoundRobin(t *testing.T) {
	v := pickVersion(map[int][]*table{
		1: {pt(10, 500, "a", "b"), pt(11, 500, "c", "d"), pt(12, 500, "e", "f")},
		2: {pt(20, 10, "d", "e")},
	})
	var cs compactionState
	for i, want := range []struct {
		table uint64
		next  []uint64
	}{{10, nil}, {11, []uint64{20}}, {12, []uint64{20}}, {10, nil}, {11, []uint64{20}}} {
		c := cs.pick(v, pickOptions())
		require.NotNil(t, c, "pick %d", i)
		require.Equal(t, 1, c.level, "pick %d", i)
		require.Equal(t, []uint64{want.table}, tableNums(c.inputs[0]), "pick %d", i)
		require.Equal(t, want.next, tableNums(c.inputs[1]), "pick %d", i)
		require.Equal(t, want.next == nil, c.move, "pick %d: a table nothing below overlaps moves", i)
		require.Equal(t, c.inputs[0][0].Largest, cs.ptr[1], "pick %d", i)
	}
}

// A pointer left by an earlier version, where a table of that version
// ended, resumes at the first table that starts past it: not one that
// starts at it or holds it.
func TestPickResumesPastPointer(t *testing.T) {
	v := pickVersion(map[int][]*table{
		1: {pt(10, 500, "a", "d"), pt(11, 500, "e", "h"), pt(12, 500, "i", "k")},
	})
	for _, tc := range []struct {
		ptr  string
		want uint64
	}{
		{"", 10}, {"b", 11}, {"d", 11}, {"e", 12}, {"f", 12}, {"k", 10}, {"z", 10},
	} {
		cs := compactionState{}
		cs.ptr[1] = []byte(tc.ptr)
		c := cs.pick(v, pickOptions())
		require.Equal(t, []uint64{tc.want}, tableNums(c.inputs[0]), "pointer %q", tc.ptr)
	}
}

func TestTrivialMove(t *testing.T) {
	for _, tc := range []struct {
		name   string
		levels map[int][]*table
		level  int
		from   []uint64 // the tables of level the compaction takes
		want   bool
	}{
		{"a table nothing below overlaps", map[int][]*table{
			1: {pt(10, 10, "c", "d")},
			2: {pt(20, 10, "a", "b"), pt(21, 10, "e", "f")},
		}, 1, []uint64{10}, true},
		{"a table the next level overlaps", map[int][]*table{
			1: {pt(10, 10, "c", "d")},
			2: {pt(20, 10, "d", "e")},
		}, 1, []uint64{10}, false},
		{"two tables", map[int][]*table{
			1: {pt(10, 10, "c", "d"), pt(11, 10, "e", "f")},
		}, 1, []uint64{10, 11}, false},
		{"grandparents overlapped up to the limit", map[int][]*table{
			1: {pt(10, 10, "c", "m")},
			3: {pt(30, 500, "a", "c"), pt(31, 500, "m", "n"), pt(32, 5000, "o", "z")},
		}, 1, []uint64{10}, true},
		{"grandparents overlapped beyond the limit", map[int][]*table{
			1: {pt(10, 10, "c", "m")},
			3: {pt(30, 500, "a", "c"), pt(31, 501, "m", "n"), pt(32, 5000, "o", "z")},
		}, 1, []uint64{10}, false},
		{"the level above the last has no grandparents", map[int][]*table{
			NumLevels - 2: {pt(50, 1<<40, "a", "z")},
		}, NumLevels - 2, []uint64{50}, true},
		{"an L0 table an older one overlaps", map[int][]*table{
			0: {pt(3, 10, "a", "b"), pt(2, 10, "m", "n"), pt(1, 10, "b", "c")},
		}, 0, []uint64{3}, false},
		// A newer table, read first, keeps its keys above the one moved.
		{"an L0 table only a newer one overlaps", map[int][]*table{
			0: {pt(3, 10, "a", "b"), pt(2, 10, "m", "n"), pt(1, 10, "b", "c")},
		}, 0, []uint64{1}, true},
		{"an L0 table with an overlapping grandparent", map[int][]*table{
			0: {pt(2, 10, "a", "b"), pt(1, 10, "m", "n")},
			2: {pt(20, 1001, "n", "o")},
		}, 0, []uint64{1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := pickVersion(tc.levels)
			var from []*table
			for _, tb := range v.levels[tc.level] {
				if slices.Contains(tc.from, tb.Num) {
					from = append(from, tb)
				}
			}
			require.Len(t, from, len(tc.from))
			require.Equal(t, tc.want, newCompaction(v, tc.level, from).trivialMove(pickOptions()))
		})
	}
}

// Above the deepest level that holds data, a level's target is that
// level's size over the ratio per level between them, within the static
// target and BaseLevelSize.
func TestLevelTargetIn(t *testing.T) {
	o := pickOptions()
	for _, tc := range []struct {
		name   string
		levels map[int][]*table
		want   map[int]int64
	}{
		{"one level", map[int][]*table{1: {pt(1, 5000, "a", "b")}}, map[int]int64{1: 1000}},
		{"the deepest level small", map[int][]*table{1: {pt(1, 500, "a", "b")}, 3: {pt(2, 30_000, "a", "z")}},
			map[int]int64{1: 1000, 2: 3000}},
		{"the deepest level large", map[int][]*table{3: {pt(2, 2_000_000, "a", "z")}},
			map[int]int64{1: 1000, 2: 10_000}},
		{"the deepest level empty of data", map[int][]*table{2: {pt(1, 0, "a", "b")}}, map[int]int64{1: 1000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := pickVersion(tc.levels)
			for level, want := range tc.want {
				require.Equal(t, want, o.levelTargetIn(v, level), "L%d", level)
			}
		})
	}
}
