package recordio

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/vfs"
)

// RandomReader reads the record at any offset a Writer returned. It is safe
// for concurrent use: each call takes its codec state and buffers from a
// pool that all RandomReaders share.
type RandomReader struct {
	ra     io.ReaderAt
	mapped []byte    // the file's bytes, when it is memory-mapped
	closer io.Closer // set when the reader owns ra
	name   string
	size   int64
	hdr    FileHeader
	max    uint64
	closed atomic.Bool
}

// randomStates pools the state of reads in progress for every RandomReader:
// a pool per reader kept a buffer per processor for every open file, each
// as large as the largest record the file had read (a table's index, at
// Open), 4.8 MB of a 10M-key database's 9 MB heap.
var randomStates = sync.Pool{New: func() any { return new(randomState) }}

type randomState struct {
	dec     decompressor
	header  [maxHeaderSize]byte
	payload []byte
}

// maxKeptScratch bounds the buffer a pooled state keeps: a larger record
// (an index or filter, read once) gets a buffer of its own.
const maxKeptScratch = 64 << 10

// scratch returns n bytes of the state's reusable buffer.
func (st *randomState) scratch(n int) []byte {
	if cap(st.payload) >= n {
		return st.payload[:n]
	}
	b := make([]byte, n)
	if n <= maxKeptScratch {
		st.payload = b
	}
	return b
}

// OpenRandom opens the named file on opts.FS for random reads. Unless
// opts.NoMmap is set, a file on the operating system's filesystem is
// memory-mapped, so a read costs a copy rather than a system call.
func OpenRandom(name string, opts *ReaderOptions) (*RandomReader, error) {
	o := opts.withDefaults()
	f, err := vfs.OpenReadOnly(o.FS, name, !o.NoMmap)
	if err != nil {
		return nil, errs.Errorf("recordio: open %s: %w", name, err)
	}
	r, err := newRandomReader(f, f.Size(), name, o)
	if err != nil {
		f.Close()
		return nil, err
	}
	if m, ok := f.(vfs.MappedFile); ok {
		r.mapped = m.Bytes()
	}
	r.closer = f
	return r, nil
}

// NewRandomReader reads records from the first size bytes of ra. Close does
// not close ra. If ra has a Name method, errors name the file. A negative
// size is an error.
func NewRandomReader(ra io.ReaderAt, size int64, opts *ReaderOptions) (*RandomReader, error) {
	return newRandomReader(ra, size, nameOf(ra), opts.withDefaults())
}

func newRandomReader(ra io.ReaderAt, size int64, name string, o ReaderOptions) (*RandomReader, error) {
	if size < 0 {
		return nil, fmt.Errorf("recordio: %s: negative file size %d", name, size)
	}
	r := &RandomReader{ra: ra, name: name, size: size, max: uint64(o.MaxRecordSize)}
	var b [FileHeaderSize]byte
	n, err := ra.ReadAt(b[:min(size, FileHeaderSize)], 0)
	if err != nil && err != io.EOF {
		return nil, errs.Errorf("recordio: %s: read file header: %w", name, err)
	}
	if r.hdr, err = decodeFileHeader(b[:n]); err != nil {
		return nil, corruptAt(name, 0, err)
	}
	return r, nil
}

// Header returns the file header.
func (r *RandomReader) Header() FileHeader { return r.hdr }

// Size returns the file's length.
func (r *RandomReader) Size() int64 { return r.size }

// RecordAt returns the record that starts at off. The result may use buf's
// storage (pass nil to allocate); a nil record comes back as nil, an empty
// one as a non-nil empty slice, as from Reader.Next. At the end of the
// file, or where only zero padding follows, it returns io.EOF; damage gives
// a *CorruptionError.
func (r *RandomReader) RecordAt(off int64, buf []byte) ([]byte, error) {
	rec, _, err := r.recordAt(off, 0, buf, false)
	return rec, err
}

