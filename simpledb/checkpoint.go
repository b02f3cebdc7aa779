package simpledb

import (
	"errors"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/internal/filenames"
	"github.com/stratadb/strata/internal/logformat"
	"github.com/stratadb/strata/internal/manifest"
	"github.com/stratadb/strata/internal/rangedel"
	"github.com/stratadb/strata/memstore"
	"github.com/stratadb/strata/recordio"
	"github.com/stratadb/strata/sstables"
	"github.com/stratadb/strata/vfs"
)

// A checkpoint is a database directory of its own, holding the database as
// of one moment: the visible sequence number when the checkpoint takes the
// read state, under d.mu, so that no flush or rotation comes between the
// two. It holds
//
//	000012.sst ...     every table of that read state's version: hard links
//	                   where the filesystem allows (vfs.LinkOrCopy), copies
//	                   otherwise; tables are immutable, so a link is a copy
//	000031.sst         the memstores' writes up to that sequence number,
//	                   newest version of each key (tombstones kept), if any
//	MANIFEST-000032    one edit: every table above, by level, and the
//	                   sequence number as the last one
//	CURRENT            written last
//
// and no log. The memstores are written out as a table rather than their
// logs copied: a log holds, past the moment, writes appended but not yet
// visible, and may be a recycled file with an earlier use's records behind
// its own, so a copy would have to be cut record by record; a table is
// exactly the moment's writes, and costs the source nothing (no flush, no
// rotation: writers go on meanwhile). The table and manifest take file
// numbers from the source's counter, so no name in the checkpoint clashes.
//
// Durability: linked tables were synced before their manifest named them;
// copied ones and the memstores' table are synced as they are written; the
// manifest is synced, then the directory; CURRENT goes last, synced and
// renamed into place with another directory sync. A checkpoint cut short
// has no CURRENT, and Open refuses it as ErrCorruption (tables without
// CURRENT); the checkpoint removes what it wrote when it fails.
//
// Cost: a checkpoint with every write in tables is a few links, one small
// manifest and CURRENT: 4.5 to 20.7 ms for the scale tool's 1 GB large
// database on the 2-vCPU guest of the benchmark README (the range of 3
// runs of BenchmarkSimpleDBCheckpoint, 20 checkpoints each, with other
// work on the machine), most of it fsyncs. Memstores cost what writing
// them costs: with 35 MB of unsynced writes in the memstore, 86 to 540 ms
// in one such set of runs and 64 to 69 ms in another. Flushing the source
// first instead, the simpler design, would cost more: a Flush of the same
// 35 MB took 166 to 191 ms (3 runs of 10, alternating with the 64-69 ms
// set), since it also fsyncs the log it rotates, and it changes the
// source's levels and holds its writers back while it rotates.
//
// A checkpoint of a read-only database works too: it changes nothing in
// the source's directory, though each link counts as one more name of the
// source's table files.

// Checkpoint writes a consistent copy of the database into dir, which must
// be missing or empty (otherwise ErrCheckpointExists, and nothing is
// written): it and any missing parents are created. The copy is the
// database as of one moment during the call: it holds every write
// acknowledged before the call and none begun after it returns, and it
// opens with Open as a database of its own. Writes go on during the call.
// Tables are hard-linked where the filesystem allows it and copied
// otherwise. When Checkpoint returns nil the copy is durable. A Close
// meanwhile waits for it; on a closed database it returns ErrClosed. A
// follower's checkpoint is of its view, or of a later one where the
// writer has deleted a table of its view since (see CatchUp).
func (d *DB) Checkpoint(dir string) error {
	d.closeMu.RLock()
	defer d.closeMu.RUnlock()
	if err := d.checkOpen(); err != nil {
		return err
	}
	names, err := d.fs.List(dir)
	switch {
	case err == nil && len(names) > 0:
		return errs.Errorf("simpledb: checkpoint %s: %w", dir, ErrCheckpointExists)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return errs.Errorf("simpledb: checkpoint %s: %w", dir, err)
	}
	created := err != nil
	if created {
		if err := createDir(d.fs, dir); err != nil {
			return errs.Errorf("simpledb: checkpoint: create %s: %w", dir, err)
		}
	}
	c := &checkpoint{d: d, dir: dir}
	err = c.write()
	for attempt := 1; err != nil && d.opts.Follow && errors.Is(err, fs.ErrNotExist) && attempt < followAttempts; attempt++ {
		// The writer deleted a table of the follower's view: catch up and
		// try again.
		c.removeWritten(false)
		if err = d.CatchUp(); err == nil {
			c = &checkpoint{d: d, dir: dir}
			err = c.write()
		}
	}
	if err != nil {
		c.removeWritten(created)
		return errs.Errorf("simpledb: checkpoint %s: %w", dir, err)
	}
	return nil
}

// checkpoint is one Checkpoint call's work.
type checkpoint struct {
	d       *DB
	dir     string
	written []string // the files created in dir, for removeWritten
}

