package simpledb

import (
	"bytes"
	"errors"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"

	"github.com/stratadb/strata/internal/filenames"
	"github.com/stratadb/strata/internal/manifest"
	"github.com/stratadb/strata/sstables"
	"github.com/stratadb/strata/vfs"
	"github.com/stratadb/strata/vfs/errorfs"
	"github.com/stretchr/testify/require"
)

// These tests drive a versionSet over an in-memory filesystem, as Open,
// flushes and compactions do, with tables that are never opened: what is
// checked is the bookkeeping, against the manifest read back.

const vsDir = "/db"

// retiredTables records the tables a table cache retires, and how often.
type retiredTables struct {
	mu     sync.Mutex
	counts map[uint64]int
}

func (r *retiredTables) retire(num uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.counts == nil {
		r.counts = map[uint64]int{}
	}
	r.counts[num]++
}

// list returns the numbers retired, ascending, each as often as retired.
func (r *retiredTables) list() []uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var nums []uint64
	for _, num := range slices.Sorted(maps.Keys(r.counts)) {
		for range r.counts[num] {
			nums = append(nums, num)
		}
	}
	return nums
}

func (r *retiredTables) has(num uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.counts[num] > 0
}

// newTestTableCache returns a table cache that opens no table (these
// tests open none) and reports to r each table it retires.
func newTestTableCache(r *retiredTables) *tableCache {
	c := newTableCache(8, vsDir, &Options{FS: vfs.NewMem(), Comparator: sstables.Bytewise, Logger: quietLogger}, nil)
	c.retire = r.retire
	return c
}

// newTestVersionSet starts a set as Open does for an empty directory: an
// empty version and a new manifest.
func newTestVersionSet(t *testing.T, fsys vfs.FS) *versionSet {
	t.Helper()
	require.NoError(t, fsys.MkdirAll(vsDir, 0o755))
	vs := &versionSet{fs: fsys, dir: vsDir, logger: quietLogger, cmpName: sstables.Bytewise.Name, maxRecycled: 2}
	vs.recover(&manifest.State{}, nil)
	v := &version{cmp: bytes.Compare}
	v.refs.Store(1)
	require.Nil(t, vs.install(v))
	require.NoError(t, vs.writeNewManifest(nil))
	return vs
}

// newTestTable returns a table with the caller's reference.
func newTestTable(tc *tableCache, num uint64, smallest, largest string, seq uint64) *table {
	t := &table{tc: tc, TableInfo: manifest.TableInfo{Num: num, Size: 100 * num,
		Smallest: []byte(smallest), Largest: []byte(largest), SmallestSeq: seq, LargestSeq: seq}}
	t.refs.Store(1)
	return t
}

// requireManifestMatches reads the manifest CURRENT names back and checks
// that it describes vs.
func requireManifestMatches(t *testing.T, vs *versionSet) *manifest.State {
	t.Helper()
	name, err := manifest.ReadCurrent(vs.fs, vs.dir)
	require.NoError(t, err)
	require.Equal(t, filepath.Base(filenames.ManifestPath(vs.dir, vs.manifest.num)), name)
	state, err := manifest.Replay(vs.fs, filepath.Join(vs.dir, name), vs.cmpName)
	require.NoError(t, err)
	require.NoError(t, state.Torn)
	for level, tables := range vs.current().levels {
		want, got := map[uint64]manifest.TableInfo{}, map[uint64]manifest.TableInfo{}
		for _, tb := range tables {
			want[tb.Num] = tb.TableInfo
		}
		maps.Copy(got, state.Levels[level])
		require.Equal(t, want, got, "L%d", level)
	}
	require.Equal(t, vs.flushedSeq, state.LastSeq, "LastSeq")
	require.Equal(t, vs.logNum, state.LogNum, "LogNum")
	require.Equal(t, vs.nextFileNum, state.NextFileNum, "NextFileNum")
	return state
}

