package simpledb

import (
	"bytes"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/filenames"
	"github.com/stratadb/strata/internal/manifest"
	"github.com/stratadb/strata/internal/rangedel"
	"github.com/stratadb/strata/memstore"
	"github.com/stratadb/strata/sstables"
)

func (d *DB) startBackground() {
	d.bgWG.Add(2)
	go func() {
		defer d.bgWG.Done()
		d.mu.memstores.loop()
	}()
	go d.compactLoop()
}

// flushOldest writes mt, the oldest immutable memstore, to an L0 table and
// installs it: the flush scheduler's flushEnv.flush. The caller holds
// d.mu, which is released during the write.
func (d *DB) flushOldest(mt *memTable) (err error) {
	d.mu.Unlock()
	// Groups appended before the rotation finish applying first. Only then
	// is the list of snapshots complete: a snapshot taken while one of them
	// was still being applied sees a version below it, which the flush must
	// keep. Any snapshot taken later sees the whole memstore.
	mt.writes.Wait()
	d.mu.Lock()
	snaps := d.mu.snapshots.seqs()
	d.mu.Unlock()
	start := time.Now()
	info := FlushInfo{JobID: d.events.job(), MemstoreBytes: mt.m.SizeBytes(), Entries: mt.m.Len()}
	emit(d.events, d.listener().FlushBegin, info)
	t, blobs, err := d.writeL0(mt.m, snaps)
	defer func() {
		if t != nil && err == nil {
			info.Table, info.TableBytes = t.Num, int64(t.Size)
		}
		info.Duration, info.Err = time.Since(start), err
		d.latencies.flush.add(info.Duration)
		emit(d.events, d.listener().FlushEnd, info)
	}()
	d.mu.Lock()
	if err != nil {
		return err
	}
	// The log of the next memstore is now the oldest needed.
	edit := &manifest.Edit{LogNum: d.mu.memstores.nextLog(), LastSeq: mt.m.LastSeq()}
	var added []levelTableRef
	if t != nil {
		edit.Added = []manifest.LevelTable{{Level: 0, Info: t.TableInfo}}
		added = []levelTableRef{{0, t}}
	}
	for _, b := range blobs {
		edit.AddedBlobs = append(edit.AddedBlobs, b.BlobFileInfo)
	}
	if err := d.mu.versions.writeEdit(edit); err != nil {
		// The edit may have reached the disk even though writing it failed,
		// so the table stays: the next Open keeps it if the manifest names
		// it and removes it as an orphan if not.
		if t != nil {
			t.unref()
		}
		unrefBlobs(blobs)
		return err
	}
	d.mu.memstores.flushed(mt)
	d.applyEdit(edit, added, blobs)
	d.blobsCreated(info.JobID, blobs)
	if t != nil {
		emit(d.events, d.listener().TableCreated, TableInfo{JobID: info.JobID, Num: t.Num, Level: 0, Bytes: int64(t.Size)})
		d.mu.stats.flushes++
		written := int64(t.Size)
		for _, b := range blobs {
			written += int64(b.Size)
		}
		d.mu.stats.flushBytes += written
		d.mu.stats.levelIn[0] += written
		d.mu.stats.levelWritten[0] += written
		d.logger.Debug("simpledb: flushed memstore", "table", t.Num, "bytes", t.Size, "took", time.Since(start))
	}
	// The edit is durable: the memstore's log is obsolete, to recycle or
	// delete.
	if mt.abandoned || !d.mu.versions.retireLog(manifest.LogInfo{Num: mt.logNum, ID: mt.logID}) {
		d.mu.Unlock()
		d.deleteFile(filenames.LogPath(d.dir, mt.logNum))
		d.mu.Lock()
	}
	return nil
}

