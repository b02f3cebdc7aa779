// Package recordio reads and writes files of records: byte slices appended
// one after another, each framed by a header that lets a reader find, size
// and verify it, and optionally compressed. Every file Strata keeps on disk
// (write-ahead logs, SSTable blocks, the manifest) is a recordio file.
//
// # Usage
//
//	w, err := recordio.Create("data.rio", &recordio.WriterOptions{Compression: recordio.SnappyCompression})
//	off, err := w.Write([]byte("hello"))   // off locates the record for RandomReader
//	err = w.Sync()                          // durable from here on
//	err = w.Close()
//
//	r, err := recordio.Open("data.rio", nil)
//	for {
//		rec, err := r.Next()
//		if err == io.EOF {
//			break
//		}
//		...
//	}
//
// A Reader scans in order, a RandomReader returns the record at an offset
// and is safe for concurrent use, and Reader.Resync skips forward past damage
// to the next valid record. Records are the caller's, except from the
// zero-copy paths (ReaderOptions.ZeroCopy, RandomReader.RecordView): those
// alias the reader's buffers or the mapped file, must not be modified, and
// are valid only until the next call (RecordView: until Close).
//
// # File format
//
// Every file starts with an 8-byte header, then records back to back:
//
//	+---------------------+-------------------+----------+----------+-----
//	| version (uint32 LE) | codec (uint32 LE) | record 0 | record 1 | ...
//	+---------------------+-------------------+----------+----------+-----
//	 0                     4                   8
//
// Codecs are 0 none, 1 gzip (a whole gzip stream per record), 2 snappy (one
// block, not the framed format), 3 lzw (read only: compress/lzw, LSB order,
// literal width 8) and 4 zstd (one frame). Files may end in a run of zero
// bytes (preallocation, direct I/O padding); a reader treats that as a
// clean end.
//
// Strata's own format (VersionStrata, 0x53540001, the default) frames each
// record as:
//
//	+----------+-------+----------+----------+-------------+------------+---------+
//	| magic    | flags | ulen     | plen     | payload CRC | header CRC | payload |
//	| 91 8D 4C | 1 B   | uvarint  | uvarint  | uint32 LE   | uint32 LE  | plen B  |
//	+----------+-------+----------+----------+-------------+------------+---------+
//
// flags bit 0 marks a nil record (no payload, lengths 0), bit 1 a payload
// compressed with the file's codec; other bits must be zero. ulen is the
// record's length, plen the payload's on disk; they are equal for an
// uncompressed payload. A payload is compressed only when that saves at
// least an eighth of its length, so incompressible records cost no
// decompression to read. Both checksums are CRC-32C (Castagnoli): the payload
// CRC covers the payload bytes as stored, the header CRC every header byte
// before it, payload CRC included. A flipped bit anywhere in a record is
// detected, and a damaged length is caught before it is trusted.
//
// go-sstables' formats, read for compatibility (VersionV4 is also written on
// request, byte for byte as go-sstables writes it):
//
//	v1: magic uint32 LE (91 06 13 00) | ulen uint64 LE | clen uint64 LE     (20 bytes)
//	v2: magic uvarint (91 8D 4C) | ulen uvarint | clen uvarint
//	v3: magic uvarint | nil byte (1 = nil) | ulen uvarint | clen uvarint
//	v4: as v3, then a CRC-32C of the header bytes before it, as a uvarint
//
// followed by the payload: clen bytes when the file has a codec (every
// payload is then compressed), else ulen bytes (clen is then 0); nothing
// for a nil record, whatever clen says. A clen of 0 in a file with a codec
// is an empty payload, which does not decompress (ErrBadPayload), as in
// go-sstables. v1 and v2 cannot tell a nil record from an empty one and
// read both as empty, except v1 snappy files, which read both as nil:
// go-sstables' own reader is the reference, and testdata/gosstables holds
// its golden files with what it reads from each. Their payloads carry no
// checksum, so only Strata's format detects damage to payload bytes.
//
// # Errors
//
// Damage is reported as a *CorruptionError naming the file and the offset
// of the damaged record, matching ErrCorruption and one specific kind
// (ErrBadMagic, ErrHeaderChecksum, ErrPayloadChecksum, ErrTruncatedHeader,
// ErrTruncatedPayload, ...) with errors.Is. A header claiming a huge length
// is checked against MaxRecordSize and against the bytes that remain before
// anything is allocated. Using a closed Writer or Reader returns ErrClosed.
package recordio
