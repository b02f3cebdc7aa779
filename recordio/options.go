package recordio

import "github.com/stratadb/strata/vfs"

const (
	// DefaultBufferSize is the default write and read buffer size.
	DefaultBufferSize = 256 << 10
	// DefaultMaxRecordSize is the default bound on a record's length.
	DefaultMaxRecordSize = 1 << 30
)

// WriterOptions configure a Writer. The zero value writes snappy-compressed
// VersionStrata files through the operating system's filesystem.
type WriterOptions struct {
	// FS is the filesystem Create uses. Default: vfs.Default.
	FS vfs.FS
	// Version is the format to write: VersionStrata (the default; 0 means
	// it) or VersionV4 for go-sstables readers.
	Version Version
	// Compression compresses payloads; the file header records its codec.
	// Create and NewWriter reject a value that is none of the constants
	// with ErrUnknownCompression. Default: snappy.
	Compression Compression
	// Level is the compression level for CodecGzip (1 to 9) and CodecZstd
	// (zstd's levels, mapped by klauspost/compress). Default: 0, the codec's
	// default level.
	Level int
	// BufferSize is the size of the write buffer. Default: DefaultBufferSize.
	BufferSize int
	// MaxRecordSize is the longest record Write accepts; in VersionV4 with a
	// codec, also the longest compressed payload, as readers check both.
	// Default: DefaultMaxRecordSize.
	MaxRecordSize int
	// BytesPerSync, if positive, starts the writeback of what reached the
	// file every BytesPerSync bytes (vfs.StartWriteback), so that a large
	// file is not all dirty when it is synced. Default: 0, never.
	BytesPerSync int64
}

// ReaderOptions configure the readers. The zero value reads through the
// operating system's filesystem, memory-maps files for random access, and
// returns records the caller owns.
type ReaderOptions struct {
	// FS is the filesystem Open and OpenRandom use. Default: vfs.Default.
	FS vfs.FS
	// BufferSize is the sequential reader's initial buffer size; it grows
	// to hold the largest record. Default: DefaultBufferSize.
	BufferSize int
	// MaxRecordSize is the longest record a reader accepts; a header
	// claiming more is corruption. Default: DefaultMaxRecordSize.
	MaxRecordSize int
	// ZeroCopy makes Reader.Next return records that alias the reader's
	// memory instead of copies the caller owns: its read buffer, its
	// decompression buffer or, when Open mapped the file, the mapped file
	// itself. Such a record must not be modified (a mapping is read-only: a
	// write kills the process) and is valid only until the next call to
	// Next, Resync or Close; copy what must outlive it. It saves an
	// allocation and a copy per record. Default: false.
	ZeroCopy bool
	// NoMmap makes Open and OpenRandom read through the file instead of
	// mapping it into memory. Mapping saves a copy per byte, but a mapped
	// file must not shrink while it is read (the process would die of
	// SIGBUS), and its pages count towards the process's resident memory.
	// Default: false (map when the filesystem is the operating system's).
	NoMmap bool
}

func (o *WriterOptions) withDefaults() WriterOptions {
	var r WriterOptions
	if o != nil {
		r = *o
	}
	r.FS = vfs.OrDefault(r.FS)
	if r.Version == 0 {
		r.Version = VersionStrata
	}
	if r.BufferSize <= 0 {
		r.BufferSize = DefaultBufferSize
	}
	if r.MaxRecordSize <= 0 {
		r.MaxRecordSize = DefaultMaxRecordSize
	}
	return r
}

func (o *ReaderOptions) withDefaults() ReaderOptions {
	var r ReaderOptions
	if o != nil {
		r = *o
	}
	r.FS = vfs.OrDefault(r.FS)
	if r.BufferSize <= 0 {
		r.BufferSize = DefaultBufferSize
	}
	if r.MaxRecordSize <= 0 {
		r.MaxRecordSize = DefaultMaxRecordSize
	}
	return r
}
