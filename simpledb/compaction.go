package simpledb

import (
	"slices"
	"time"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/filenames"
	"github.com/stratadb/strata/internal/manifest"
	"github.com/stratadb/strata/internal/rangedel"
	"github.com/stratadb/strata/sstables"
)

// compaction merges tables of one level into the next, or moves one, or
// rewrites tables of the last level in place.
type compaction struct {
	level int // the input level; outputs go to level+1, or level if rewrite
	// inputs[0] are the tables picked from level (L0: newest first),
	// inputs[1] those of level+1 they overlap.
	inputs [2][]*table
	v      *version // the version the inputs were picked from
	// move: inputs[0] is one table, which goes to level+1 by a manifest
	// edit alone (see trivialMove).
	move bool
	// rewrite: inputs[0] are tables of the last level, rewritten into it
	// to move their values out of blob files that hold mostly garbage.
	rewrite bool
	// relocate are the blob files whose values the compaction copies to
	// its own blob files rather than move their handles: those whose
	// garbage passes Options.BlobRewriteRatio (see pickBlobRewrite).
	relocate map[uint64]bool
}

// output is the level the compaction writes to.
func (c *compaction) output() int {
	if c.rewrite {
		return c.level
	}
	return c.level + 1
}

// grandparentOverlap returns the bytes of the tables of level+2 that t's
// key range overlaps.
func (c *compaction) grandparentOverlap(t *table) int64 {
	var n int64
	if c.level+2 < NumLevels {
		for _, g := range c.v.levels[c.level+2] {
			if g.overlaps(c.v.cmp, t.Smallest, t.Largest) {
				n += g.dataSize()
			}
		}
	}
	return n
}

// compactionState is the background compaction's, guarded by DB.mu: at
// most one compaction runs at a time, each level's next one starts where
// the last one ended, and one that ran out of space puts the next off.
type compactionState struct {
	running bool
	ptr     [NumLevels][]byte // where the next compaction of each level starts
	// pause: err is the failure of a compaction that ran out of space;
	// the next waits until retry, backoff after it.
	pause struct {
		err     error
		retry   time.Time
		backoff time.Duration
	}
}

// paused records a compaction out of space, at now, and returns how long
// the next waits: twice the last wait, within [resumeFirstDelay,
// resumeMaxDelay].
func (c *compactionState) paused(err error, now time.Time) time.Duration {
	c.pause.err = err
	c.pause.backoff = min(max(2*c.pause.backoff, resumeFirstDelay), resumeMaxDelay)
	c.pause.retry = now.Add(c.pause.backoff)
	return c.pause.backoff
}

// due reports whether a compaction may start at now, as far as a pause
// goes.
func (c *compactionState) due(now time.Time) bool { return !now.Before(c.pause.retry) }

// pausedBy returns the failure that paused compactions, nil if none.
func (c *compactionState) pausedBy() error { return c.pause.err }

// begin and end bracket the running compaction; busy reports whether one
// runs.
func (c *compactionState) begin()     { c.running = true }
func (c *compactionState) end()       { c.running = false }
func (c *compactionState) busy() bool { return c.running }

// succeeded ends a pause and its back-off.
func (c *compactionState) succeeded() { c.pause.err, c.pause.backoff = nil, 0 }

// unpause lets the next compaction start at once (Resume's), keeping the
// back-off, and reports whether one was paused.
func (c *compactionState) unpause() bool {
	if c.pause.err == nil {
		return false
	}
	c.pause.err, c.pause.retry = nil, time.Time{}
	return true
}

// compactLoop runs compactions in the background while any is due.
func (d *DB) compactLoop() {
	defer d.bgWG.Done()
	d.mu.Lock()
	defer d.mu.Unlock()
	for {
		var c *compaction
		for !d.closed.Load() {
			if !d.mu.compaction.busy() && d.mu.failure.err() == nil && !d.opts.DisableAutoCompaction && d.mu.compaction.due(time.Now()) {
				if c = d.mu.compaction.pick(d.mu.versions.current(), &d.opts); c != nil {
					break
				}
			}
			d.cond.Wait()
		}
		if d.closed.Load() {
			return
		}
		switch err := d.runCompaction(c); {
		case err == nil:
			d.mu.compaction.succeeded()
		case err == ErrClosed:
		case outOfSpace(err) && !d.mu.versions.manifestFailed():
			d.pauseCompactions(err) // a soft error: writes go on
		default:
			d.setBackgroundError(errs.Errorf("compaction: %w", err))
		}
		d.cond.Broadcast()
	}
}

