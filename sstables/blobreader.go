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
	rr, id, own, err := openFile(name, &o)
	if err != nil {
		return nil, err
	}
	r := &BlobReader{name: name, fs: o.FS, id: id, ownID: own, cache: o.Cache, rr: rr}
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
	if err := r.checkHandle(h); err != nil {
		return err
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
	if err = r.checkValue(h, value, err); err != nil {
		return err
	}
	if !inPlace {
		*scratch = value[:0]
	}
	if fill && r.cache != nil {
		r.cache.fill(key, value, nil, nil)
	}
	use(value)
	return nil
}

// checkHandle refuses a handle that names another file or no place of
// this one's values.
func (r *BlobReader) checkHandle(h BlobHandle) error {
	if h.FileNum != r.meta.FileNum || h.Offset < recordio.FileHeaderSize || h.Offset > r.valuesEnd || h.Length > r.valuesEnd-h.Offset {
		return base.Corruptf(r.name, int64(h.Offset), ErrBadBlob, "handle (file %d, %d, %d) outside file %d's values [%d, %d)",
			h.FileNum, h.Offset, h.Length, r.meta.FileNum, recordio.FileHeaderSize, r.valuesEnd)
	}
	return nil
}

// checkValue returns the error of reading value at h: damage, a closed
// file, a failed read, or a value of another length than h says.
func (r *BlobReader) checkValue(h BlobHandle, value []byte, err error) error {
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
	return nil
}

// Read-ahead of a scan's values: a table's values in one blob file lie in
// the file in key order, as the flush that wrote them found them, so a
// scan reads each blob file forward, value after value, with gaps where a
// value was overwritten; a table compacted from many flushes names values
// in many blob files, interleaved. An iterator keeps, for each of up to
// blobSpans files, the span of the file it read last; a value past the
// last one read from its file, within blobSpanSize of it, reads a span of
// blobSpanSize from there with one read, and the values after it come
// from memory. A value read out of order is read alone, as Value reads
// it, and so is the first of each file.
const (
	blobSpans    = 256
	blobSpanSize = 16 << 10
)

// blobReadahead is an iterator's read-ahead state, by blob file.
type blobReadahead struct {
	spans map[uint64]*blobSpan
}

// blobSpan is a span of one blob file.
type blobSpan struct {
	off  uint64 // where data starts in the file
	data []byte // in buf, or in the file's mapping
	buf  []byte
	end  uint64 // where the last value read from the file ends
}

// span returns the span of file, starting one, in place of another if
// there are blobSpans, if it has none.
func (ra *blobReadahead) span(file uint64) *blobSpan {
	if s := ra.spans[file]; s != nil {
		return s
	}
	if ra.spans == nil {
		ra.spans = map[uint64]*blobSpan{}
	}
	var s *blobSpan
	if len(ra.spans) >= blobSpans {
		for num, old := range ra.spans { // any one: a scan has moved past most
			delete(ra.spans, num)
			s = old
			break
		}
		s.off, s.data, s.end = 0, nil, 0
	} else {
		s = new(blobSpan)
	}
	ra.spans[file] = s
	return s
}

// valueAhead is Value for a scan: not cached, and read ahead (see
// blobReadahead).
func (r *BlobReader) valueAhead(h BlobHandle, ra *blobReadahead, scratch *[]byte, use func([]byte)) error {
	if r.closed.Load() {
		return ErrClosed
	}
	if err := r.checkHandle(h); err != nil {
		return err
	}
	s := ra.span(h.FileNum)
	inSpan := s.data != nil && h.Offset >= s.off && h.Offset+h.Length <= s.off+uint64(len(s.data))
	if !inSpan && (s.end == 0 || h.Offset < s.end || h.Offset-s.end >= blobSpanSize) {
		s.end = h.Offset + h.Length // out of order: read alone
		return r.Value(h, scratch, false, use)
	}
	if !inSpan {
		n := min(max(blobSpanSize, h.Length), r.valuesEnd-h.Offset)
		if uint64(cap(s.buf)) < n {
			s.buf = make([]byte, n)
		}
		data, err := r.rr.ReadSpan(int64(h.Offset), s.buf[:n])
		if err != nil {
			s.data = nil
			return r.checkValue(h, nil, err)
		}
		s.off, s.data = h.Offset, data
	}
	value, _, err := r.rr.RecordIn(s.data[h.Offset-s.off:], int64(h.Offset), int64(h.Length), (*scratch)[:0])
	if err = r.checkValue(h, value, err); err != nil {
		return err
	}
	s.end = h.Offset + h.Length
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