// writeL0 writes a memstore to a new table, and its large values to a blob
// file beside it, keeping only the versions that the snapshots at snaps
// (ascending) can see, and opens them. It returns a nil table if nothing
// survives.
func (d *DB) writeL0(m *memstore.Memstore, snaps []uint64) (*table, []*blobFile, error) {
	it := &compactionIter{in: m.NewEntryIterator(nil), snaps: snaps, rangeDels: m.RangeDeletions(), fold: d.fold}
	defer it.in.Close()
	outputs, blobs, err := d.writeTables(it, 0)
	if err != nil || len(outputs) == 0 {
		return nil, nil, err
	}
	return outputs[0], blobs, nil
}

// writeTables writes an iterator's entries into new tables, starting a new
// one past splitAt bytes (0: never) or where the iterator's splitBefore
// says, at a key boundary, so that no key spans two tables. Values of
// Options.BlobThreshold bytes or more go to a blob file beside each table;
// a value that lies in a blob file already keeps its place, the table
// taking its handle. It opens and returns the tables and blob files, each
// with one reference, the caller's.
//
// The range tombstones the iterator keeps are split between the tables:
// a table that ends at key k takes the fragments up to k\x00, the least key
// after k, and the next table those from there, so each table's key range
// (which includes its fragments, see rangeBounds) ends at k and the next
// one's starts after it. The last table takes everything beyond; a table
// may hold range tombstones alone.
func (d *DB) writeTables(it *compactionIter, splitAt int64) ([]*table, []*blobFile, error) {
	var (
		outputs   []*table
		blobs     []*blobFile
		w         *sstables.Writer
		num       uint64
		rangeDels = it.rangeDelsOut()
		from      []byte // where the next table's range tombstones start: nil, unbounded
	)
	newWriter := func() error {
		d.mu.Lock()
		num = d.mu.versions.newFileNum()
		d.mu.Unlock()
		opts := d.opts.tableWriterOptions()
		if d.opts.BlobThreshold > 0 {
			opts.BlobThreshold = d.opts.BlobThreshold
			opts.Blobs = func() (*sstables.BlobWriter, error) {
				d.mu.Lock()
				blobNum := d.mu.versions.newFileNum()
				d.mu.Unlock()
				return sstables.NewBlobWriter(filenames.BlobPath(d.dir, blobNum), blobNum, &sstables.WriterOptions{FS: d.opts.FS,
					Compression: d.opts.Compression, BytesPerSync: tableBytesPerSync, ID: base.NewFileID(0)})
			}
		}
		var err error
		w, err = sstables.NewWriter(filenames.TablePath(d.dir, num), opts)
		return err
	}
	// finishBlob closes the blob file beside the table being written, if
	// a large value made one, and opens it.
	finishBlob := func() error {
		b := w.BlobWriter()
		if b == nil {
			return nil
		}
		if err := b.Close(); err != nil {
			return err
		}
		m := b.Metadata()
		f, err := d.tables.openBlob(manifest.BlobFileInfo{Num: m.FileNum, Size: m.FileSize, Values: m.Values, ValueBytes: m.ValueBytes, ID: m.ID})
		if err != nil {
			return err
		}
		blobs = append(blobs, f)
		return nil
	}
	// finish closes the table being written, giving it the range
	// tombstones from from up to until (nil: unbounded).
	finish := func(until []byte) error {
		frags := rangeDels.Truncate(bytes.Compare, from, until)
		from = until
		if w == nil && len(frags) > 0 {
			if err := newWriter(); err != nil {
				return err
			}
		}
		if w == nil {
			return nil
		}
		for _, f := range frags {
			for _, seq := range f.Seqs {
				if err := w.AddRangeDel(f.Start, f.End, seq); err != nil {
					return err
				}
			}
		}
		if err := finishBlob(); err != nil {
			return err
		}
		err := w.Close()
		m := w.Metadata()
		w = nil
		if err != nil {
			return err
		}
		info := manifest.TableInfo{Num: num, Size: m.FileSize, Smallest: m.MinKey, Largest: m.MaxKey,
			SmallestSeq: m.MinSeq, LargestSeq: m.MaxSeq, ID: m.ID}
		for _, r := range m.BlobRefs {
			info.BlobRefs = append(info.BlobRefs, manifest.BlobRef{Num: r.FileNum, Values: r.Values, ValueBytes: r.ValueBytes})
		}
		includeRangeDels(&info, m.Records, frags)
		t, err := d.tables.openTable(info, true)
		if err != nil {
			return err
		}
		outputs = append(outputs, t)
		return nil
	}
	abort := func(err error) ([]*table, []*blobFile, error) {
		if w != nil {
			if b := w.BlobWriter(); b != nil {
				b.Abort()
			}
			w.Abort()
		}
		for _, t := range outputs {
			t.obsolete.Store(true)
			t.unref()
		}
		for _, b := range blobs {
			b.obsolete.Store(true)
			b.unref()
		}
		return nil, nil, err
	}
	var lastKey []byte
	for ok := it.First(); ok; ok = it.Next() {
		key := it.Key()
		newKey := lastKey == nil || string(key) != string(lastKey)
		split := newKey && it.splitBefore != nil && it.splitBefore(key)
		if w != nil && newKey && (split || splitAt > 0 && w.EstimatedSize()+int64(w.BlobBytes()) >= splitAt) {
			if err := finish(append(bytes.Clone(lastKey), 0)); err != nil {
				return abort(err)
			}
		}
		if w == nil {
			if err := newWriter(); err != nil {
				return abort(err)
			}
		}
		var err error
		if h, ok := it.BlobHandle(); ok {
			err = w.AddBlobRef(key, it.Seq(), h)
		} else {
			err = w.AddEntry(key, it.Seq(), it.Kind(), it.Value())
		}
		if err != nil {
			return abort(err)
		}
		if newKey {
			lastKey = append(lastKey[:0], key...)
		}
		if d.closed.Load() {
			return abort(ErrClosed)
		}
	}
	if err := it.in.Err(); err != nil {
		return abort(err)
	}
	if err := finish(nil); err != nil {
		return abort(err)
	}
	return outputs, blobs, nil
}