// runCompaction merges c's inputs into new tables of the next level and
// installs them, or moves c's table. The caller holds d.mu; it is released
// during a merge.
func (d *DB) runCompaction(c *compaction) (err error) {
	info := CompactionInfo{JobID: d.events.job(), Level: c.level, Move: c.move}
	for i, tables := range c.inputs {
		for _, t := range tables {
			info.Inputs[i] = append(info.Inputs[i], t.Num)
		}
	}
	emit(d.events, d.listener().CompactionBegin, info)
	start := time.Now()
	var outputs []*table
	var blobs []*blobFile
	defer func() {
		if err == nil {
			for _, t := range outputs {
				info.Outputs = append(info.Outputs, t.Num)
				info.BytesWritten += int64(t.Size)
			}
			if c.move {
				info.Outputs = info.Inputs[0]
			}
		}
		info.Duration, info.Err = time.Since(start), err
		if !c.move {
			d.latencies.compaction.add(info.Duration)
		}
		emit(d.events, d.listener().CompactionEnd, info)
	}()
	if c.move {
		return d.moveTable(c)
	}
	if c.relocate == nil {
		c.relocate = c.v.blobsToRewrite(&d.opts)
	}
	d.mu.compaction.begin()
	defer d.mu.compaction.end()
	c.v.ref()
	snaps := d.mu.snapshots.seqs()
	d.mu.Unlock()
	outputs, blobs, read, err := d.compact(c, snaps)
	info.BytesRead = read
	c.v.unref()
	d.mu.Lock()
	if err != nil {
		return err
	}
	edit := &manifest.Edit{}
	var added []levelTableRef
	for i, tables := range c.inputs {
		for _, t := range tables {
			edit.Deleted = append(edit.Deleted, manifest.LevelTable{Level: c.level + i, Info: manifest.TableInfo{Num: t.Num}})
		}
	}
	var written int64
	for _, t := range outputs {
		edit.Added = append(edit.Added, manifest.LevelTable{Level: c.output(), Info: t.TableInfo})
		added = append(added, levelTableRef{c.output(), t})
		written += int64(t.Size)
	}
	for _, b := range blobs {
		edit.AddedBlobs = append(edit.AddedBlobs, b.BlobFileInfo)
		written += int64(b.Size)
	}
	if err := d.mu.versions.writeEdit(edit); err != nil {
		// As in a flush: the outputs stay for the next Open to sort out.
		for _, t := range outputs {
			t.unref()
		}
		unrefBlobs(blobs)
		return err
	}
	d.applyEdit(edit, added, blobs)
	d.blobsCreated(info.JobID, blobs)
	for _, t := range outputs {
		emit(d.events, d.listener().TableCreated, TableInfo{JobID: info.JobID, Num: t.Num, Level: c.output(), Bytes: int64(t.Size)})
	}
	d.mu.stats.compactions++
	d.mu.stats.compactionRead += read
	d.mu.stats.compactionBytes += written
	for i, tables := range c.inputs {
		for _, t := range tables {
			d.mu.stats.levelRead[c.level+i] += int64(t.Size)
			if i == 0 {
				d.mu.stats.levelIn[c.output()] += int64(t.Size)
			}
		}
	}
	d.mu.stats.levelWritten[c.output()] += written
	d.logger.Debug("simpledb: compacted", "level", c.level, "inputs", len(c.inputs[0])+len(c.inputs[1]), "outputs", len(outputs),
		"read", read, "written", written, "took", time.Since(start))
	return nil
}

// moveTable moves c's one input table to the next level with a manifest
// edit. The caller holds d.mu, throughout: the version c was picked from is
// still current.
func (d *DB) moveTable(c *compaction) error {
	t := c.inputs[0][0]
	edit := &manifest.Edit{
		Deleted: []manifest.LevelTable{{Level: c.level, Info: manifest.TableInfo{Num: t.Num}}},
		Added:   []manifest.LevelTable{{Level: c.level + 1, Info: t.TableInfo}},
	}
	if err := d.mu.versions.writeEdit(edit); err != nil {
		// Whether or not the edit reached the disk, the table is live in
		// one of the two levels; the next Open finds it in either.
		return err
	}
	t.ref() // the new version's, which applyEdit hands it
	d.applyEdit(edit, []levelTableRef{{c.level + 1, t}}, nil)
	d.mu.stats.trivialMoves++
	d.mu.stats.levelIn[c.level+1] += int64(t.Size)
	d.logger.Debug("simpledb: moved table", "table", t.Num, "from", c.level, "to", c.level+1, "bytes", t.Size)
	return nil
}

