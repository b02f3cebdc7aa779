package sstables

import (
	"encoding/binary"
	"fmt"

	"github.com/stratadb/strata/internal/errs"
	"github.com/stratadb/strata/recordio"
)

// A blob file holds values kept apart from the tables that name them, so
// that a compaction moves a table's reference to a large value rather than
// the value. It is a recordio file (VersionStrata, the writer's codec):
//
//	+--------------------+
//	| value 0            |  recordio record, compressed when that saves an eighth
//	| ...                |
//	| value n-1          |
//	| trailer            |  an uncompressed 40-byte record, always the last 54 bytes
//	+--------------------+
//
// The trailer: the file's number and identity, then its count of values and
// their bytes (uncompressed), each uint64 LE, and the magic "STRATABL". A
// table names a value by a BlobHandle: the file's number, the offset and
// length of the value's record, and the value's length.
const (
	blobTrailerSize       = 40
	blobTrailerRecordSize = 14 + blobTrailerSize
)

var blobMagic = [8]byte{'S', 'T', 'R', 'A', 'T', 'A', 'B', 'L'}

// BlobHandle locates a value in a blob file.
type BlobHandle struct {
	// FileNum is the blob file's number, as its owner names it.
	FileNum uint64
	// Offset and Length locate the value's record in the file.
	Offset, Length uint64
	// ValueLen is the value's length, which a reference counts toward its
	// file's live bytes without reading it.
	ValueLen uint64
}

// AppendBlobHandle appends h's encoding, four uvarints.
func AppendBlobHandle(dst []byte, h BlobHandle) []byte {
	dst = binary.AppendUvarint(dst, h.FileNum)
	dst = binary.AppendUvarint(dst, h.Offset)
	dst = binary.AppendUvarint(dst, h.Length)
	return binary.AppendUvarint(dst, h.ValueLen)
}

// DecodeBlobHandle decodes a handle AppendBlobHandle encoded, the whole of
// b. Its error describes the damage; the caller names the file.
func DecodeBlobHandle(b []byte) (BlobHandle, error) {
	var h BlobHandle
	for _, field := range []*uint64{&h.FileNum, &h.Offset, &h.Length, &h.ValueLen} {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return BlobHandle{}, errBlock("malformed blob handle")
		}
		*field, b = v, b[n:]
	}
	if len(b) != 0 {
		return BlobHandle{}, errBlock("malformed blob handle: trailing bytes")
	}
	if h.Length == 0 || h.ValueLen > recordio.DefaultMaxRecordSize {
		return BlobHandle{}, errBlock(fmt.Sprintf("blob handle (%d, %d) of a %d-byte value", h.Offset, h.Length, h.ValueLen))
	}
	return h, nil
}

// BlobMetadata describes a blob file.
type BlobMetadata struct {
	// FileNum and ID are the file's number and identity, as its writer was
	// given them.
	FileNum, ID uint64
	// Values and ValueBytes count the values and their uncompressed bytes.
	Values, ValueBytes uint64
	// FileSize is the file's size in bytes.
	FileSize uint64
}

// blobTrailer encodes m's trailer.
func (m BlobMetadata) trailer() []byte {
	b := make([]byte, 0, blobTrailerSize)
	for _, v := range []uint64{m.FileNum, m.ID, m.Values, m.ValueBytes} {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	return append(b, blobMagic[:]...)
}

// decodeBlobTrailer decodes a trailer; FileSize is the caller's to set.
func decodeBlobTrailer(b []byte) (BlobMetadata, error) {
	if len(b) != blobTrailerSize {
		return BlobMetadata{}, fmt.Errorf("trailer of %d bytes", len(b))
	}
	if [8]byte(b[32:]) != blobMagic {
		return BlobMetadata{}, fmt.Errorf("magic % x", b[32:])
	}
	var m BlobMetadata
	for i, v := range []*uint64{&m.FileNum, &m.ID, &m.Values, &m.ValueBytes} {
		*v = binary.LittleEndian.Uint64(b[8*i:])
	}
	return m, nil
}

// BlobWriter appends values to a new blob file. It is not safe for
// concurrent use. As a table is, the file is written under a temporary
// name and appears under its final one only once complete and durable.
type BlobWriter struct {
	durableFile
	meta BlobMetadata
	// skip counts the values to store without trying to compress them,
	// and backoff how many a value that does not compress skips next (see
	// Add).
	skip, backoff int
}

// maxCompressionBackoff bounds the values a blob file stores untried
// after one that did not compress.
const maxCompressionBackoff = 64

// NewBlobWriter creates a blob file to be named name once Close succeeds,
// numbered num: the FileNum of every handle it returns. Of opts it uses FS,
// Compression, BytesPerSync and ID.
func NewBlobWriter(name string, num uint64, opts *WriterOptions) (*BlobWriter, error) {
	o := opts.withDefaults()
	if _, err := o.Compression.Codec(); err != nil {
		return nil, errs.Errorf("sstables: %w", err)
	}
	f, err := createDurable(name, &o)
	if err != nil {
		return nil, err
	}
	return &BlobWriter{durableFile: f, meta: BlobMetadata{FileNum: num, ID: o.ID}}, nil
}

// Add appends value and returns its handle.
func (w *BlobWriter) Add(value []byte) (BlobHandle, error) {
	if w.err != nil {
		return BlobHandle{}, w.err
	}
	// Values that do not compress (media, encrypted or compressed data)
	// make the writer skip trying the next ones, twice as many each time,
	// up to maxCompressionBackoff: a file of them pays for one attempt in
	// 64, and a value that compresses again makes the writer try every one.
	var off int64
	var err error
	if w.skip > 0 {
		w.skip--
		off, err = w.rw.WriteUncompressed(value)
	} else {
		off, err = w.rw.Write(value)
		if err == nil {
			if w.rw.Compressed() {
				w.backoff = 0
			} else {
				w.backoff = min(max(2*w.backoff, 1), maxCompressionBackoff)
				w.skip = w.backoff
			}
		}
	}
	if err != nil {
		return BlobHandle{}, w.fail(err)
	}
	w.meta.Values++
	w.meta.ValueBytes += uint64(len(value))
	return BlobHandle{FileNum: w.meta.FileNum, Offset: uint64(off), Length: uint64(w.rw.Size() - off), ValueLen: uint64(len(value))}, nil
}

// EstimatedSize returns the bytes written so far.
func (w *BlobWriter) EstimatedSize() int64 { return w.rw.Size() }

// Close writes the trailer, syncs the file, renames it to its final name
// and syncs the directory. On failure the temporary file is removed.
func (w *BlobWriter) Close() error {
	return w.close(func() error {
		if err := w.writeLast(w.meta.trailer(), blobTrailerRecordSize, "blob trailer"); err != nil {
			return err
		}
		w.meta.FileSize = uint64(w.rw.Size())
		return nil
	})
}

// Metadata describes the file; FileSize is set once Close has succeeded.
func (w *BlobWriter) Metadata() BlobMetadata { return w.meta }

// Abort discards the file: it closes and removes the temporary file.
func (w *BlobWriter) Abort() error { return w.abort() }
