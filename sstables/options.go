package sstables

import (
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/recordio"
	"github.com/stratadb/strata/vfs"
)

// MaxKeySize is the longest key a table accepts, 64 KiB: the limit of
// every layer.
const MaxKeySize = base.MaxKeySize

// Compression selects the codec that compresses a table's blocks: the
// recordio type, so that a zero compression means snappy in every layer.
type Compression = recordio.Compression

// The compressions, as in recordio.
const (
	// DefaultCompression is SnappyCompression.
	DefaultCompression = recordio.DefaultCompression
	// NoCompression stores blocks as they are.
	NoCompression = recordio.NoCompression
	// SnappyCompression: fast, moderate ratio.
	SnappyCompression = recordio.SnappyCompression
	// ZstdCompression: slower to write, better ratio, fast to read.
	ZstdCompression = recordio.ZstdCompression
	// GzipCompression: for compatibility; zstd is better on every axis.
	GzipCompression = recordio.GzipCompression
)

// DefaultBlockSize is the data block size a zero BlockSize means, in this
// package and in simpledb: small blocks make a point read of uncached data
// cheap (it reads, checksums and decompresses one block), at the price of a
// larger index, about 14 bytes a block in memory.
const DefaultBlockSize = 4 << 10

// DefaultBloomBitsPerKey is the bloom filter size a zero BloomBitsPerKey
// means, in this package and in simpledb: about 1% false positives.
const DefaultBloomBitsPerKey = 10

// WriterOptions configure a Writer. The zero value writes snappy-compressed
// 4 KiB blocks, bytewise ordered, with a 10-bit bloom filter: the defaults
// of simpledb.Options, so a zero means the same in both.
type WriterOptions struct {
	// FS is the filesystem to write to. Default: vfs.Default.
	FS vfs.FS
	// Comparator orders keys. Default: Bytewise.
	Comparator *Comparator
	// BlockSize is the uncompressed size at which a data block is closed.
	// Larger blocks give a smaller index and faster scans, smaller ones
	// cheaper point reads. Default: DefaultBlockSize, 4 KiB.
	BlockSize int
	// RestartInterval is the number of keys between restart points in a
	// block: a point read walks at most that many entries after its binary
	// search of them. Default: 8, which made a cached Get 15% faster than
	// 16 did, LevelDB's, for tables of 100-byte values 0.5% larger.
	RestartInterval int
	// Compression compresses blocks. A block is stored compressed only when
	// that saves at least an eighth of it. NewWriter rejects a value that is
	// none of the constants with ErrUnknownCompression. Default: snappy.
	Compression Compression
	// BloomBitsPerKey sizes the bloom filter that lets point reads skip
	// the table: 10 gives about 1% false positives. A negative value turns
	// the filter off. Default: DefaultBloomBitsPerKey, 10.
	BloomBitsPerKey int
	// BytesPerSync, if positive, starts the writeback of the table's bytes
	// every BytesPerSync bytes as it is written (recordio.WriterOptions).
	// Default: 0, never: the table's sync writes it all back.
	BytesPerSync int64
	// Blobs, if set, is called at the first value (a KindSet entry's) of
	// at least BlobThreshold bytes, for the blob file that receives it and
	// every later one; the table keeps their handles instead (see
	// BlobWriter). A table without such values creates none. The caller
	// closes the blob file (Writer.BlobWriter) and keeps it while the table
	// names it. Default: nil, every value stays in the table.
	Blobs func() (*BlobWriter, error)
	// BlobThreshold is the size from which a value goes to Blobs.
	// Default: DefaultBlobThreshold, 512 bytes.
	BlobThreshold int
	// ID, if not zero, is recorded in the table's properties
	// (Metadata.ID): an identity its owner gives each table and checks
	// when it opens one, so that a table of the same name and size from
	// elsewhere (another database, a backup of another moment) is refused
	// rather than read. Checksums cannot tell such a table apart: every
	// block of it checks. Default: 0, none.
	ID uint64
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
		r.BlockSize = DefaultBlockSize
	}
	if r.RestartInterval <= 0 {
		r.RestartInterval = 8
	}
	if r.BlobThreshold <= 0 {
		r.BlobThreshold = DefaultBlobThreshold
	}
	switch {
	case r.BloomBitsPerKey == 0:
		r.BloomBitsPerKey = DefaultBloomBitsPerKey
	case r.BloomBitsPerKey < 0:
		r.BloomBitsPerKey = 0
	}
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
	// LoadOnRead leaves the index and the bloom filter to the first read
	// that needs them rather than Open: the index to the first Get, Has,
	// Find, NewIterator, Index or Verify, the filter to the first Get, Has,
	// Find or Verify. A table nobody reads then holds no memory for them,
	// and one only iterated (as a compaction does) none for its filter: a
	// database opens the tables it writes this way, since a compaction
	// replaces most of them, or nobody reads them, before any read does.
	// Damage in them is then that read's error, not Open's. Default:
	// false, Open reads and checks them.
	LoadOnRead bool
	// Blobs reads the values the table keeps in blob files (format 3).
	// Default: nil; reading such a value is then ErrNoBlobSource, while
	// its entry, and its handle (Iterator.BlobHandle), still read.
	Blobs BlobSource
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
