package simpledb

import (
	"errors"
	"io/fs"
	"sync/atomic"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/filenames"
	"github.com/stratadb/strata/internal/manifest"
	"github.com/stratadb/strata/sstables"
)

// table is a live table: what the manifest records, and its reader. It is
// reference-counted by the versions that contain it (and, until a version
// takes it over, by whoever opened it): when the last reference goes, its
// reader is closed and, if an edit has removed the table, its blocks leave
// the block cache and its file is deleted. The reader itself is the table
// cache's: closed when unused to bound the open files, and
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

// dataSize returns the bytes of t's data: its file, and the values it
// keeps in blob files, as stored: scaled by their blob file's size over
// its values' bytes, so that compressible values weigh what they would
// in the table (their blocks are compressed too).
func (t *table) dataSize() int64 {
	n := int64(t.Size)
	var files blobFiles
	if t.tc != nil && len(t.BlobRefs) > 0 {
		files = *t.tc.blobs.Load()
	}
	for _, r := range t.BlobRefs {
		if b := files[r.Num]; b != nil && b.ValueBytes > 0 {
			n += int64(float64(r.ValueBytes) * float64(b.Size) / float64(b.ValueBytes))
		} else {
			n += int64(r.ValueBytes)
		}
	}
	return n
}

// ref takes another reference on t. The caller holds one, or a reference
// on a version that holds t: a reference is never taken on a table
// released, whose reader may be closed and file deleted. A count that was
// zero is a bug, which panics here.
func (t *table) ref() {
	if t.refs.Add(1) <= 1 {
		panic("simpledb: a reference taken on a released table")
	}
}

// unref drops a reference on t; the last closes its reader and, if an
// edit removed the table, has the table cache retire its file.
func (t *table) unref() {
	if t.refs.Add(-1) == 0 {
		t.tc.drop(t)
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

// openTable opens a table the manifest names, into the table cache. The
// table comes with one reference, the caller's. A table just written is
// opened with sstables.ReaderOptions.LoadOnRead: most are compacted away,
// or never read, before a read needs their index and filter, and the
// compaction that reads them needs only the index.
func (c *tableCache) openTable(info manifest.TableInfo, written bool) (*table, error) {
	c.reserve()
	r, err := c.openReader(info, written)
	if err != nil {
		c.release()
		return nil, err
	}
	t := &table{TableInfo: info, tc: c, rangeDels: r.RangeDeletions()}
	t.refs.Store(1)
	c.add(t, r)
	return t, nil
}

// openReader opens a table's file and checks it against what the manifest
// records: at Open, after the table is written, and whenever the table
// cache reopens it. A missing or damaged file is ErrCorruption naming it.
// loadOnRead is sstables.ReaderOptions.LoadOnRead.
func (c *tableCache) openReader(info manifest.TableInfo, loadOnRead bool) (*sstables.Reader, error) {
	path := filenames.TablePath(c.dir, info.Num)
	o := c.readerOptions(false)
	o.CacheID, o.LoadOnRead = info.Num, loadOnRead
	r, err := sstables.Open(path, o)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errMissingFile(path, "a table")
	}
	if errors.Is(err, ErrComparatorMismatch) {
		return nil, errs.Errorf("simpledb: open table %d: %w", info.Num, err)
	}
	// A table cut or grown is damaged even if what is left reads as one.
	// (An open Reader knows its file's size; a damaged one may be cut.)
	size := int64(-1)
	if r != nil {
		size = int64(r.Metadata().FileSize)
	} else if fi, serr := c.fs.Stat(path); serr == nil {
		size = fi.Size()
	}
	if size >= 0 && uint64(size) != info.Size {
		if r != nil {
			r.Close()
		}
		return nil, base.Corruptf(path, size, ErrCorruption, "the table ends here; the manifest recorded %d bytes", info.Size)
	}
	if err != nil {
		return nil, errs.Errorf("simpledb: open table %d: %w", info.Num, err)
	}
	if err := checkTableID(path, r.Metadata().ID, info.ID); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// checkTableFile checks that the table file at path is the table the
// manifest records as info: its size and identity.
func (c *tableCache) checkTableFile(path string, info manifest.TableInfo) error {
	m, err := sstables.ReadMetadata(path, &sstables.ReaderOptions{FS: c.fs, Comparator: c.comparator})
	if err != nil {
		return err
	}
	if m.FileSize != info.Size {
		return base.Corruptf(path, int64(m.FileSize), ErrCorruption, "the table ends here; the manifest recorded %d bytes", info.Size)
	}
	return checkTableID(path, m.ID, info.ID)
}

// checkTableID refuses a table file whose identity is not the one the
// manifest records: a table of another database, or of an earlier life
// of this one, that has the right name and size. A table the manifest
// records without one (written before identities) must have none.
func checkTableID(path string, got, want uint64) error {
	if got != want {
		return base.Corruptf(path, 0, ErrCorruption,
			"the table's identity is %016x, the manifest recorded %016x: a table of another database, or of an earlier life of this one", got, want)
	}
	return nil
}