// A sequence of edits, each written, applied and read back while a reader
// holds the version it replaces: flushes, a compaction, a trivial move.
func TestVersionSetEdits(t *testing.T) {
	var retired retiredTables
	tc := newTestTableCache(&retired)
	vs := newTestVersionSet(t, vfs.NewMem())
	requireManifestMatches(t, vs)
	tables := map[string]*table{}
	lastNum := vs.manifest.num
	newTable := func(name string, level int, smallest, largest string, seq uint64) levelTableRef {
		num := vs.newFileNum()
		require.Equal(t, lastNum+1, num, "file numbers are allocated in order")
		lastNum = num
		tables[name] = newTestTable(tc, num, smallest, largest, seq)
		return levelTableRef{level, tables[name]}
	}
	lt := func(r levelTableRef) manifest.LevelTable {
		return manifest.LevelTable{Level: r.level, Info: r.t.TableInfo}
	}
	del := func(level int, name string) manifest.LevelTable {
		return manifest.LevelTable{Level: level, Info: manifest.TableInfo{Num: tables[name].Num}}
	}
	for _, step := range []struct {
		name string
		edit func() (*manifest.Edit, []levelTableRef)
		// flushedSeq and logNum after the edit; retired, the tables
		// retired once the replaced version's last reader is gone.
		flushedSeq, logNum uint64
		l0                 int64
		retired            []string
	}{
		{"a flush adds an L0 table", func() (*manifest.Edit, []levelTableRef) {
			a := newTable("a", 0, "a", "m", 100)
			return &manifest.Edit{LogNum: 5, LastSeq: 100, Added: []manifest.LevelTable{lt(a)}}, []levelTableRef{a}
		}, 100, 5, 1, nil},
		{"a second flush", func() (*manifest.Edit, []levelTableRef) {
			b := newTable("b", 0, "c", "z", 200)
			return &manifest.Edit{LogNum: 7, LastSeq: 200, Added: []manifest.LevelTable{lt(b)}}, []levelTableRef{b}
		}, 200, 7, 2, nil},
		{"a compaction of both into L1", func() (*manifest.Edit, []levelTableRef) {
			c, d := newTable("c", 1, "a", "k", 0), newTable("d", 1, "l", "z", 0)
			return &manifest.Edit{Deleted: []manifest.LevelTable{del(0, "a"), del(0, "b")},
				Added: []manifest.LevelTable{lt(c), lt(d)}}, []levelTableRef{c, d}
		}, 200, 7, 0, []string{"a", "b"}},
		{"a trivial move to L2", func() (*manifest.Edit, []levelTableRef) {
			d := tables["d"]
			d.ref() // the new version's, as moveTable takes it
			return &manifest.Edit{Deleted: []manifest.LevelTable{del(1, "d")},
				Added: []manifest.LevelTable{{Level: 2, Info: d.TableInfo}}}, []levelTableRef{{2, d}}
		}, 200, 7, 0, []string{"a", "b"}},
		{"a compaction deletes an L1 table", func() (*manifest.Edit, []levelTableRef) {
			return &manifest.Edit{Deleted: []manifest.LevelTable{del(1, "c")}}, nil
		}, 200, 7, 0, []string{"a", "b", "c"}},
	} {
		t.Run(step.name, func(t *testing.T) {
			edit, added := step.edit()
			reader := vs.current()
			reader.ref() // a read holds the version the edit replaces
			require.NoError(t, vs.writeEdit(edit))
			require.Equal(t, vs.nextFileNum, edit.NextFileNum)
			require.Greater(t, vs.nextFileNum, lastNum)
			before := retired.list()
			old := vs.apply(edit, added, nil)
			require.Same(t, reader, old)
			old.unref()
			require.Equal(t, before, retired.list(), "the reader holds the tables the edit deleted")
			var want []uint64
			for _, name := range step.retired {
				want = append(want, tables[name].Num)
			}
			reader.unref()
			require.Equal(t, want, retired.list(), "retired once the last reader is done")
			require.Equal(t, step.flushedSeq, vs.flushedSeq)
			require.Equal(t, step.logNum, vs.logNum)
			require.Equal(t, step.l0, vs.l0Tables.Load())
			requireManifestMatches(t, vs)
		})
	}
	require.Equal(t, int32(1), tables["d"].refs.Load(), "the moved table: the current version's reference alone")
	// Closing drops the current version: its tables are closed, not
	// deleted, the moved one included.
	require.NoError(t, vs.close())
	require.Equal(t, []uint64{tables["a"].Num, tables["b"].Num, tables["c"].Num}, retired.list())
	for name, tb := range tables {
		require.Zero(t, tb.refs.Load(), "table %s", name)
	}
}

