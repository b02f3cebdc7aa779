package recordio

import (
	"errors"

	"github.com/stratadb/strata/internal/errs"
)

// Kinds of damage, each matched with errors.Is. All of them also match
// ErrCorruption.
var (
	// ErrUnknownVersion: the file header names a format version this
	// package does not know (often: not a recordio file at all).
	ErrUnknownVersion = errors.New("recordio: unknown format version")
	// ErrUnknownCodec: the file header names an unknown compression codec.
	ErrUnknownCodec = errors.New("recordio: unknown compression codec")
	// ErrBadMagic: a record does not start with the magic number.
	ErrBadMagic = errors.New("recordio: bad record magic number")
	// ErrBadHeader: a record header is malformed (an overflowing varint,
	// unknown flags, lengths that contradict each other).
	ErrBadHeader = errors.New("recordio: malformed record header")
	// ErrHeaderChecksum: a record header does not match its checksum.
	ErrHeaderChecksum = errors.New("recordio: record header checksum mismatch")
	// ErrPayloadChecksum: a record payload does not match its checksum.
	ErrPayloadChecksum = errors.New("recordio: record payload checksum mismatch")
	// ErrBadPayload: a compressed payload does not decompress, or not to the
	// length its header states.
	ErrBadPayload = errors.New("recordio: payload does not decompress")
	// ErrTruncatedHeader: the file ends inside a file or record header.
	ErrTruncatedHeader = errors.New("recordio: truncated header")
	// ErrTruncatedPayload: the file ends before a record's payload does.
	ErrTruncatedPayload = errors.New("recordio: truncated payload")
	// ErrRecordTooLarge: a record is longer than the configured maximum.
	// From a reader it is corruption (a length no writer could have
	// produced); from a writer it is a plain error and nothing is written.
	ErrRecordTooLarge = errors.New("recordio: record too large")
)

// nameOf returns the name errors give a file: its Name, when it has one.
func nameOf(f any) string {
	if n, ok := f.(interface{ Name() string }); ok {
		return n.Name()
	}
	return ""
}

// Usage errors. They do not match ErrCorruption.
var (
	// ErrClosed: the writer or reader was closed.
	ErrClosed = errors.New("recordio: closed")
	// ErrUnsupported: the writer was asked for a format or codec it does
	// not write (an unknown codec, lzw, the go-sstables versions before v4,
	// or zstd in v4).
	ErrUnsupported = errors.New("recordio: unsupported format or codec for writing")
	// ErrUnknownCompression: WriterOptions.Compression is none of the
	// Compression constants. It matches ErrUnsupported too.
	ErrUnknownCompression = errs.Errorf("%w: unknown compression", ErrUnsupported)
	// ErrInvalidOffset: a random read was asked for an offset inside the
	// file header.
	ErrInvalidOffset = errors.New("recordio: offset inside the file header")
)

// errShortHeader is internal: the buffer ended inside the header. The
// caller decides whether more bytes can come or the file is truncated.
var errShortHeader = errors.New("recordio: short header")
