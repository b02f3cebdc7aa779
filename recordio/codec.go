package recordio

import (
	"bytes"
	"compress/lzw"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/stratadb/strata/internal/errs"

	"github.com/golang/snappy"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// appendWriter is an io.Writer that appends to a reusable slice, so the
// gzip writer can compress into a buffer the writer keeps.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// compressor holds one writer's codec state. It is reused for every record:
// after the first few records it allocates nothing.
type compressor struct {
	codec     Codec
	gz        *gzip.Writer
	zstd      *zstd.Encoder // borrowed from zstdEncoders until release
	zstdLevel zstd.EncoderLevel
	out       appendWriter
}

func newCompressor(codec Codec, level int) (*compressor, error) {
	c := &compressor{codec: codec}
	switch codec {
	case CodecNone, CodecSnappy:
	case CodecGzip:
		if level == 0 {
			level = gzip.DefaultCompression
		}
		gz, err := gzip.NewWriterLevel(&c.out, level)
		if err != nil {
			return nil, errs.Errorf("recordio: gzip level %d: %w", level, err)
		}
		c.gz = gz
	case CodecZstd:
		c.zstdLevel = zstd.SpeedDefault
		if level != 0 {
			c.zstdLevel = zstd.EncoderLevelFromZstd(level)
		}
		enc, err := borrowZstdEncoder(c.zstdLevel)
		if err != nil {
			return nil, err
		}
		c.zstd = enc
	default:
		return nil, errs.Errorf("%w: codec %v", ErrUnsupported, codec)
	}
	return c, nil
}

// compress returns src compressed into dst's storage.
func (c *compressor) compress(dst, src []byte) ([]byte, error) {
	switch c.codec {
	case CodecSnappy:
		return snappy.Encode(dst[:cap(dst)], src), nil
	case CodecGzip:
		c.out.b = dst[:0]
		c.gz.Reset(&c.out)
		if _, err := c.gz.Write(src); err != nil {
			return nil, err
		}
		if err := c.gz.Close(); err != nil {
			return nil, err
		}
		return c.out.b, nil
	case CodecZstd:
		return c.zstd.EncodeAll(src, dst[:0]), nil
	}
	return src, nil
}

// release returns borrowed codec state. The compressor is unusable after.
func (c *compressor) release() {
	if c.zstd != nil {
		zstdEncoders[c.zstdLevel].Put(c.zstd)
		c.zstd = nil
	}
}

// A zstd encoder holds about 1.6 MB of tables once used, so a writer
// borrows one from a pool per level and returns it on Close. Sharing one
// encoder would serialise concurrent writers, and a shared encoder with more
// concurrency hands its internal encoders out in turn, so that even a
// single writer would warm (and allocate) all of them.
var zstdEncoders [zstd.SpeedBestCompression + 1]sync.Pool // by level: *zstd.Encoder

func borrowZstdEncoder(level zstd.EncoderLevel) (*zstd.Encoder, error) {
	if enc, ok := zstdEncoders[level].Get().(*zstd.Encoder); ok {
		return enc, nil
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(level), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return nil, errs.Errorf("recordio: zstd encoder: %w", err)
	}
	return enc, nil
}

// The decoder is safe for concurrent use (DecodeAll) and large, so every
// reader shares one.
var zstdDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecodeAllCapLimit(true))
})

// decompressor holds the codec state of one reader, or of one call of a
// RandomReader (they are pooled there). It checks that a payload
// decompresses to exactly the length its header promised.
type decompressor struct {
	src   bytes.Reader
	gz    *gzip.Reader
	lz    *lzw.Reader
	probe [1]byte
}

// maxSnappyExpansion bounds how much a snappy block can expand: its
// largest expansion is a 3-byte copy tag producing 64 bytes.
const maxSnappyExpansion = 22

// decompress decompresses src, which must yield exactly ulen bytes, into
// dst's storage. A damaged length never makes it allocate more than the
// payload can really produce: block codecs are checked against what their
// own frame says, stream codecs grow the output as bytes arrive.
func (d *decompressor) decompress(codec Codec, dst, src []byte, ulen int) ([]byte, error) {
	if dst == nil {
		dst = []byte{} // an empty record must not come back as a nil one
	}
	switch codec {
	case CodecSnappy:
		n, err := snappy.DecodedLen(src)
		if err != nil {
			return nil, err
		}
		if n != ulen || ulen > maxSnappyExpansion*len(src) {
			return nil, fmt.Errorf("snappy block claims %d bytes, want %d", n, ulen)
		}
		return snappy.Decode(dst[:cap(dst)], src)
	case CodecZstd:
		// Small frames do not declare their size; where one does, it must
		// agree with the record header.
		var fh zstd.Header
		if err := fh.Decode(src); err != nil {
			return nil, err
		}
		if fh.HasFCS && fh.FrameContentSize != uint64(ulen) {
			return nil, fmt.Errorf("zstd frame declares %d bytes, want %d", fh.FrameContentSize, ulen)
		}
		dec, err := zstdDecoder()
		if err != nil {
			return nil, err
		}
		if cap(dst) < ulen {
			dst = make([]byte, 0, ulen)
		}
		// The decoder stops at the capacity it is given: exactly ulen.
		out, err := dec.DecodeAll(src, dst[:0:ulen])
		if err != nil {
			return nil, err
		}
		if len(out) != ulen {
			return nil, fmt.Errorf("zstd frame decodes to %d bytes, want %d", len(out), ulen)
		}
		return out, nil
	case CodecGzip:
		d.src.Reset(src)
		if d.gz == nil {
			gz, err := gzip.NewReader(&d.src)
			if err != nil {
				return nil, err
			}
			d.gz = gz
		} else if err := d.gz.Reset(&d.src); err != nil {
			return nil, err
		}
		d.gz.Multistream(false)
		return d.readExactly(d.gz, dst, ulen)
	case CodecLZW:
		d.src.Reset(src)
		if d.lz == nil {
			d.lz = lzw.NewReader(&d.src, lzw.LSB, 8).(*lzw.Reader)
		} else {
			d.lz.Reset(&d.src, lzw.LSB, 8)
		}
		return d.readExactly(d.lz, dst, ulen)
	}
	return nil, errs.Errorf("%w: %v", ErrUnknownCodec, codec)
}

// readExactly reads ulen bytes from a stream decoder into dst's storage,
// growing it as bytes arrive, then reads to the stream's end so that the
// decoder verifies its trailer (gzip's CRC) and a longer stream is caught.
func (d *decompressor) readExactly(r io.Reader, dst []byte, ulen int) ([]byte, error) {
	dst = dst[:0]
	for len(dst) < ulen {
		if len(dst) == cap(dst) {
			dst = slices.Grow(dst, min(ulen-len(dst), max(cap(dst), 64<<10)))
		}
		n, err := r.Read(dst[len(dst):min(cap(dst), ulen)])
		dst = dst[:len(dst)+n]
		if err == io.EOF && len(dst) < ulen {
			return nil, fmt.Errorf("stream ends after %d of %d bytes", len(dst), ulen)
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
	}
	n, err := r.Read(d.probe[:])
	if n != 0 {
		return nil, fmt.Errorf("stream longer than %d bytes", ulen)
	}
	if err != io.EOF {
		if err == nil {
			err = fmt.Errorf("stream does not end after %d bytes", ulen)
		}
		return nil, err
	}
	return dst, nil
}
