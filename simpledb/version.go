package simpledb

import (
	"slices"
	"sync/atomic"

	"github.com/stratadb/strata/internal/manifest"
)

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
	// levelData is each level's data size (levelDataSize), summed once:
	// scores and dynamic targets read it at every pick and Metrics.
	levelData [NumLevels]int64
	// blobs are the blob files the tables name, and blobLive the bytes of
	// each file's values the tables name: the rest is garbage. blobTotals
	// sums them over the files, for Metrics, which a database of thousands
	// of blob files calls as often as one of none.
	blobs      map[uint64]*blobFile
	blobLive   map[uint64]uint64
	blobTotals BlobMetrics
	refs       atomic.Int32
}

// ref takes another reference on v. The caller holds one already, or
// holds d.mu while v is d.mu.versions.current(), whose reference the database drops
// only after replacing it under d.mu (Close's, after it set closed under
// d.mu): a reference is never taken on a version released, whose tables
// may be closed. A count that was zero is a bug, which panics here.
func (v *version) ref() {
	if v.refs.Add(1) <= 1 {
		panic("simpledb: a reference taken on a released version")
	}
}

func (v *version) unref() {
	if v.refs.Add(-1) != 0 {
		return
	}
	for _, level := range v.levels {
		for _, t := range level {
			t.unref()
		}
	}
	for _, b := range v.blobs {
		b.unref()
	}
}

// withEdit returns a new version: v minus the deleted tables and blob
// files plus the added ones. It takes a reference on every table and blob
// file it keeps from v, and takes over the caller's reference on each
// added one.
func (v *version) withEdit(deleted map[uint64]bool, added []levelTableRef, deletedBlobs []uint64, addedBlobs []*blobFile) *version {
	nv := &version{cmp: v.cmp}
	if len(v.blobs)+len(addedBlobs) > 0 {
		nv.blobs = make(map[uint64]*blobFile, len(v.blobs)+len(addedBlobs))
		for num, b := range v.blobs {
			if !slices.Contains(deletedBlobs, num) {
				b.ref()
				nv.blobs[num] = b
			}
		}
		for _, b := range addedBlobs {
			nv.blobs[b.Num] = b
		}
	}
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
		v.levelData[level] = 0
		for _, t := range tables {
			if len(t.rangeDels) > 0 {
				v.rangeDelTables[level] = append(v.rangeDelTables[level], t)
			}
			v.levelData[level] += t.dataSize()
		}
	}
	v.blobLive, v.blobTotals = nil, BlobMetrics{}
	if len(v.blobs) > 0 {
		v.blobLive = make(map[uint64]uint64, len(v.blobs))
		for _, tables := range v.levels {
			for _, t := range tables {
				for _, r := range t.BlobRefs {
					v.blobLive[r.Num] += r.ValueBytes
				}
			}
		}
		for _, b := range v.blobs {
			v.blobTotals.Files++
			v.blobTotals.Bytes += int64(b.Size)
			v.blobTotals.ValueBytes += int64(b.ValueBytes)
			v.blobTotals.GarbageBytes += int64(v.blobGarbage(b))
		}
	}
}

// blobGarbage returns how much of blob file b's values no table names.
func (v *version) blobGarbage(b *blobFile) uint64 {
	return b.ValueBytes - min(v.blobLive[b.Num], b.ValueBytes)
}

// levelDataSize returns the bytes of a level's data: its tables and the
// values they keep in blob files. Compactions are picked by it, so that a
// database of large values is shaped as one of small values is, its
// overwritten and deleted versions dropped as soon; the compactions
// rewrite the tables alone.
func (v *version) levelDataSize(level int) int64 { return v.levelData[level] }

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
