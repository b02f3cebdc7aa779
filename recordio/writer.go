package recordio

import (
	"hash/crc32"
	"io"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/vfs"
)

// SyncWriter is the sink a Writer appends to: a file that can be made
// durable. vfs.File and *os.File satisfy it.
type SyncWriter interface {
	io.Writer
	io.Closer
	Sync() error
}

// Writer appends records to a file. It is not safe for concurrent use.
//
// After an I/O error the file's tail is in an unknown state, so the error is
// sticky: every later call returns it.
type Writer struct {
	f    SyncWriter
	name string
	hdr  FileHeader
	max  int
	comp *compressor

	buf    []byte // buffered bytes not yet written to f
	offset int64  // file offset of the next record
	// written counts the bytes written to f; the writeback of the first
	// writebackTo of them has been started (see WriterOptions.BytesPerSync).
	written, writebackTo, bytesPerSync int64
	cbuf                               []byte // reused compression output buffer
	compressed                         bool   // the last record's payload is compressed
	err                                error  // sticky error; ErrClosed after Close
}

// Create creates (or truncates) the named file on opts.FS and returns a
// Writer that owns it.
func Create(name string, opts *WriterOptions) (*Writer, error) {
	o := opts.withDefaults()
	f, err := o.FS.Create(name)
	if err != nil {
		return nil, errs.Errorf("recordio: create %s: %w", name, err)
	}
	w, err := newWriter(f, name, o)
	if err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// NewWriter returns a Writer that writes to f from its start: f must be
// empty, or a file written over in place (vfs.FS.ReuseForWrite), whose old
// bytes past the records are not the Writer's concern. The Writer owns f:
// Close closes f. If f has a Name method, errors name the file.
func NewWriter(f SyncWriter, opts *WriterOptions) (*Writer, error) {
	return newWriter(f, nameOf(f), opts.withDefaults())
}

func newWriter(f SyncWriter, name string, o WriterOptions) (*Writer, error) {
	codec, err := o.Compression.Codec()
	if err != nil {
		return nil, err
	}
	switch o.Version {
	case VersionStrata:
	case VersionV4:
		if codec == CodecZstd {
			return nil, errs.Errorf("%w: go-sstables v4 has no zstd", ErrUnsupported)
		}
	default:
		return nil, errs.Errorf("%w: version %v", ErrUnsupported, o.Version)
	}
	comp, err := newCompressor(codec, o.Level)
	if err != nil {
		return nil, err
	}
	w := &Writer{
		f:    f,
		name: name,
		hdr:  FileHeader{Version: o.Version, Codec: codec},
		max:  o.MaxRecordSize,
		comp: comp,

		bytesPerSync: o.BytesPerSync,
		buf:          make([]byte, 0, max(o.BufferSize, 2*maxHeaderSize)),
	}
	fh := w.hdr.encode()
	w.buf = append(w.buf, fh[:]...)
	w.offset = FileHeaderSize
	return w, nil
}

// Header returns the file header the writer wrote.
func (w *Writer) Header() FileHeader { return w.hdr }

// Write appends a record and returns its offset, the value to give
// RandomReader.RecordAt. A nil record and an empty one are distinct and
// both read back as written. The record is buffered: it survives a crash
// only after Sync (or WriteSync) returns.
func (w *Writer) Write(record []byte) (int64, error) {
	return w.write(record, true)
}

// WriteUncompressed appends a record like Write but stores it as is,
// whatever the file's codec, so its length on disk is known in advance (a
// fixed-size trailer, say). VersionV4 compresses every record of a file
// with a codec, so there it returns ErrUnsupported.
func (w *Writer) WriteUncompressed(record []byte) (int64, error) {
	if w.hdr.Version == VersionV4 && w.hdr.Codec != CodecNone {
		return 0, errs.Errorf("%w: uncompressed record in a compressed v4 file", ErrUnsupported)
	}
	return w.write(record, false)
}

func (w *Writer) write(record []byte, compress bool) (int64, error) {
	if w.err != nil {
		return 0, w.err
	}
	if len(record) > w.max {
		return 0, errs.Errorf("%w: %d bytes, limit %d", ErrRecordTooLarge, len(record), w.max)
	}
	if cap(w.buf)-len(w.buf) < maxHeaderSize {
		if err := w.writeBuffer(); err != nil {
			return 0, err
		}
	}
	// The header is framed straight into the buffer.
	start := len(w.buf)
	payload, err := w.encode(record, compress)
	if err != nil {
		w.buf = w.buf[:start]
		return 0, errs.Errorf("recordio: %s: compress: %w", w.name, err)
	}
	// v4 compresses every payload, and compression can grow one past the
	// limit, which readers would then reject.
	if len(payload) > w.max {
		w.buf = w.buf[:start]
		return 0, errs.Errorf("%w: %d bytes compress to %d, limit %d", ErrRecordTooLarge, len(record), len(payload), w.max)
	}
	off := w.offset
	w.offset += int64(len(w.buf) - start + len(payload))
	if err := w.appendPayload(payload); err != nil {
		return 0, err
	}
	return off, nil
}

// appendPayload buffers a payload, or, when it is large, writes the buffer
// and then the payload straight to the file: copying it through the buffer
// would cost a pass over its bytes and save no system call.
func (w *Writer) appendPayload(p []byte) error {
	if len(p) <= cap(w.buf)-len(w.buf) {
		w.buf = append(w.buf, p...)
		return nil
	}
	if len(p) < cap(w.buf)/2 {
		n := copy(w.buf[len(w.buf):cap(w.buf)], p)
		w.buf = w.buf[:cap(w.buf)]
		if err := w.writeBuffer(); err != nil {
			return err
		}
		w.buf = append(w.buf, p[n:]...)
		return nil
	}
	if err := w.writeBuffer(); err != nil {
		return err
	}
	return w.writeFile(p)
}

func (w *Writer) writeBuffer() error {
	if len(w.buf) == 0 {
		return nil
	}
	err := w.writeFile(w.buf)
	w.buf = w.buf[:0]
	return err
}

// writeFile writes p to the file, and starts the writeback of what is
// there every bytesPerSync bytes.
func (w *Writer) writeFile(p []byte) error {
	n, err := w.f.Write(p)
	w.written += int64(n)
	if err != nil {
		return w.fail(err)
	}
	if w.bytesPerSync > 0 && w.written-w.writebackTo >= w.bytesPerSync {
		vfs.StartWriteback(w.f, w.writebackTo, w.written-w.writebackTo)
		w.writebackTo = w.written
	}
	return nil
}

// encode appends record's header to w.buf and returns the payload to write
// after it.
func (w *Writer) encode(record []byte, compress bool) ([]byte, error) {
	if w.hdr.Version == VersionV4 {
		return w.encodeV4(record)
	}
	var flags byte
	payload := record
	w.compressed = false
	switch {
	case record == nil:
		flags = flagNil
	case compress && w.hdr.Codec != CodecNone && len(record) > 0:
		c, err := w.comp.compress(w.cbuf, record)
		if err != nil {
			return nil, err
		}
		w.cbuf = c[:0]
		// Keep the compressed form only when it saves at least an eighth:
		// below that, decompressing costs more than the bytes it saves.
		if len(c) < len(record)-len(record)/8 {
			flags = flagCompressed
			payload = c
			w.compressed = true
		}
	}
	w.buf = appendStrataHeader(w.buf, flags, len(record), len(payload), crc32.Checksum(payload, crcTable))
	return payload, nil
}

// encodeV4 writes exactly what go-sstables' v4 writer writes: with a codec,
// every payload is compressed (even an empty one), and a nil record's
// header states the compressed length of nothing but carries no payload.
func (w *Writer) encodeV4(record []byte) ([]byte, error) {
	payload := record
	clen := 0
	if w.hdr.Codec != CodecNone {
		c, err := w.comp.compress(w.cbuf, record)
		if err != nil {
			return nil, err
		}
		w.cbuf = c[:0]
		payload, clen = c, len(c)
	}
	w.compressed = clen > 0
	if record == nil {
		payload = nil
	}
	w.buf = appendV4Header(w.buf, record == nil, len(record), clen)
	return payload, nil
}

// Compressed reports whether the last record written was stored
// compressed: a writer of records that do not compress may stop trying
// (WriteUncompressed).
func (w *Writer) Compressed() bool { return w.compressed }

// WriteSync appends a record and makes it durable before returning.
func (w *Writer) WriteSync(record []byte) (int64, error) {
	off, err := w.Write(record)
	if err != nil {
		return 0, err
	}
	return off, w.Sync()
}

// Flush hands buffered records to the file (the operating system), without
// making them durable.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	return w.writeBuffer()
}

// Sync flushes buffered records and makes everything written durable.
func (w *Writer) Sync() error {
	if err := w.Flush(); err != nil {
		return err
	}
	if err := w.f.Sync(); err != nil {
		return w.fail(errs.Errorf("sync: %w", err))
	}
	return nil
}

// Size returns the file's length including buffered records: the offset
// the next record will get.
func (w *Writer) Size() int64 { return w.offset }

// Close flushes, syncs and closes the file, and returns the writer's codec
// state to a pool. Further calls return ErrClosed.
func (w *Writer) Close() error {
	if w.err == ErrClosed {
		return ErrClosed
	}
	err := w.Sync()
	if cerr := w.f.Close(); err == nil && cerr != nil {
		err = errs.Errorf("recordio: %s: close: %w", w.name, cerr)
	}
	w.comp.release()
	w.err = ErrClosed
	return err
}

func (w *Writer) fail(err error) error {
	w.err = errs.Errorf("recordio: %s: write before offset %d: %w", w.name, w.offset, err)
	return w.err
}
