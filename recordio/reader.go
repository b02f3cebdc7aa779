package recordio

import (
	"bytes"
	"errors"
	"io"
	"io/fs"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/vfs"
)

// Reader reads a file's records in order. It is not safe for concurrent
// use; see RandomReader for that.
//
// Next returns records the caller owns, or with ReaderOptions.ZeroCopy,
// records that alias the reader's buffers or the mapped file: read-only,
// and valid only until the next call. Either way the reader's own buffers
// are reused, so a scan allocates nothing beyond the records it hands out.
type Reader struct {
	src    io.Reader
	closer io.Closer // set when the reader owns src
	name   string
	opts   ReaderOptions
	hdr    FileHeader
	dec    decompressor

	buf    []byte // buf[r:w] is read but not consumed
	r, w   int
	pos    int64 // file offset of buf[r]
	zeros  int64 // zero bytes consumed before buf[r] while the reader stays at their start
	size   int64 // file length, or -1 when unknown
	stat   func() (fs.FileInfo, error)
	srcEOF bool // src returned io.EOF
	out    []byte
	recOff int64
	// decoded is the header decodeAt decoded last; info describes the
	// record Next returned last.
	decoded recordHeader
	info    RecordInfo
	closed  bool
}

// RecordInfo describes a record as the file stores it.
type RecordInfo struct {
	// Offset is where the record's header starts.
	Offset int64
	// Size is the record's length on disk, header included.
	Size int64
	// Length is the record's own length, after any decompression.
	Length int
	// Compressed reports whether the payload is stored compressed with the
	// file's codec.
	Compressed bool
	// Nil reports a nil record (a format with a nil flag set it).
	Nil bool
}

// Open opens the named file on opts.FS for sequential reading. The Reader
// owns the file. Unless opts.NoMmap is set, a file on the operating
// system's filesystem is memory-mapped and read in place: a scan then costs
// no copy, only the checksums.
func Open(name string, opts *ReaderOptions) (*Reader, error) {
	o := opts.withDefaults()
	f, err := vfs.OpenReadOnly(o.FS, name, !o.NoMmap)
	if err != nil {
		return nil, errs.Errorf("recordio: open %s: %w", name, err)
	}
	var r *Reader
	if m, ok := f.(vfs.MappedFile); ok {
		r, err = newMappedReader(m.Bytes(), name, o)
	} else {
		r, err = newReader(io.NewSectionReader(f, 0, f.Size()), name, o)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closer = f
	return r, nil
}

// newMappedReader reads from a file's bytes in place: the whole file is the
// reader's buffer, already filled.
func newMappedReader(data []byte, name string, o ReaderOptions) (*Reader, error) {
	r := &Reader{name: name, opts: o, buf: data, w: len(data), size: int64(len(data)), srcEOF: true}
	return r, r.readFileHeader()
}

// NewReader reads records from src, starting with the file header. Close
// does not close src. When src has a Name method errors name the file, and
// when it has a Stat method (files do) lengths are checked against the
// bytes that remain before anything is allocated.
func NewReader(src io.Reader, opts *ReaderOptions) (*Reader, error) {
	return newReader(src, nameOf(src), opts.withDefaults())
}

func newReader(src io.Reader, name string, o ReaderOptions) (*Reader, error) {
	r := &Reader{src: src, name: name, opts: o, size: -1, buf: make([]byte, o.BufferSize)}
	switch s := src.(type) {
	case interface{ Stat() (fs.FileInfo, error) }:
		r.stat = s.Stat
		r.refreshSize()
	case *io.SectionReader:
		r.size = s.Size()
	}
	return r, r.readFileHeader()
}

func (r *Reader) readFileHeader() error {
	if err := r.fill(FileHeaderSize); err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return errs.Errorf("recordio: %s: read file header: %w", r.name, err)
	}
	hdr, err := decodeFileHeader(r.buf[r.r:r.w])
	if err != nil {
		return corruptAt(r.name, 0, err)
	}
	r.hdr = hdr
	r.consume(FileHeaderSize)
	return nil
}

// Header returns the file header.
func (r *Reader) Header() FileHeader { return r.hdr }

// Offset returns the offset of the record Next returned last.
func (r *Reader) Offset() int64 { return r.recOff }

// Info describes the record Next returned last: for tools that show a
// file's layout.
func (r *Reader) Info() RecordInfo { return r.info }