// A manifest write that fails may or may not have reached the disk, so no
// edit follows it: writeEdit fails from then on, until restartManifest
// writes the whole state to a new manifest and drops the old one.
func TestVersionSetManifestFailure(t *testing.T) {
	for _, tc := range []struct {
		name string
		ops  errorfs.Op
	}{
		{"write", errorfs.OpWrite},
		{"sync", errorfs.OpSync},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var retired retiredTables
			tcache := newTestTableCache(&retired)
			mem := vfs.NewMem()
			rule := &errorfs.Rule{Ops: tc.ops, Match: errorfs.Contains("MANIFEST"), Err: syscall.EIO}
			current := &errorfs.Rule{Ops: errorfs.OpRename, Match: errorfs.Suffix(filenames.CurrentName), Err: syscall.EIO}
			vs := newTestVersionSet(t, errorfs.Wrap(mem, injectorFunc(func(op errorfs.Op, path string) error {
				return errors.Join(rule.MaybeError(op, path), current.MaybeError(op, path))
			})))
			defer vs.close()
			flush := func(seq uint64) (*manifest.Edit, []levelTableRef) {
				tb := newTestTable(tcache, vs.newFileNum(), "a", "z", seq)
				return &manifest.Edit{LogNum: seq, LastSeq: seq, Added: []manifest.LevelTable{{Level: 0, Info: tb.TableInfo}}},
					[]levelTableRef{{0, tb}}
			}
			edit, added := flush(10)
			require.NoError(t, vs.writeEdit(edit))
			vs.apply(edit, added, nil).unref()
			oldManifest := filenames.ManifestPath(vsDir, vs.manifest.num)

			rule.Enable()
			edit, added = flush(20)
			err := vs.writeEdit(edit)
			require.ErrorIs(t, err, errorfs.ErrInjected)
			require.ErrorIs(t, err, syscall.EIO)
			require.True(t, vs.manifestFailed())
			added[0].t.unref() // not applied, as a flush drops its table
			rule.Disable()
			info, err := mem.Stat(oldManifest)
			require.NoError(t, err)
			edit, added = flush(30)
			require.ErrorIs(t, vs.writeEdit(edit), errorfs.ErrInjected, "the fault cleared, the manifest did not")
			added[0].t.unref()
			after, err := mem.Stat(oldManifest)
			require.NoError(t, err)
			require.Equal(t, info.Size(), after.Size(), "nothing follows the failed edit")

			// A restart that cannot point CURRENT at its manifest leaves
			// the set failed and the old manifest, which CURRENT still
			// names, in place; the next one succeeds.
			current.Enable()
			require.ErrorIs(t, vs.restartManifest(nil), errorfs.ErrInjected)
			require.True(t, vs.manifestFailed())
			name, err := manifest.ReadCurrent(mem, vsDir)
			require.NoError(t, err)
			require.Equal(t, filepath.Base(oldManifest), name)
			_, err = mem.Stat(oldManifest)
			require.NoError(t, err)
			current.Disable()
			logs := []manifest.LogInfo{{Num: 40, ID: 99}}
			require.NoError(t, vs.restartManifest(logs))
			require.False(t, vs.manifestFailed())
			state := requireManifestMatches(t, vs)
			require.Len(t, state.Levels[0], 1, "the failed edit's table is not in the state")
			require.Equal(t, uint64(10), state.LastSeq)
			require.Equal(t, manifest.LogInfo{Num: 40, ID: 99}, state.Logs[40])
			_, err = mem.Stat(oldManifest)
			require.ErrorIs(t, err, fs.ErrNotExist, "the old manifest is deleted")
			// The failed restart's manifest is left for the next Open.
			names, err := mem.List(vsDir)
			require.NoError(t, err)
			for _, name := range names {
				live := name == filenames.CurrentName || name == filepath.Base(filenames.ManifestPath("", vs.manifest.num))
				require.Equal(t, !live, vs.obsolete(name, nil), name)
			}
			require.Len(t, names, 3, "CURRENT, the manifest and the failed restart's")
			require.Empty(t, retired.list(), "tables whose edit failed are orphans for the next Open, not retired")

			// Edits go on in the new manifest, and a restart of a
			// manifest that did not fail does nothing.
			edit, added = flush(50)
			require.NoError(t, vs.writeEdit(edit))
			vs.apply(edit, added, nil).unref()
			num := vs.manifest.num
			require.NoError(t, vs.restartManifest(nil))
			require.Equal(t, num, vs.manifest.num)
			state = requireManifestMatches(t, vs)
			require.Len(t, state.Levels[0], 2)
			require.Equal(t, uint64(50), state.LastSeq)
		})
	}
}

