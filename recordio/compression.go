package recordio

import (
	"fmt"

	"github.com/stratadb/strata/internal/errs"
)

// Compression selects the codec a writer compresses with. Its zero value is
// the default, snappy, as it is for sstables.WriterOptions and
// simpledb.Options, which take this type too: a zero compression means the
// same thing in every layer. A Codec, by contrast, is what a file header
// records; its zero is CodecNone, the number go-sstables writes.
type Compression int

const (
	// DefaultCompression is SnappyCompression.
	DefaultCompression Compression = iota
	// NoCompression stores payloads as they are.
	NoCompression
	// SnappyCompression: fast, moderate ratio.
	SnappyCompression
	// ZstdCompression: slower to write, better ratio, fast to read.
	// go-sstables cannot read it, so VersionV4 writers refuse it.
	ZstdCompression
	// GzipCompression: for compatibility; zstd is better on every axis.
	GzipCompression
)

// Codec returns the codec c writes, or ErrUnknownCompression when c is none
// of the constants.
func (c Compression) Codec() (Codec, error) {
	switch c {
	case DefaultCompression, SnappyCompression:
		return CodecSnappy, nil
	case NoCompression:
		return CodecNone, nil
	case ZstdCompression:
		return CodecZstd, nil
	case GzipCompression:
		return CodecGzip, nil
	}
	return 0, errs.Errorf("%w: %d", ErrUnknownCompression, int(c))
}

// String names the compression: its codec's name, or "compression(N)" for
// an unknown one.
func (c Compression) String() string {
	codec, err := c.Codec()
	if err != nil {
		return fmt.Sprintf("compression(%d)", int(c))
	}
	return codec.String()
}
