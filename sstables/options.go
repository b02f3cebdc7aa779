package sstables

import (
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/recordio"
	"github.com/stratadb/strata/vfs"
)

// MaxKeySize is the longest key a table accepts, 64 KiB: the limit of
// every layer.
const MaxKeySize = base.MaxKeySize

// Compression selects the codec that compresses a table's blocks. Its zero
// value is the default, snappy.
type Compression int

const (
	// DefaultCompression is SnappyCompression.
	DefaultCompression Compression = iota
	// NoCompression stores blocks as they are.
	NoCompression
	// SnappyCompression: fast, moderate ratio.
	SnappyCompression
	// ZstdCompression: slower to write, better ratio, fast to read.
	ZstdCompression
	// GzipCompression: for compatibility; zstd is better on every axis.
	GzipCompression
)

// codec returns the recordio codec for c; ok is false for an unknown c.
func (c Compression) codec() (codec recordio.Codec, ok bool) {
	switch c {
	case DefaultCompression, SnappyCompression:
		return recordio.CodecSnappy, true
	case NoCompression:
		return recordio.CodecNone, true
	case ZstdCompression:
		return recordio.CodecZstd, true
	case GzipCompression:
		return recordio.CodecGzip, true
	}
	return 0, false
}

// WriterOptions configure a Writer. The zero value writes snappy-compressed
// 16 KiB blocks, bytewise ordered, without a bloom filter.
type WriterOptions struct {
	// FS is the filesystem to write to. Default: vfs.Default.
	FS vfs.FS
	// Comparator orders keys. Default: Bytewise.
	Comparator *Comparator
	// BlockSize is the uncompressed size at which a data block is closed.
	// Larger blocks give a smaller index and faster scans, smaller ones
	// cheaper point reads. Default: 16 KiB.
	BlockSize int
	// RestartInterval is the number of keys between restart points in a
	// block. Default: 16.
	RestartInterval int
	// Compression compresses blocks. A block is stored compressed only when
	// that saves at least an eighth of it. NewWriter rejects a value that is
	// none of the constants with ErrUnknownCompression. Default: snappy.
	Compression Compression
	// BloomBitsPerKey sizes the bloom filter that lets point reads skip
	// the table: 10 gives about 1% false positives. 0 turns the filter off.
	// Default: 0.
	BloomBitsPerKey int
	// BytesPerSync, if positive, starts the writeback of the table's bytes
	// every BytesPerSync bytes as it is written (recordio.WriterOptions).
	// Default: 0, never: the table's sync writes it all back.
	BytesPerSync int64
}

func (o *WriterOptions) withDefaults() WriterOptions {
	var r WriterOptions
	if o != nil {
		r = *o
	}
	r.FS = vfs.OrDefault(r.FS)
	if r.Comparator == nil {
		r.Comparator = Bytewise
	}
	if r.BlockSize <= 0 {
		r.BlockSize = 16 << 10
	}
	if r.RestartInterval <= 0 {
		r.RestartInterval = 16
	}
	r.BloomBitsPerKey = max(r.BloomBitsPerKey, 0)
	return r
}

// ReaderOptions configure a Reader. The zero value reads bytewise-ordered
// tables through the operating system's filesystem, memory-mapped.
type ReaderOptions struct {
	// FS is the filesystem to read from. Default: vfs.Default.
	FS vfs.FS
	// Comparator must be the one the table was written with; Open checks
	// its name. Default: Bytewise.
	Comparator *Comparator
	// NoMmap reads through the file instead of mapping it into memory (see
	// recordio.ReaderOptions.NoMmap). Default: false.
	NoMmap bool
	// Cache, if set, keeps verified, decompressed blocks across reads; one
	// cache can serve many tables. Default: nil, no cache.
	Cache *Cache
	// CacheID, if nonzero, is the table's id in Cache, which its owner
	// keeps the same across Opens of the file and unique among the cache's
	// tables (a database uses the table's file number): a Reader reopened
	// after Close finds the blocks the earlier one cached, and Close leaves
	// them, for the owner to drop with Cache.EvictTable when the file is
	// deleted. Ids with the top bit set are the cache's own: Open rejects
	// them with ErrBadCacheID. Default: 0, an id unique to this Open, whose
	// blocks Close drops.
	CacheID uint64
}

func (o *ReaderOptions) withDefaults() ReaderOptions {
	var r ReaderOptions
	if o != nil {
		r = *o
	}
	r.FS = vfs.OrDefault(r.FS)
	if r.Comparator == nil {
		r.Comparator = Bytewise
	}
	return r
}