// write captures the moment and writes the checkpoint's files.
func (c *checkpoint) write() error {
	d := c.d
	d.mu.Lock()
	rs, err := d.reads.acquire()
	if err != nil {
		d.mu.Unlock()
		return err
	}
	defer rs.unref()
	seq := d.commits.visible() // after acquiring: see readState.get
	memNum, manifestNum := d.mu.versions.newFileNum(), d.mu.versions.newFileNum()
	nextFileNum := d.mu.versions.nextFile()
	d.mu.Unlock()

	edit := &manifest.Edit{Comparator: d.opts.Comparator.Name, Merger: d.opts.mergerName(), NextFileNum: nextFileNum, LastSeq: seq, LogFormat: logformat.Current}
	for level, tables := range rs.v.levels {
		for _, t := range tables {
			path := filenames.TablePath(c.dir, t.Num)
			if _, err := vfs.LinkOrCopy(d.fs, filenames.TablePath(d.dir, t.Num), path); err != nil {
				return err
			}
			c.written = append(c.written, path)
			// The file linked must be the table read: one put in its place
			// since is refused, as Open would refuse it.
			if err := d.tables.checkTableFile(path, t.TableInfo); err != nil {
				return err
			}
			edit.Added = append(edit.Added, manifest.LevelTable{Level: level, Info: t.TableInfo})
		}
	}
	for _, num := range slices.Sorted(maps.Keys(rs.v.blobs)) {
		b := rs.v.blobs[num]
		path := filenames.BlobPath(c.dir, num)
		if _, err := vfs.LinkOrCopy(d.fs, filenames.BlobPath(d.dir, num), path); err != nil {
			return err
		}
		c.written = append(c.written, path)
		r, err := openBlobFile(path, b.BlobFileInfo, &sstables.ReaderOptions{FS: d.fs, NoMmap: true})
		if err != nil {
			return err
		}
		r.Close()
		edit.AddedBlobs = append(edit.AddedBlobs, b.BlobFileInfo)
	}
	info, err := c.writeMemstores(rs, seq, memNum)
	if err != nil {
		return err
	}
	if info != nil {
		edit.Added = append(edit.Added, manifest.LevelTable{Level: 0, Info: *info})
	}

	path := filenames.ManifestPath(c.dir, manifestNum)
	w, err := recordio.Create(path, manifest.FileOptions(d.fs))
	if err != nil {
		return errs.Errorf("manifest: %w", err)
	}
	c.written = append(c.written, path)
	_, err = w.WriteSync(edit.Encode())
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = d.fs.SyncDir(c.dir)
	}
	if err != nil {
		return errs.Errorf("manifest: %w", err)
	}
	c.written = append(c.written, filepath.Join(c.dir, filenames.CurrentName+".tmp"), filepath.Join(c.dir, filenames.CurrentName))
	return manifest.WriteCurrent(d.fs, c.dir, filepath.Base(path))
}

// writeMemstores writes the versions of rs's memstores that a read at seq
// sees, the newest of each key, tombstones and range tombstones included,
// to table num of the checkpoint, and returns its description; nil if
// there are none.
func (c *checkpoint) writeMemstores(rs *readState, seq, num uint64) (*manifest.TableInfo, error) {
	if seq == 0 { // nothing is visible yet; and a memstore reads 0 as its newest
		return nil, nil
	}
	mopts := &memstore.IterOptions{Seq: seq}
	children := []sstables.EntryIterator{rs.mem.m.NewEntryIterator(mopts)}
	for i := len(rs.imm) - 1; i >= 0; i-- {
		children = append(children, rs.imm[i].m.NewEntryIterator(mopts))
	}
	// And the range tombstones the read sees, the newest of each fragment:
	// the table holds them too, and the merge hides what they cover, so
	// that a fold of merge operands stops at them.
	var tombs []rangedel.Tombstone
	perChild := make([][]rangedel.Tombstone, len(children))
	for i := range children {
		mt := rs.mem
		if i > 0 {
			mt = rs.imm[len(rs.imm)-i]
		}
		perChild[i] = rangedel.List(mt.m.RangeDeletions()).Newest(c.d.opts.Comparator.Compare, nil, seq, nil, nil)
		tombs = append(tombs, perChild[i]...)
	}
	it := sstables.NewMergingIterator(&sstables.MergeOptions{Comparator: c.d.opts.Comparator, Seq: seq,
		RangeDeletions: perChild, Fold: c.d.fold}, children...)
	defer it.Close()
	entries := it.First()
	if !entries && (it.Err() != nil || len(tombs) == 0) {
		return nil, it.Err()
	}
	path := filenames.TablePath(c.dir, num)
	w, err := sstables.NewWriter(path, c.d.opts.tableWriterOptions())
	if err != nil {
		return nil, err
	}
	for _, t := range tombs {
		if err := w.AddRangeDel(t.Start, t.End, t.Seq); err != nil {
			w.Abort()
			return nil, err
		}
	}
	for ok := entries; ok; ok = it.Next() {
		if err := w.AddEntry(it.Key(), it.Seq(), it.Kind(), it.Value()); err != nil {
			w.Abort()
			return nil, err
		}
	}
	if err := it.Err(); err != nil {
		w.Abort()
		return nil, err
	}
	if err := w.Close(); err != nil { // syncs the table and its directory; on failure removes it
		return nil, err
	}
	c.written = append(c.written, path)
	m := w.Metadata()
	info := &manifest.TableInfo{Num: num, Size: m.FileSize, Smallest: m.MinKey, Largest: m.MaxKey,
		SmallestSeq: m.MinSeq, LargestSeq: m.MaxSeq, ID: m.ID}
	includeRangeDels(info, m.Records, rangedel.Build(c.d.opts.Comparator.Compare, tombs))
	return info, nil
}

// removeWritten removes what a failed checkpoint wrote, and its directory
// if it created it, so that nothing of it is left to open.
func (c *checkpoint) removeWritten(created bool) {
	for _, path := range c.written {
		c.d.fs.Remove(path) // some were never written: a failure ended the checkpoint first
	}
	if created {
		c.d.fs.Remove(c.dir)
	}
}