// RecordView is RecordAt for readers that only look. When the file is
// memory-mapped and the record is stored uncompressed, the result is the
// record in place, a slice of the mapped file with no copy, and inPlace is
// true: it must not be modified (the mapping is read-only: a write kills the
// process), it is valid until Close, and its capacity ends with it.
// Otherwise inPlace is false and the result is as from RecordAt, buf's
// storage or a new slice, the caller's: a caller that recycles buf knows
// whether the result is its own.
func (r *RandomReader) RecordView(off int64, buf []byte) (rec []byte, inPlace bool, err error) {
	return r.recordAt(off, 0, buf, true)
}

// RecordViewSized is RecordView for a record whose length on disk, header
// included, the caller knows (from an index, say): when the file is not
// mapped it reads the whole record with one ReadAt instead of two. A length
// that does not match the record is corruption; a length of 0 or less
// counts as unknown.
func (r *RandomReader) RecordViewSized(off, length int64, buf []byte) ([]byte, bool, error) {
	return r.recordAt(off, max(length, 0), buf, true)
}

// recordAt reads the record at off. A positive length is the record's
// length on disk, which the record must match; it sizes the first read to
// take the whole record. view allows an uncompressed record in place.
func (r *RandomReader) recordAt(off, length int64, buf []byte, view bool) ([]byte, bool, error) {
	if err := r.checkOffset(off); err != nil {
		return nil, false, err
	}
	st := randomStates.Get().(*randomState)
	defer randomStates.Put(st)

	frame, err := r.frame(st, off, length)
	if err != nil {
		return nil, false, err
	}
	return r.decode(st, frame, off, length, buf, view && r.mapped != nil)
}

// RecordIn is RecordViewSized for a record the caller read already: frame
// holds the file's bytes from off on, at least the record's length, as
// ReadSpan read them. A reader that walks records close to one another
// (a scan of the values a table names in a blob file) reads a span once
// and takes its records from it with no further read. An uncompressed
// record comes back in place, inFrame true: a slice of frame.
func (r *RandomReader) RecordIn(frame []byte, off, length int64, buf []byte) (rec []byte, inFrame bool, err error) {
	if err := r.checkOffset(off); err != nil {
		return nil, false, err
	}
	if int64(len(frame)) < length || length <= 0 {
		return nil, false, errs.Errorf("recordio: a frame of %d bytes for a record of %d", len(frame), length)
	}
	st := randomStates.Get().(*randomState)
	defer randomStates.Put(st)
	return r.decode(st, frame[:length], off, length, buf, true)
}

// ReadSpan reads the file's bytes from off on into buf, as many as buf
// holds or the file has: the frame for RecordIn.
func (r *RandomReader) ReadSpan(off int64, buf []byte) ([]byte, error) {
	if err := r.checkOffset(off); err != nil {
		return nil, err
	}
	if r.mapped != nil {
		return r.mapped[off:min(r.size, off+int64(len(buf)))], nil
	}
	buf = buf[:min(int64(len(buf)), r.size-off)]
	return buf, r.readAt(buf, off)
}

