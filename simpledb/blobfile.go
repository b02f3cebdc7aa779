package simpledb

import (
	"errors"
	"io/fs"
	"maps"
	"slices"
	"sync/atomic"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/filenames"
	"github.com/stratadb/strata/internal/manifest"
	"github.com/stratadb/strata/sstables"
)

// blobFile is a live blob file: what the manifest records, and its reader,
// open while the file lives. Like a table, it is reference-counted by the
// versions that hold it (and, until a version takes it over, by whoever
// opened it): when the last reference goes, its reader is closed and, if
// an edit removed the file, its values leave the block cache and the file
// is deleted. A version holds every blob file its tables name, so a read
// that holds a version reads a blob file that stays open.
type blobFile struct {
	manifest.BlobFileInfo
	tc       *tableCache
	reader   *sstables.BlobReader
	refs     atomic.Int32
	obsolete atomic.Bool // removed by an edit: delete the file once unreferenced
}

// ref takes another reference on b; as table.ref, never on one released.
func (b *blobFile) ref() {
	if b.refs.Add(1) <= 1 {
		panic("simpledb: a reference taken on a released blob file")
	}
}

// unref drops a reference on b; the last closes its reader and, if an
// edit removed the file, deletes it.
func (b *blobFile) unref() {
	if b.refs.Add(-1) == 0 {
		b.tc.dropBlob(b)
	}
}

// blobFiles maps the open blob files by number: the table cache's, read
// without a lock by every read of a separated value, replaced whole under
// blobMu when a file opens or closes.
type blobFiles = map[uint64]*blobFile

// openBlob opens a blob file the manifest names, or a flush or compaction
// just wrote, and checks it against what the manifest records. A missing,
// resized, foreign or damaged file is ErrCorruption naming it. The file
// comes with one reference, the caller's.
func (c *tableCache) openBlob(info manifest.BlobFileInfo) (*blobFile, error) {
	r, err := openBlobFile(filenames.BlobPath(c.dir, info.Num), info, &sstables.ReaderOptions{FS: c.fs, NoMmap: !c.mmap, Cache: c.blocks, CacheID: info.Num})
	if err != nil {
		return nil, err
	}
	b := &blobFile{BlobFileInfo: info, tc: c, reader: r}
	b.refs.Store(1)
	c.blobMu.Lock()
	files := maps.Clone(*c.blobs.Load())
	files[info.Num] = b
	c.blobs.Store(&files)
	c.blobMu.Unlock()
	return b, nil
}

// openBlobFile opens the blob file at path and checks it is the one the
// manifest records as info: the same number, size, identity and values.
func openBlobFile(path string, info manifest.BlobFileInfo, opts *sstables.ReaderOptions) (*sstables.BlobReader, error) {
	r, err := sstables.OpenBlob(path, opts)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errMissingFile(path, "a blob file")
	}
	if err != nil {
		return nil, err
	}
	m := r.Metadata()
	if found := (manifest.BlobFileInfo{Num: m.FileNum, Size: m.FileSize, Values: m.Values, ValueBytes: m.ValueBytes, ID: m.ID}); found != info {
		r.Close()
		return nil, base.Corruptf(path, 0, ErrCorruption, "blob file %d of %d bytes, identity %016x, %d values of %d bytes; the manifest recorded file %d of %d bytes, identity %016x, %d values of %d bytes",
			m.FileNum, m.FileSize, m.ID, m.Values, m.ValueBytes, info.Num, info.Size, info.ID, info.Values, info.ValueBytes)
	}
	return r, nil
}

// Blob returns open blob file num, for a table that names it: the table's
// version holds it open (sstables.BlobSource).
func (c *tableCache) Blob(num uint64) (*sstables.BlobReader, error) {
	if b := (*c.blobs.Load())[num]; b != nil {
		return b.reader, nil
	}
	return nil, base.Corruptf(filenames.BlobPath(c.dir, num), 0, ErrCorruption, "a table names blob file %d, which no version holds", num)
}

// ReleaseBlob does nothing: the reader's version holds the file.
func (c *tableCache) ReleaseBlob(*sstables.BlobReader) {}

// dropBlob closes b's reader once the last reference on b is gone, and
// deletes its file if an edit removed it.
func (c *tableCache) dropBlob(b *blobFile) {
	c.blobMu.Lock()
	if (*c.blobs.Load())[b.Num] == b { // not a later open of the same file, a follower's
		files := maps.Clone(*c.blobs.Load())
		delete(files, b.Num)
		c.blobs.Store(&files)
	}
	c.blobMu.Unlock()
	if err := b.reader.Close(); err != nil {
		c.logger.Error("simpledb: close blob file", "file", b.Num, "err", err)
	}
	if !b.obsolete.Load() {
		return
	}
	c.blocks.EvictTable(b.Num)
	path := filenames.BlobPath(c.dir, b.Num)
	if err := c.fs.Remove(path); err != nil {
		c.logger.Error("simpledb: delete obsolete file", "file", path, "err", err)
		return
	}
	emit(c.events, c.events.listener().BlobFileDeleted, FileInfo{Num: b.Num, Path: path})
}

// unreferencedBlobs returns the blob files of v that no table names once
// edit applies: those the edit must delete.
func unreferencedBlobs(v *version, edit *manifest.Edit) []uint64 {
	if len(v.blobs) == 0 {
		return nil
	}
	deleted := map[uint64]bool{}
	for _, d := range edit.Deleted {
		deleted[d.Info.Num] = true
	}
	named := map[uint64]bool{}
	for _, level := range v.levels {
		for _, t := range level {
			if !deleted[t.Num] {
				for _, r := range t.BlobRefs {
					named[r.Num] = true
				}
			}
		}
	}
	for _, a := range edit.Added {
		for _, r := range a.Info.BlobRefs {
			named[r.Num] = true
		}
	}
	var gone []uint64
	for num := range v.blobs {
		if !named[num] {
			gone = append(gone, num)
		}
	}
	return gone
}

// openBlobFiles opens the blob files state names into v, and checks that
// every blob file a table names is one of them.
func openBlobFiles(c *tableCache, v *version, state *manifest.State) error {
	for _, num := range slices.Sorted(maps.Keys(state.BlobFiles)) {
		b, err := c.openBlob(state.BlobFiles[num])
		if err != nil {
			return err
		}
		if v.blobs == nil {
			v.blobs = map[uint64]*blobFile{}
		}
		v.blobs[num] = b
	}
	for _, tables := range state.Levels {
		for _, t := range tables {
			for _, r := range t.BlobRefs {
				if v.blobs[r.Num] == nil {
					return base.Corruptf(filenames.BlobPath(c.dir, r.Num), 0, ErrCorruption, "table %d names blob file %d, which the manifest does not", t.Num, r.Num)
				}
			}
		}
	}
	return nil
}