// compact writes the merged, filtered inputs of c to new tables.
//
// It reads its inputs with pread, never through a mapping: a compaction
// reads every byte of its inputs, and mapped pages it touched would count
// towards the process's resident memory until the tables were deleted.
// Plain reads leave them in the page cache only. The tables' own readers
// read that way unless MmapTables is set; then it opens readers of its own,
// which count against MaxOpenFiles. (Table iterators do not fill the block
// cache either way.) Through the table cache it pins every L0 input, but of
// a sorted level only the table it is reading.
func (d *DB) compact(c *compaction, snaps []uint64) ([]*table, []*blobFile, int64, error) {
	var iters []sstables.EntryIterator
	var own []*sstables.Reader
	var read int64
	var tombs []rangedel.Tombstone
	defer func() {
		for _, r := range own {
			r.Close()
			d.tables.release()
		}
	}()
	// Newest first: L0 in version order, then the level, then the next.
	for i, tables := range c.inputs {
		switch {
		case d.opts.MmapTables || len(tables) == 0:
		case c.level+i == 0: // L0's tables overlap: each is pinned until merged closes
			for _, t := range tables {
				iters = append(iters, t.newIterator(nil))
			}
		default: // sorted and disjoint: one table pinned at a time
			iters = append(iters, &levelIter{cmp: c.v.cmp, tables: tables})
		}
	}
	for _, t := range slices.Concat(c.inputs[0], c.inputs[1]) {
		read += int64(t.Size)
		tombs = rangedel.List(t.rangeDels).Tombstones(tombs, base.MaxSeq)
		if !d.opts.MmapTables {
			continue
		}
		// Its own readers count against MaxOpenFiles too.
		d.tables.reserve()
		r, err := sstables.Open(filenames.TablePath(d.dir, t.Num), d.tables.readerOptions(true))
		if err != nil {
			d.tables.release()
			return nil, nil, 0, err
		}
		own = append(own, r)
		iters = append(iters, r.NewIterator(nil))
	}
	merged := sstables.NewMergingIterator(&sstables.MergeOptions{Comparator: d.opts.Comparator, AllVersions: true}, iters...)
	defer merged.Close()
	it := &compactionIter{in: merged, snaps: snaps, bottom: c.isBottom, bottomRange: c.isBottomRange,
		rangeDels: rangedel.Build(c.v.cmp, tombs), fold: d.fold, relocate: c.relocate}
	if c.output()+1 < NumLevels {
		g := &grandparentSplitter{cmp: c.v.cmp, tables: c.v.levels[c.output()+1], limit: d.opts.maxGrandparentOverlap()}
		it.splitBefore = g.splitBefore
	}
	outputs, blobs, err := d.writeTables(it, d.opts.TargetTableSize)
	return outputs, blobs, read, err
}

// isBottom reports whether no level below the output holds key.
func (c *compaction) isBottom(key []byte) bool {
	for level := c.output() + 1; level < NumLevels; level++ {
		if c.v.tableFor(level, key) != nil {
			return false
		}
	}
	return true
}

// isBottomRange reports whether no level below the output holds a key in
// [start, end) (empty: unbounded).
func (c *compaction) isBottomRange(start, end []byte) bool {
	var hi []byte // overlaps takes an inclusive bound; end is one key too far, which is safe
	if len(end) > 0 {
		hi = end
	}
	for level := c.output() + 1; level < NumLevels; level++ {
		tables := c.v.levels[level] // sorted and disjoint: below L1
		if i := searchLevel(c.v.cmp, tables, start); i < len(tables) && (hi == nil || c.v.cmp(tables[i].Smallest, hi) <= 0) {
			return false
		}
	}
	return true
}

// grandparentSplitter ends a compaction's output table before a key once
// the tables of level+2 that the keys have passed since its last split (or
// the first key) total more than limit: an output of level+1 that
// overlapped much more would make its own compaction into level+2 huge.
// This is LevelDB's rule, with the limit of a trivial move.
type grandparentSplitter struct {
	cmp     func(a, b []byte) int
	tables  []*table // level+2's, in key order
	next    int      // the first table whose largest key is at or after the last key
	overlap int64    // the bytes of the tables passed since the last split
	limit   int64
	started bool
}

// splitBefore is called with each key of the output, in order.
func (g *grandparentSplitter) splitBefore(key []byte) bool {
	for g.next < len(g.tables) && g.cmp(key, g.tables[g.next].Largest) > 0 {
		if g.started {
			g.overlap += g.tables[g.next].dataSize()
		}
		g.next++
	}
	g.started = true
	if g.overlap > g.limit {
		g.overlap = 0
		return true
	}
	return false
}