// unrefBlobs drops the caller's references on blob files a flush or
// compaction wrote and did not install: the next Open keeps those the
// manifest names, and removes the others as orphans.
func unrefBlobs(blobs []*blobFile) {
	for _, b := range blobs {
		b.unref()
	}
}

// blobsCreated reports the blob files a flush or compaction installed.
func (d *DB) blobsCreated(job int, blobs []*blobFile) {
	for _, b := range blobs {
		emit(d.events, d.listener().BlobFileCreated, BlobFileInfo{JobID: job, Num: b.Num, Values: b.Values, Bytes: int64(b.Size)})
	}
}

// includeRangeDels widens a table's key range, of its records entries, to
// the range tombstones frags it holds (sorted, disjoint).
func includeRangeDels(info *manifest.TableInfo, records uint64, frags rangedel.List) {
	if len(frags) == 0 {
		return
	}
	lo, hi := rangeBounds(frags)
	if records == 0 || bytes.Compare(lo, info.Smallest) < 0 {
		info.Smallest = lo
	}
	if records == 0 || bytes.Compare(hi, info.Largest) > 0 {
		info.Largest = hi
	}
}

// maxKey is the greatest key there can be: MaxKeySize bytes of 0xff. It is
// the largest key of a table whose range tombstones reach the end of the
// key space.
var maxKey = bytes.Repeat([]byte{0xff}, base.MaxKeySize)

// rangeBounds returns the least and the greatest key that fragments (not
// empty, sorted) may cover, for a table's key range. An end is exclusive:
// below an end k\x00 the greatest key is k; below any other end no key is
// the greatest, and the end itself stands in for it, which only makes the
// range one key wider than it is.
func rangeBounds(frags rangedel.List) (lo, hi []byte) {
	lo = frags[0].Start
	if len(lo) == 0 {
		lo = []byte{}
	}
	switch hi = frags[len(frags)-1].End; {
	case len(hi) == 0:
		hi = maxKey
	case hi[len(hi)-1] == 0:
		hi = hi[:len(hi)-1]
	}
	return lo, hi
}