// Next returns the next record, or io.EOF at a clean end of the file. A
// clean end is the end of the last record, possibly followed by zero bytes
// (padding left by preallocation or direct I/O). A nil record comes back as
// nil, an empty one as a non-nil empty slice (go-sstables' v1 and v2 files
// have no nil flag; the package documentation says how they read).
//
// The record is the caller's, unless ReaderOptions.ZeroCopy is set: then it
// aliases the reader's buffer, its decompression buffer or the mapped file,
// must not be modified, and is valid only until the next call to Next,
// Resync or Close. Its capacity ends with it, so appending to it copies.
//
// Damage gives a *CorruptionError naming the file and the offset of the
// damaged record; the reader stays there, so Next fails again until
// Resync moves past it.
func (r *Reader) Next() ([]byte, error) {
	if r.closed {
		return nil, ErrClosed
	}
	rec, n, err := r.decodeAt()
	if err != nil {
		return nil, err
	}
	r.recOff = r.pos
	h := r.decoded
	r.info = RecordInfo{Offset: r.pos, Size: int64(n), Length: len(rec), Compressed: h.compressed, Nil: h.isNil}
	r.consume(n)
	return rec, nil
}

// decodeAt decodes the record at the current position without consuming
// it, returning the record and its length on disk.
func (r *Reader) decodeAt() ([]byte, int, error) {
	start := r.pos
	if err := r.fill(1); err != nil {
		return nil, 0, r.readError(err, io.EOF)
	}
	if r.zeros > 0 || r.buf[r.r] == 0 {
		return nil, 0, r.zeroTail()
	}
	if err := r.fill(maxHeaderSize); err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, 0, r.readError(err, nil)
	}
	h, n, err := r.hdr.decodeRecordHeader(r.buf[r.r:r.w])
	if err == errShortHeader {
		return nil, 0, corruptAt(r.name, start, badHeader(ErrTruncatedHeader, "file ends %d bytes into a record header", r.w-r.r))
	}
	if err != nil {
		return nil, 0, corruptAt(r.name, start, err)
	}
	if err := r.checkLengths(h, start, n); err != nil {
		return nil, 0, err
	}
	r.decoded = h
	total := n + int(h.plen)
	if err := r.fill(total); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, 0, corruptAt(r.name, start, badHeader(ErrTruncatedPayload, "file ends %d bytes into a %d-byte payload", r.w-r.r-n, h.plen))
		}
		return nil, 0, r.readError(err, nil)
	}
	rec, err := r.decodePayload(h, r.buf[r.r+n:r.r+total])
	if err != nil {
		return nil, 0, corruptAt(r.name, start, err)
	}
	return rec, total, nil
}

func (r *Reader) checkLengths(h recordHeader, start int64, n int) error {
	limit := uint64(r.opts.MaxRecordSize)
	err := h.checkLengths(limit, r.remaining(start, n))
	if errors.Is(err, ErrTruncatedPayload) && r.stat != nil {
		// The file may have grown since it was opened.
		r.refreshSize()
		err = h.checkLengths(limit, r.remaining(start, n))
	}
	if err != nil {
		return corruptAt(r.name, start, err)
	}
	return nil
}

// remaining returns how many bytes of the file follow a header of n bytes
// at start, or -1 when the file's length is unknown.
func (r *Reader) remaining(start int64, n int) int64 {
	if r.size < 0 {
		return -1
	}
	return max(r.size-start-int64(n), 0) // a stale size can be below what was read
}

// refreshSize learns the file's length, when the source can tell it.
func (r *Reader) refreshSize() {
	if info, err := r.stat(); err == nil && info.Mode().IsRegular() {
		r.size = info.Size()
	}
}

// decodePayload verifies and decompresses a payload. The result aliases the
// reader's buffers in zero-copy mode and is the caller's otherwise.
// Aliasing results are capped at their length, so that an append by the
// caller cannot write over the records that follow in the buffer (or into
// a read-only mapping).
func (r *Reader) decodePayload(h recordHeader, payload []byte) ([]byte, error) {
	if h.isNil {
		return nil, nil
	}
	if err := h.checkPayload(payload); err != nil {
		return nil, err
	}
	if !h.compressed {
		if r.opts.ZeroCopy {
			return payload[:len(payload):len(payload)], nil
		}
		return bytes.Clone(payload), nil
	}
	var dst []byte
	if r.opts.ZeroCopy {
		dst = r.out
	}
	rec, err := h.inflate(&r.dec, r.hdr.Codec, dst, payload)
	if err != nil {
		return nil, err
	}
	if r.opts.ZeroCopy && rec != nil {
		r.out = rec
		rec = rec[:len(rec):len(rec)]
	}
	return rec, nil
}