// decode decodes the record at off from frame, the file's bytes from off
// on: the whole record when its length is known, else at least its
// header. inPlace allows an uncompressed payload in frame to come back as
// it is, when frame outlives the call (a mapping, the caller's span).
func (r *RandomReader) decode(st *randomState, frame []byte, off, length int64, buf []byte, inPlace bool) ([]byte, bool, error) {
	if frame[0] == 0 {
		return nil, false, r.zeroTail(st, off)
	}
	h, n, err := r.hdr.decodeRecordHeader(frame)
	if err == errShortHeader {
		err = badHeader(ErrTruncatedHeader, "file ends %d bytes into a record header", len(frame))
	}
	if err == nil {
		err = h.checkLengths(r.max, r.size-off-int64(n))
	}
	if size := int64(n) + int64(h.plen); err == nil && length > 0 && size != length {
		err = badHeader(ErrBadHeader, "record is %d bytes, not %d", size, length)
	}
	if err != nil {
		return nil, false, corruptAt(r.name, off, err)
	}
	if h.isNil {
		return nil, false, nil
	}

	// The payload is in the frame (the file is mapped, or the record's
	// length was known), or read now: if it is uncompressed, straight into
	// buf; if not, into scratch space to be decompressed into buf.
	var payload []byte
	inBuf := false
	if end := n + int(h.plen); end <= len(frame) {
		payload = frame[n:end:end]
	} else {
		if h.compressed {
			payload = st.scratch(int(h.plen))
		} else {
			if payload = buf; uint64(cap(payload)) < h.plen {
				payload = make([]byte, h.plen)
			}
			payload = payload[:h.plen]
		}
		if err := r.readAt(payload, off+int64(n)); err != nil {
			return nil, false, err
		}
		inBuf = !h.compressed
	}
	if err := h.checkPayload(payload); err != nil {
		return nil, false, corruptAt(r.name, off, err)
	}
	switch {
	case h.compressed:
		rec, err := h.inflate(&st.dec, r.hdr.Codec, buf, payload)
		if err != nil {
			return nil, false, corruptAt(r.name, off, err)
		}
		return rec, false, nil
	case inBuf:
		return payload, false, nil
	case inPlace:
		return payload, true, nil
	}
	if buf == nil {
		buf = []byte{} // an empty record must not come back as a nil one
	}
	return append(buf[:0], payload...), false, nil
}

// frame returns the file's bytes from off on: in place when the file is
// mapped, else read into st, the whole record when its length is known
// and otherwise enough for any record header.
func (r *RandomReader) frame(st *randomState, off, length int64) ([]byte, error) {
	if r.mapped != nil {
		return r.mapped[off:r.size], nil
	}
	n := min(max(length, maxHeaderSize), int64(r.max)+maxHeaderSize, r.size-off)
	b := st.header[:]
	if n > maxHeaderSize {
		b = st.scratch(int(n))
	}
	b = b[:n]
	return b, r.readAt(b, off)
}

// checkOffset refuses reads on a closed reader and offsets that cannot
// start a record; io.EOF at or past the end.
func (r *RandomReader) checkOffset(off int64) error {
	if r.closed.Load() {
		return ErrClosed
	}
	if off < FileHeaderSize {
		return errs.Errorf("%w: %d", ErrInvalidOffset, off)
	}
	if off >= r.size {
		return io.EOF
	}
	return nil
}

func (r *RandomReader) readAt(p []byte, off int64) error {
	n, err := r.ra.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return errs.Errorf("recordio: %s: read at offset %d: %w", r.name, off, err)
}

// zeroScanChunk is how much of the file zeroTail reads at a time when the
// file is not mapped.
const zeroScanChunk = 64 << 10

// zeroTail reports io.EOF if only zero bytes remain from off on, damage
// otherwise.
func (r *RandomReader) zeroTail(st *randomState, off int64) error {
	if r.mapped != nil {
		if i := firstNonZero(r.mapped[off:r.size]); i >= 0 {
			return corruptAt(r.name, off, badZeroRun(off+int64(i)))
		}
		return io.EOF
	}
	for pos := off; pos < r.size; {
		chunk := st.scratch(int(min(zeroScanChunk, r.size-pos)))
		if err := r.readAt(chunk, pos); err != nil {
			return err
		}
		if i := firstNonZero(chunk); i >= 0 {
			return corruptAt(r.name, off, badZeroRun(pos+int64(i)))
		}
		pos += int64(len(chunk))
	}
	return io.EOF
}

// Close closes the file if the reader opened it. Reads in flight must have
// returned. Further calls return ErrClosed.
func (r *RandomReader) Close() error {
	if r.closed.Swap(true) {
		return ErrClosed
	}
	if r.closer != nil {
		return r.closer.Close()
	}
	return nil
}
