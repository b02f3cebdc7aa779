package simpledb

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/filenames"
	"github.com/stratadb/strata/internal/manifest"
	"github.com/stratadb/strata/memstore"
	"github.com/stratadb/strata/sstables"
)

// table is a live table: what the manifest records, and its reader. It is
// reference-counted by the versions that contain it (and, until a version
// takes it over, by whoever opened it): when the last reference goes, its
// reader is closed and, if an edit has removed the table, its blocks leave
// the block cache and its file is deleted. The reader itself is the table
// cache's (tablecache.go): closed when unused to bound the open files, and
// reopened on demand; reads pin it, so it is never closed under a Get, an
// iterator or a compaction.
type table struct {
	manifest.TableInfo
	tc       *tableCache
	refs     atomic.Int32
	obsolete atomic.Bool // removed by an edit: delete the file once unreferenced

	// Guarded by tc.mu.
	reader     *sstables.Reader // nil while the file is closed
	opening    chan struct{}    // closed when the open under way ends
	pins       int
	prev, next *table // in the cache's LRU list while open and unpinned

	// rangeDels are the table's range tombstones, taken from its reader
	// when the table was opened first and kept while the table lives, so
	// that iterators and compactions need not open it to learn them: they
	// are small, and few tables hold any.
	rangeDels []sstables.RangeFragment
}

func (t *table) ref() { t.refs.Add(1) }

func (t *table) unref(d *DB) {
	if t.refs.Add(-1) != 0 {
		return
	}
	if err := t.tc.remove(t); err != nil {
		d.logger.Error("simpledb: close table", "table", t.Num, "err", err)
	}
	if t.obsolete.Load() {
		if d.cache != nil {
			d.cache.EvictTable(t.Num)
		}
		d.deleteFile(filenames.TablePath(d.dir, t.Num))
	}
}

// find is sstables.Reader.FindHash on the table's reader, pinned for the
// lookup.
func (t *table) find(key []byte, hash sstables.KeyHash, seq uint64, use func([]byte)) (base.Kind, bool, error) {
	r, err := t.tc.pin(t)
	if err != nil {
		return 0, false, err
	}
	defer t.tc.unpin(t)
	return r.FindHash(key, hash, seq, use)
}

// newIterator returns an iterator over the table that pins its reader from
// its first positioning to Close.
func (t *table) newIterator(opts *sstables.IterOptions) *tableIter {
	return &tableIter{t: t, opts: opts}
}

// overlaps reports whether the table may hold keys in [lo, hi] (nil: open)
// in cmp's order.
func (t *table) overlaps(cmp func(a, b []byte) int, lo, hi []byte) bool {
	return (hi == nil || cmp(t.Smallest, hi) <= 0) && (lo == nil || cmp(t.Largest, lo) >= 0)
}

// version is an immutable set of tables per level. L0 tables may overlap
// and are ordered newest first; in L1 and below tables are ordered by key
// and never overlap, so one table per level can hold a key. For any key,
// versions in a shallower level are newer than those in a deeper one.
type version struct {
	levels [NumLevels][]*table
	cmp    func(a, b []byte) int // the database's key order
	// rangeDelTables are, per level, the tables that hold range
	// tombstones, which an iterator collects when it is created: few
	// tables hold any, and without them an iterator looks at none.
	rangeDelTables [NumLevels][]*table
	refs           atomic.Int32
}

func (v *version) ref() { v.refs.Add(1) }

func (v *version) unref(d *DB) {
	if v.refs.Add(-1) != 0 {
		return
	}
	for _, level := range v.levels {
		for _, t := range level {
			t.unref(d)
		}
	}
}

// withEdit returns a new version: v minus the deleted tables plus the added
// ones. It takes a reference on every table it keeps from v, and takes over
// the caller's reference on each added one.
func (v *version) withEdit(deleted map[uint64]bool, added []levelTableRef) *version {
	nv := &version{cmp: v.cmp}
	for level, tables := range v.levels {
		for _, t := range tables {
			if !deleted[t.Num] {
				t.ref()
				nv.levels[level] = append(nv.levels[level], t)
			}
		}
	}
	for _, a := range added {
		nv.levels[a.level] = append(nv.levels[a.level], a.t)
	}
	nv.sortLevels()
	nv.refs.Store(1)
	return nv
}

type levelTableRef struct {
	level int
	t     *table
}

func (v *version) sortLevels() {
	for level := range v.levels {
		order := manifest.TableOrder(level, v.cmp)
		slices.SortFunc(v.levels[level], func(a, b *table) int { return order(&a.TableInfo, &b.TableInfo) })
	}
	for level, tables := range v.levels {
		v.rangeDelTables[level] = v.rangeDelTables[level][:0]
		for _, t := range tables {
			if len(t.rangeDels) > 0 {
				v.rangeDelTables[level] = append(v.rangeDelTables[level], t)
			}
		}
	}
}

// levelSize returns the bytes of a level's tables.
func (v *version) levelSize(level int) int64 {
	var n int64
	for _, t := range v.levels[level] {
		n += int64(t.Size)
	}
	return n
}

// tableFor returns the table of level (1 and below) whose range holds key.
func (v *version) tableFor(level int, key []byte) *table {
	tables := v.levels[level]
	if i := searchLevel(v.cmp, tables, key); i < len(tables) && v.cmp(tables[i].Smallest, key) <= 0 {
		return tables[i]
	}
	return nil
}

// searchLevel returns the index of the first of a level's tables (L1 and
// below: sorted and disjoint) whose largest key is at or after key: the
// one table that may hold key, and where a scan from key starts.
func searchLevel(cmp func(a, b []byte) int, tables []*table, key []byte) int {
	i, _ := slices.BinarySearchFunc(tables, key, func(t *table, k []byte) int { return cmp(t.Largest, k) })
	return i
}

// memTable is a memstore and the log that holds its writes.
type memTable struct {
	m      *memstore.Memstore
	logNum uint64
	logID  uint64 // the log's identity: see logIdentity
	// logSize is the log's length once a rotation closed it, 0 before.
	// abandoned: the log failed and was given up (see Resume); its file
	// is deleted, not recycled, once the memstore is flushed. Both are
	// guarded by DB.mu.
	logSize   uint64
	abandoned bool
	// writes counts groups appended to its log but not yet applied; a
	// flush waits for them. appended counts every group appended (guarded
	// by DB.walMu).
	writes   sync.WaitGroup
	appended int
}

// readState is what a read needs: the memstores, newest first, and the
// version. Reads take a reference for their duration, so that flushes and
// compactions can install a new state with a pointer swap while the old
// one's tables stay until its last reader is done.
type readState struct {
	mem  *memTable
	imm  []*memTable // oldest first
	v    *version
	refs atomic.Int32
}

func (rs *readState) unref(d *DB) {
	if rs.refs.Add(-1) == 0 {
		rs.v.unref(d)
	}
}