// Obsolete logs are kept for reuse up to maxRecycled; a rotation takes
// the last retired, whose pages are the likeliest cached, and Close all.
func TestVersionSetRecycledLogs(t *testing.T) {
	for _, tc := range []struct {
		maxRecycled int
		kept        []uint64 // of logs 1, 2, 3 retired in order
		taken       []uint64 // by takeRecycledLog, then takeRecycledLogs
	}{
		{0, nil, nil},
		{1, []uint64{1}, []uint64{1}},
		{2, []uint64{1, 2}, []uint64{2, 1}},
		{5, []uint64{1, 2, 3}, []uint64{3, 1, 2}},
	} {
		vs := &versionSet{maxRecycled: tc.maxRecycled}
		var kept, taken []uint64
		for num := uint64(1); num <= 3; num++ {
			if vs.retireLog(manifest.LogInfo{Num: num, ID: 100 + num}) {
				kept = append(kept, num)
			}
		}
		require.Equal(t, tc.kept, kept, "maxRecycled %d", tc.maxRecycled)
		if l := vs.takeRecycledLog(); l != (manifest.LogInfo{}) {
			require.Equal(t, 100+l.Num, l.ID)
			taken = append(taken, l.Num)
		}
		for _, l := range vs.takeRecycledLogs() {
			taken = append(taken, l.Num)
		}
		require.Equal(t, tc.taken, taken, "maxRecycled %d", tc.maxRecycled)
		require.Empty(t, vs.takeRecycledLogs())
		require.Zero(t, vs.takeRecycledLog())
		require.Equal(t, tc.maxRecycled > 0, vs.retireLog(manifest.LogInfo{Num: 9}), "room again once taken")
	}
}

// obsolete tells what a previous session left behind from what the
// database still needs.
func TestVersionSetObsolete(t *testing.T) {
	vs := &versionSet{logNum: 5, nextFileNum: 20}
	vs.manifest.num = 10
	live := map[uint64]bool{7: true}
	for _, tc := range []struct {
		name     string
		obsolete bool
	}{
		{filenames.LogPath("", 4), true},
		{filenames.LogPath("", 5), false},
		{filenames.LogPath("", 6), false},
		{filenames.TablePath("", 7), false},
		{filenames.TablePath("", 8), true},
		{filenames.TablePath("", 20), false}, // past every number allocated: not known to be left behind
		{filenames.ManifestPath("", 9), true},
		{filenames.ManifestPath("", 10), false},
		{filenames.ManifestPath("", 11), true},
		{filenames.TablePath("", 8) + ".tmp", true},
		{filenames.CurrentName + ".tmp", true},
		{filenames.CurrentName, false},
		{filenames.LockName, false},
		{"README", false},
	} {
		require.Equal(t, tc.obsolete, vs.obsolete(tc.name, live), tc.name)
	}
}
