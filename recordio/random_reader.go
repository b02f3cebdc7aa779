package recordio

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/stratadb/strata/vfs"
)

// RandomReader reads the record at any offset a Writer returned. It is safe
// for concurrent use: each call takes its codec state from a pool.
type RandomReader struct {
	ra     io.ReaderAt
	mapped []byte    // the file's bytes, when it is memory-mapped
	closer io.Closer // set when the reader owns ra
	name   string
	size   int64
	hdr    FileHeader
	max    uint64
	pool   sync.Pool // *randomState
	closed atomic.Bool
}

type randomState struct {
	dec     decompressor
	header  [maxHeaderSize]byte
	payload []byte
}

// scratch returns n bytes of the state's reusable buffer.
func (st *randomState) scratch(n int) []byte {
	if cap(st.payload) < n {
		st.payload = make([]byte, n)
	}
	return st.payload[:n]
}

// OpenRandom opens the named file on opts.FS for random reads. Unless
// opts.NoMmap is set, a file on the operating system's filesystem is
// memory-mapped, so a read costs a copy rather than a system call.
func OpenRandom(name string, opts *ReaderOptions) (*RandomReader, error) {
	o := opts.withDefaults()
	f, err := vfs.OpenReadOnly(o.FS, name, !o.NoMmap)
	if err != nil {
		return nil, fmt.Errorf("recordio: open %s: %w", name, err)
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
// not close ra. If ra has a Name method, errors name the file.
func NewRandomReader(ra io.ReaderAt, size int64, opts *ReaderOptions) (*RandomReader, error) {
	name := ""
	if n, ok := ra.(interface{ Name() string }); ok {
		name = n.Name()
	}
	return newRandomReader(ra, size, name, opts.withDefaults())
}

func newRandomReader(ra io.ReaderAt, size int64, name string, o ReaderOptions) (*RandomReader, error) {
	r := &RandomReader{ra: ra, name: name, size: size, max: uint64(o.MaxRecordSize)}
	r.pool.New = func() any { return new(randomState) }
	var b [FileHeaderSize]byte
	n, err := ra.ReadAt(b[:min(size, FileHeaderSize)], 0)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("recordio: %s: read file header: %w", name, err)
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
// one as a non-nil empty slice. At the end of the file, or where only zero
// padding follows, it returns io.EOF; damage gives a *CorruptionError.
func (r *RandomReader) RecordAt(off int64, buf []byte) ([]byte, error) {
	rec, _, err := r.recordAt(off, buf, false)
	return rec, err
}

// RecordView is RecordAt for readers that only look: when the file is
// memory-mapped and the record is stored uncompressed, the result is the
// record in place, with no copy, valid until Close, and inPlace is true; it
// must not be modified. Otherwise it behaves as RecordAt, so a caller that
// recycles buf knows whether the result is its own.
func (r *RandomReader) RecordView(off int64, buf []byte) (rec []byte, inPlace bool, err error) {
	return r.recordAt(off, buf, r.mapped != nil)
}

// RecordViewSized is RecordView for a record whose length on disk, header
// included, the caller knows (from an index, say): when the file is not
// mapped it reads the whole record with one ReadAt instead of two. A length
// that does not match the record is corruption.
func (r *RandomReader) RecordViewSized(off, length int64, buf []byte) ([]byte, bool, error) {
	if r.mapped != nil || length <= 0 || length > int64(r.max)+maxHeaderSize {
		return r.RecordView(off, buf)
	}
	if err := r.checkOffset(off); err != nil {
		return nil, false, err
	}
	if length > r.size-off {
		return nil, false, corruptAt(r.name, off, badHeader(ErrTruncatedPayload, "record of %d bytes, %d remain", length, r.size-off))
	}
	st := r.pool.Get().(*randomState)
	defer r.pool.Put(st)
	if int64(cap(st.payload)) < length {
		st.payload = make([]byte, length)
	}
	frame := st.payload[:length]
	if err := r.readAt(frame, off); err != nil {
		return nil, false, err
	}
	h, n, err := r.hdr.decodeRecordHeader(frame)
	if err == errShortHeader {
		return nil, false, corruptAt(r.name, off, badHeader(ErrTruncatedHeader, "a %d-byte record ends inside its header", length))
	}
	if err != nil {
		return nil, false, corruptAt(r.name, off, err)
	}
	if h.ulen > r.max || uint64(n)+h.plen != uint64(length) {
		return nil, false, corruptAt(r.name, off, badHeader(ErrBadHeader, "record is %d bytes, not %d", uint64(n)+h.plen, length))
	}
	if h.isNil {
		return nil, false, nil
	}
	payload := frame[n:]
	if err := h.checkPayload(payload); err != nil {
		return nil, false, corruptAt(r.name, off, err)
	}
	if !h.compressed {
		if buf == nil {
			buf = []byte{} // an empty record must not come back as a nil one
		}
		return append(buf[:0], payload...), false, nil
	}
	rec, err := h.inflate(&st.dec, r.hdr.Codec, buf, payload)
	if err != nil {
		return nil, false, corruptAt(r.name, off, err)
	}
	return rec, false, nil
}

func (r *RandomReader) recordAt(off int64, buf []byte, view bool) ([]byte, bool, error) {
	if err := r.checkOffset(off); err != nil {
		return nil, false, err
	}
	st := r.pool.Get().(*randomState)
	defer r.pool.Put(st)

	hb := st.header[:min(int64(maxHeaderSize), r.size-off)]
	if err := r.readAt(hb, off); err != nil {
		return nil, false, err
	}
	if hb[0] == 0 {
		return nil, false, r.zeroTail(st, off)
	}
	h, n, err := r.hdr.decodeRecordHeader(hb)
	if err == errShortHeader {
		return nil, false, corruptAt(r.name, off, badHeader(ErrTruncatedHeader, "file ends %d bytes into a record header", len(hb)))
	}
	if err != nil {
		return nil, false, corruptAt(r.name, off, err)
	}
	if h.ulen > r.max || h.plen > r.max {
		return nil, false, corruptAt(r.name, off, badHeader(ErrRecordTooLarge, "header claims %d bytes, limit %d", max(h.ulen, h.plen), r.max))
	}
	remaining := r.size - off - int64(n)
	if h.plen > uint64(remaining) {
		return nil, false, corruptAt(r.name, off, badHeader(ErrTruncatedPayload, "header claims a %d-byte payload, %d bytes remain", h.plen, remaining))
	}
	if h.isNil {
		return nil, false, nil
	}

	// An uncompressed payload is read straight into buf (or used in place);
	// a compressed one into pooled scratch space, then decompressed into buf.
	var payload []byte
	inPlace := view && !h.compressed
	if start := off + int64(n); inPlace {
		payload = r.mapped[start : start+int64(h.plen) : start+int64(h.plen)]
	} else {
		payload = buf
		if h.compressed {
			payload = st.payload
		}
		if payload == nil || uint64(cap(payload)) < h.plen {
			payload = make([]byte, h.plen)
		}
		payload = payload[:h.plen]
		if err := r.readAt(payload, start); err != nil {
			return nil, false, err
		}
	}
	if err := h.checkPayload(payload); err != nil {
		return nil, false, corruptAt(r.name, off, err)
	}
	if !h.compressed {
		return payload, inPlace, nil
	}
	st.payload = payload[:0]
	rec, err := h.inflate(&st.dec, r.hdr.Codec, buf, payload)
	if err != nil {
		return nil, false, corruptAt(r.name, off, err)
	}
	return rec, false, nil
}

// checkOffset refuses reads on a closed reader and offsets that cannot
// start a record; io.EOF at or past the end.
func (r *RandomReader) checkOffset(off int64) error {
	if r.closed.Load() {
		return ErrClosed
	}
	if off < FileHeaderSize {
		return fmt.Errorf("%w: %d", ErrInvalidOffset, off)
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
	return fmt.Errorf("recordio: %s: read at offset %d: %w", r.name, off, err)
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
