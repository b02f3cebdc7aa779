package sstables

import (
	"errors"
	"io"
	"sync/atomic"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/errs"
	"github.com/stratadb/strata/recordio"
	"github.com/stratadb/strata/vfs"
)

// ErrBadBlob: a blob file does not end in its trailer, or a handle does
// not locate one of its values. It matches ErrCorruption too.
var ErrBadBlob = errors.New("sstables: bad blob file")

// BlobReader reads the values of a blob file. It is safe for concurrent
// use.
type BlobReader struct {
	name      string
	fs        vfs.FS
	id        uint64
	ownID     bool
	cache     *Cache
	rr        *recordio.RandomReader
	meta      BlobMetadata
	valuesEnd uint64 // where the trailer's record starts
	closed    atomic.Bool
}

// OpenBlob opens the named blob file and checks its trailer. Of opts it
// uses FS, NoMmap, Cache and CacheID, as Open does; blob files and tables
// may share a cache, and, under CacheIDs, an id space.
func OpenBlob(name string, opts *ReaderOptions) (*BlobReader, error) {
	o := opts.withDefaults()
	if o.CacheID&ownIDBit != 0 {
		return nil, errs.Errorf("%w: open %s with CacheID %#x", ErrBadCacheID, name, o.CacheID)
	}
	rr, err := recordio.OpenRandom(name, &recordio.ReaderOptions{FS: o.FS, NoMmap: o.NoMmap})
	if err != nil {
		return nil, errs.Errorf("sstables: %w", err)
	}
	r := &BlobReader{name: name, fs: o.FS, id: o.CacheID, cache: o.Cache, rr: rr}
	if r.id == 0 {
		r.id, r.ownID = ownIDBit|nextReaderID.Add(1), true
	}
	if err := r.loadTrailer(); err != nil {
		rr.Close()
		return nil, err
	}
	return r, nil
}

func (r *BlobReader) loadTrailer() error {
	size := r.rr.Size()
	off := size - blobTrailerRecordSize
	if off < recordio.FileHeaderSize {
		return base.Corruptf(r.name, 0, ErrBadBlob, "%d bytes is too short for a blob file", size)
	}
	raw, _, err := r.rr.RecordViewSized(off, blobTrailerRecordSize, nil)
	switch {
	case errors.Is(err, ErrCorruption), errors.Is(err, io.EOF): // io.EOF: the file ends in zeros
		return base.Corruptf(r.name, off, ErrBadBlob, "no trailer: %v", err)
	case err != nil:
		return errs.Errorf("sstables: %w", err)
	}
	if r.meta, err = decodeBlobTrailer(raw); err != nil {
		return base.Corruptf(r.name, off, ErrBadBlob, "%v", err)
	}
	r.meta.FileSize, r.valuesEnd = uint64(size), uint64(off)
	return nil
}

// Metadata describes the file, from its trailer.
func (r *BlobReader) Metadata() BlobMetadata { return r.meta }

// Value calls use with the value h locates, which is valid only during the
// call. A point read passes fill, to cache the value it reads; a scan does
// not, so that it does not evict what point reads gathered. scratch is a
// buffer the caller recycles. A handle that names another file, or no
// value of this one, is damage (ErrBadBlob): the caller, which read the
// handle, names its own file too.
func (r *BlobReader) Value(h BlobHandle, scratch *[]byte, fill bool, use func([]byte)) error {
	if r.closed.Load() {
		return ErrClosed
	}
	if h.FileNum != r.meta.FileNum || h.Offset < recordio.FileHeaderSize || h.Offset > r.valuesEnd || h.Length > r.valuesEnd-h.Offset {
		return base.Corruptf(r.name, int64(h.Offset), ErrBadBlob, "handle (file %d, %d, %d) outside file %d's values [%d, %d)",
			h.FileNum, h.Offset, h.Length, r.meta.FileNum, recordio.FileHeaderSize, r.valuesEnd)
	}
	key := cacheKey{table: r.id, offset: h.Offset}
	if r.cache != nil {
		if e, ok := r.cache.get(key); ok {
			use(e.block)
			r.cache.unpin(e)
			return nil
		}
	}
	value, inPlace, err := r.rr.RecordViewSized(int64(h.Offset), int64(h.Length), (*scratch)[:0])
	switch {
	case errors.Is(err, ErrCorruption):
		return err
	case errors.Is(err, recordio.ErrClosed):
		return ErrClosed
	case err != nil:
		return errs.Errorf("sstables: %w", err)
	case uint64(len(value)) != h.ValueLen:
		return base.Corruptf(r.name, int64(h.Offset), ErrBadBlob, "a value of %d bytes, the handle says %d", len(value), h.ValueLen)
	}
	if !inPlace {
		*scratch = value[:0]
	}
	if fill && r.cache != nil {
		r.cache.fill(key, value)
	}
	use(value)
	return nil
}

// Verify reads every value of the file in order, checking each record's
// checksums, and checks that they end where the trailer begins and that
// their count and bytes are the trailer's. It returns the first damage.
func (r *BlobReader) Verify() error {
	rd, err := recordio.Open(r.name, &recordio.ReaderOptions{FS: r.fs, ZeroCopy: true, NoMmap: true})
	if err != nil {
		return errs.Errorf("sstables: %w", err)
	}
	defer rd.Close()
	var values, bytes uint64
	for {
		rec, err := rd.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return base.Corruptf(r.name, int64(r.valuesEnd), ErrBadBlob, "the values end before the trailer")
			}
			return err
		}
		if uint64(rd.Offset()) == r.valuesEnd {
			break
		}
		if uint64(rd.Offset()) > r.valuesEnd {
			return base.Corruptf(r.name, rd.Offset(), ErrBadBlob, "a value overlaps the trailer at %d", r.valuesEnd)
		}
		values, bytes = values+1, bytes+uint64(len(rec))
	}
	if values != r.meta.Values || bytes != r.meta.ValueBytes {
		return base.Corruptf(r.name, int64(r.valuesEnd), ErrBadBlob, "%d values of %d bytes, the trailer says %d of %d", values, bytes, r.meta.Values, r.meta.ValueBytes)
	}
	return nil
}

// Close closes the file. Values read before stay valid where the caller
// copied them; Value afterwards returns ErrClosed, and must not run
// concurrently with Close. The file's values leave the cache unless it was
// opened with a CacheID (see Reader.Close).
func (r *BlobReader) Close() error {
	if r.closed.Swap(true) {
		return ErrClosed
	}
	if r.cache != nil && r.ownID {
		r.cache.EvictTable(r.id)
	}
	return r.rr.Close()
}
