package simpledb

import (
	"bytes"
	"fmt"
	"slices"
	"time"

	"github.com/stratadb/strata/sstables"
)

// compaction merges tables of one level into the next.
type compaction struct {
	level int // the input level; outputs go to level+1
	// inputs[0] are the tables picked from level (L0: newest first),
	// inputs[1] those of level+1 they overlap.
	inputs [2][]*table
	v      *version // the version the inputs were picked from
}

// levelTarget is a level's target size: BaseLevelSize for L1, times
// LevelSizeRatio per level below.
func (d *DB) levelTarget(level int) int64 {
	t := d.opts.BaseLevelSize
	for l := 1; l < level; l++ {
		t *= int64(d.opts.LevelSizeRatio)
	}
	return t
}

// pickCompaction chooses the most urgent compaction, or nil: L0 when it
// has L0CompactionTrigger tables, else the level furthest over its target.
// The caller holds d.mu.
func (d *DB) pickCompaction() *compaction {
	v := d.current
	bestLevel, bestScore := -1, 1.0
	if n := len(v.levels[0]); n >= d.opts.L0CompactionTrigger {
		bestLevel, bestScore = 0, float64(n)/float64(d.opts.L0CompactionTrigger)
	}
	for level := 1; level < numLevels-1; level++ {
		if score := float64(v.levelSize(level)) / float64(d.levelTarget(level)); score > bestScore {
			bestLevel, bestScore = level, score
		}
	}
	if bestLevel < 0 {
		return nil
	}
	if bestLevel == 0 {
		return d.newCompaction(0, v.levels[0])
	}
	// Round-robin through the level: the first table past the key where
	// the level's last compaction ended.
	tables := v.levels[bestLevel]
	pick := tables[0]
	for _, t := range tables {
		if bytes.Compare(t.smallest, d.compactPtr[bestLevel]) > 0 {
			pick = t
			break
		}
	}
	d.compactPtr[bestLevel] = append(d.compactPtr[bestLevel][:0], pick.largest...)
	return d.newCompaction(bestLevel, []*table{pick})
}

// newCompaction adds to from (tables of level) the tables of level+1 they
// overlap.
func (d *DB) newCompaction(level int, from []*table) *compaction {
	c := &compaction{level: level, v: d.current}
	var lo, hi []byte
	for _, t := range from {
		if lo == nil || bytes.Compare(t.smallest, lo) < 0 {
			lo = t.smallest
		}
		if hi == nil || bytes.Compare(t.largest, hi) > 0 {
			hi = t.largest
		}
	}
	c.inputs[0] = from
	for _, t := range d.current.levels[level+1] {
		if t.overlaps(lo, hi) {
			c.inputs[1] = append(c.inputs[1], t)
		}
	}
	return c
}

// compactLoop runs compactions in the background while any is due.
func (d *DB) compactLoop() {
	defer d.bgWG.Done()
	d.mu.Lock()
	defer d.mu.Unlock()
	for {
		var c *compaction
		for !d.closed.Load() {
			if !d.compacting && d.bgErr == nil && !d.opts.DisableAutoCompaction {
				if c = d.pickCompaction(); c != nil {
					break
				}
			}
			d.cond.Wait()
		}
		if d.closed.Load() {
			return
		}
		if err := d.runCompaction(c); err != nil && err != ErrClosed {
			d.setBackgroundError(fmt.Errorf("compaction: %w", err))
		}
		d.cond.Broadcast()
	}
}

// runCompaction merges c's inputs into new tables of the next level and
// installs them. The caller holds d.mu; it is released during the work.
func (d *DB) runCompaction(c *compaction) error {
	d.compacting = true
	defer func() { d.compacting = false }()
	c.v.ref()
	snaps := d.snapshotSeqs()
	d.mu.Unlock()
	start := time.Now()
	outputs, read, err := d.compact(c, snaps)
	c.v.unref(d)
	d.mu.Lock()
	if err != nil {
		return err
	}
	edit := &versionEdit{}
	var added []levelTableRef
	for i, tables := range c.inputs {
		for _, t := range tables {
			edit.deleted = append(edit.deleted, levelTable{level: c.level + i, info: tableInfo{num: t.num}})
		}
	}
	var written int64
	for _, t := range outputs {
		edit.added = append(edit.added, levelTable{level: c.level + 1, info: t.tableInfo})
		added = append(added, levelTableRef{c.level + 1, t})
		written += int64(t.size)
	}
	if err := d.writeEdit(edit); err != nil {
		// As in a flush: the outputs stay for the next Open to sort out.
		for _, t := range outputs {
			t.unref(d)
		}
		return err
	}
	d.applyEdit(edit, added)
	d.stats.compactions++
	d.stats.compactionRead += read
	d.stats.compactionBytes += written
	d.log.Debug("simpledb: compacted", "level", c.level, "inputs", len(c.inputs[0])+len(c.inputs[1]), "outputs", len(outputs),
		"read", read, "written", written, "took", time.Since(start))
	return nil
}

// compact writes the merged, filtered inputs of c to new tables.
//
// It reads its inputs with pread, never through a mapping: a compaction
// reads every byte of its inputs, and mapped pages it touched would count
// towards the process's resident memory until the tables were deleted.
// Plain reads leave them in the page cache only. The tables' own readers
// read that way unless MmapTables is set; then it opens readers of its own.
// (Table iterators do not fill the block cache either way.)
func (d *DB) compact(c *compaction, snaps []uint64) ([]*table, int64, error) {
	var iters []sstables.EntryIterator
	var own []*sstables.Reader
	var read int64
	defer func() {
		for _, r := range own {
			r.Close()
		}
	}()
	// Newest first: L0 in version order, then the level, then the next.
	for _, t := range slices.Concat(c.inputs[0], c.inputs[1]) {
		r := t.reader
		if d.opts.MmapTables {
			var err error
			if r, err = sstables.Open(tableName(d.dir, t.num), &sstables.ReaderOptions{FS: d.fs, NoMmap: true}); err != nil {
				return nil, 0, err
			}
			own = append(own, r)
		}
		iters = append(iters, r.NewIterator(nil))
		read += int64(t.size)
	}
	merged := sstables.NewMergingIterator(&sstables.MergeOptions{AllVersions: true}, iters...)
	defer merged.Close()
	it := &compactionIter{in: merged, snaps: snaps, bottom: c.isBottom}
	outputs, err := d.writeTables(it, d.opts.TargetTableSize)
	return outputs, read, err
}

// isBottom reports whether no level below the output holds key.
func (c *compaction) isBottom(key []byte) bool {
	for level := c.level + 2; level < numLevels; level++ {
		if c.v.tableFor(level, key) != nil {
			return false
		}
	}
	return true
}