// zeroTail handles a record position holding a zero byte: the end of the
// file if only zeros follow, damage otherwise. A run longer than the buffer
// is consumed as it is scanned but counted in r.zeros, so the reader stays
// at the run's start: Next reports the same damage until Resync.
func (r *Reader) zeroTail() error {
	start := r.pos - r.zeros
	for {
		i := firstNonZero(r.buf[r.r:r.w])
		if i < 0 {
			i = r.w - r.r
		}
		r.consume(i)
		r.zeros += int64(i)
		if r.r < r.w {
			return corruptAt(r.name, start, badZeroRun(r.pos))
		}
		if err := r.fill(1); err != nil {
			if err == io.EOF {
				r.zeros = 0
			}
			return r.readError(err, io.EOF)
		}
	}
}

// Resync skips past damage: it discards the byte at the current position
// and scans forward to the next offset where a whole, valid record starts
// (the magic number, a header that decodes and, where the format has them,
// matching checksums). It returns that offset, where Next continues, or
// io.EOF when no valid record follows.
//
// Resync is for recovery and tools: a write-ahead log uses it to tell a
// torn tail (nothing valid follows) from damage in the middle.
func (r *Reader) Resync() (int64, error) {
	if r.closed {
		return 0, ErrClosed
	}
	magic := r.hdr.magic()
	if r.zeros > 0 {
		// Skip the damaged zero run, already consumed: none of it can
		// start a record.
		r.zeros = 0
	} else {
		r.consume(min(1, r.w-r.r))
	}
	for {
		if i := bytes.Index(r.buf[r.r:r.w], magic); i >= 0 {
			r.consume(i)
			if _, _, err := r.decodeAt(); err == nil {
				return r.pos, nil
			} else if !errors.Is(err, ErrCorruption) {
				return 0, err
			}
			r.consume(1)
			continue
		}
		// Keep a partial magic number at the end of the buffer.
		r.consume(max(0, r.w-r.r-(len(magic)-1)))
		if r.srcEOF {
			r.consume(r.w - r.r)
			return r.pos, io.EOF
		}
		if err := r.fill(r.w - r.r + 1); err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
			return 0, r.readError(err, nil)
		}
	}
}

// Scan reads the remaining records in order, for tools: it calls record
// (if not nil) with each record's Info and damage with each damaged place,
// a *CorruptionError; with resync it goes on past damage (see Resync),
// else it stops at the first. The error is for what is not damage, such
// as a failed read.
func (r *Reader) Scan(resync bool, record func(RecordInfo), damage func(error)) error {
	for {
		_, err := r.Next()
		switch {
		case err == io.EOF:
			return nil
		case errors.Is(err, ErrCorruption):
			damage(err)
			if !resync {
				return nil
			}
			if _, err := r.Resync(); err == io.EOF {
				return nil
			} else if err != nil {
				return err
			}
		case err != nil:
			return err
		case record != nil:
			record(r.Info())
		}
	}
}

// Close releases the reader's buffers and closes the file if the reader
// opened it; records that alias a mapped file are invalid from then on.
// Further calls return ErrClosed.
func (r *Reader) Close() error {
	if r.closed {
		return ErrClosed
	}
	r.closed = true
	r.buf, r.out = nil, nil
	if r.closer != nil {
		return r.closer.Close()
	}
	return nil
}

func (r *Reader) consume(n int) {
	r.r += n
	r.pos += int64(n)
}

// fill makes at least k bytes available in buf[r:w]. At the end of the
// source it returns io.ErrUnexpectedEOF, or io.EOF if nothing is buffered.
// The buffer grows only as bytes really arrive, so a damaged length cannot
// make it allocate more than the source holds.
func (r *Reader) fill(k int) error {
	for idle := 0; r.w-r.r < k; {
		if r.srcEOF {
			if r.w == r.r {
				return io.EOF
			}
			return io.ErrUnexpectedEOF
		}
		if r.r > 0 && len(r.buf)-r.r < k {
			copy(r.buf, r.buf[r.r:r.w])
			r.w -= r.r
			r.r = 0
		}
		if r.w == len(r.buf) {
			grown := make([]byte, min(max(k, len(r.buf)), 2*len(r.buf)))
			copy(grown, r.buf[r.r:r.w])
			r.w -= r.r
			r.r = 0
			r.buf = grown
		}
		n, err := r.src.Read(r.buf[r.w:])
		r.w += n
		switch {
		case err == io.EOF:
			r.srcEOF = true
		case err != nil:
			return err
		case n > 0:
			idle = 0
		default:
			if idle++; idle == 100 {
				return io.ErrNoProgress
			}
		}
	}
	return nil
}

// readError turns a fill error into what Next returns: atEOF for a clean
// end (io.EOF), or an I/O error naming the file and offset.
func (r *Reader) readError(err, atEOF error) error {
	if err == io.EOF && atEOF != nil {
		return atEOF
	}
	return errs.Errorf("recordio: %s: read at offset %d: %w", r.name, r.pos, err)
}
