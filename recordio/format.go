package recordio

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strconv"
)

// Version is a file's record format, stored in its first four bytes.
type Version uint32

const (
	// VersionV1 is go-sstables' first format: fixed 20-byte headers.
	VersionV1 Version = 1
	// VersionV2 is go-sstables' varint header format.
	VersionV2 Version = 2
	// VersionV3 adds a nil flag to VersionV2.
	VersionV3 Version = 3
	// VersionV4 adds a header checksum to VersionV3. Writers emit it on
	// request, for go-sstables readers.
	VersionV4 Version = 4
	// VersionStrata is this package's own format, the writers' default:
	// every header and every payload is checksummed. The number spells
	// "ST" and a revision, far from go-sstables' small integers.
	VersionStrata Version = 0x5354_0001
)

// String names the version: "v1" to "v4" or "strata".
func (v Version) String() string {
	switch v {
	case VersionV1, VersionV2, VersionV3, VersionV4:
		return "v" + strconv.Itoa(int(v))
	case VersionStrata:
		return "strata"
	default:
		return fmt.Sprintf("version(%#x)", uint32(v))
	}
}

func (v Version) known() bool {
	return v >= VersionV1 && v <= VersionV4 || v == VersionStrata
}

// Codec is the compression applied to record payloads, stored in bytes 4 to
// 8 of every file. The numbering is go-sstables', extended with zstd.
type Codec uint32

const (
	// CodecNone stores payloads as they are.
	CodecNone Codec = 0
	// CodecGzip stores each payload as a complete gzip stream.
	CodecGzip Codec = 1
	// CodecSnappy stores each payload as one snappy block (not the framed
	// format).
	CodecSnappy Codec = 2
	// CodecLZW is compress/lzw, LSB order, literal width 8. It is read for
	// go-sstables compatibility only; writers refuse it.
	CodecLZW Codec = 3
	// CodecZstd stores each payload as one zstd frame. go-sstables cannot
	// read it, so it is refused with VersionV4.
	CodecZstd Codec = 4
)

// String names the codec.
func (c Codec) String() string {
	switch c {
	case CodecNone:
		return "none"
	case CodecGzip:
		return "gzip"
	case CodecSnappy:
		return "snappy"
	case CodecLZW:
		return "lzw"
	case CodecZstd:
		return "zstd"
	default:
		return fmt.Sprintf("codec(%d)", uint32(c))
	}
}

func (c Codec) known() bool { return c <= CodecZstd }

const (
	// FileHeaderSize is the length of the file header: version and codec,
	// both little-endian uint32.
	FileHeaderSize = 8

	// magicNumber separates records. Version 1 stores it as a little-endian
	// uint32, later versions as a uvarint: always the three bytes 91 8D 4C.
	magicNumber = 0x130691

	v1HeaderSize = 20
	// maxHeaderSize bounds every version's record header; the largest is
	// VersionStrata's: magic 3, flags 1, two uvarints of up to 10, and two
	// 4-byte checksums.
	maxHeaderSize = 3 + 1 + 2*binary.MaxVarintLen64 + 4 + 4

	// Flags of a VersionStrata record header.
	flagNil        = 1 << 0
	flagCompressed = 1 << 1
	knownFlags     = flagNil | flagCompressed
)

var (
	varintMagic = [3]byte{0x91, 0x8D, 0x4C}
	v1Magic     = [4]byte{0x91, 0x06, 0x13, 0x00}
	crcTable    = crc32.MakeTable(crc32.Castagnoli)
)

// FileHeader is what the first FileHeaderSize bytes of a file say.
type FileHeader struct {
	// Version is the format of every record in the file.
	Version Version
	// Codec compresses the file's payloads: all of them in go-sstables'
	// formats, those it shrinks enough in VersionStrata.
	Codec Codec
}

func (h FileHeader) encode() [FileHeaderSize]byte {
	var b [FileHeaderSize]byte
	binary.LittleEndian.PutUint32(b[0:4], uint32(h.Version))
	binary.LittleEndian.PutUint32(b[4:8], uint32(h.Codec))
	return b
}

// decodeFileHeader parses a file header. Damage comes back as a
// *headerError, for the caller to wrap with the file's name.
func decodeFileHeader(b []byte) (FileHeader, error) {
	if len(b) < FileHeaderSize {
		return FileHeader{}, badHeader(ErrTruncatedHeader, "file header is %d of %d bytes", len(b), FileHeaderSize)
	}
	h := FileHeader{
		Version: Version(binary.LittleEndian.Uint32(b[0:4])),
		Codec:   Codec(binary.LittleEndian.Uint32(b[4:8])),
	}
	if !h.Version.known() {
		return h, badHeader(ErrUnknownVersion, "%v", h.Version)
	}
	// go-sstables never wrote zstd, and Strata never writes lzw.
	legacy := h.Version != VersionStrata
	if !h.Codec.known() || legacy && h.Codec == CodecZstd || !legacy && h.Codec == CodecLZW {
		return h, badHeader(ErrUnknownCodec, "%v in a %v file", h.Codec, h.Version)
	}
	return h, nil
}

func (h FileHeader) magic() []byte {
	if h.Version == VersionV1 {
		return v1Magic[:]
	}
	return varintMagic[:]
}

// recordHeader is a decoded record header, whatever the version.
type recordHeader struct {
	isNil      bool
	compressed bool   // the payload must be decompressed
	ulen       uint64 // the record's length
	plen       uint64 // the payload's length on disk
	hasCRC     bool   // payloadCRC is set (VersionStrata)
	payloadCRC uint32
	// emptyIsNil makes a record that decompresses to nothing read back as
	// nil: go-sstables reads an empty record of a v1 snappy file so (its v1
	// path decodes into a nil slice), whatever was written.
	emptyIsNil bool
}

// checkPayload reports whether payload matches the header's checksum, when
// the header carries one.
func (h *recordHeader) checkPayload(payload []byte) error {
	if h.hasCRC {
		if got := crc32.Checksum(payload, crcTable); got != h.payloadCRC {
			return badHeader(ErrPayloadChecksum, "stored %08x, computed %08x", h.payloadCRC, got)
		}
	}
	return nil
}

// checkLengths refuses a header whose lengths exceed limit, or whose payload
// is longer than the remaining bytes of the file (when remaining >= 0), so
// that a damaged length is caught before anything is allocated for it.
func (h *recordHeader) checkLengths(limit uint64, remaining int64) error {
	if h.ulen > limit || h.plen > limit {
		return badHeader(ErrRecordTooLarge, "header claims %d bytes, limit %d", max(h.ulen, h.plen), limit)
	}
	if remaining >= 0 && h.plen > uint64(remaining) {
		return badHeader(ErrTruncatedPayload, "header claims a %d-byte payload, %d bytes remain", h.plen, remaining)
	}
	return nil
}

// inflate decompresses a compressed payload into dst, reporting a payload
// that does not decompress to the header's length as damage.
func (h *recordHeader) inflate(d *decompressor, codec Codec, dst, payload []byte) ([]byte, error) {
	rec, err := d.decompress(codec, dst, payload, int(h.ulen))
	if err != nil {
		return nil, badHeader(ErrBadPayload, "%v: %v", codec, err)
	}
	if len(rec) == 0 && h.emptyIsNil {
		return nil, nil
	}
	return rec, nil
}

// headerError carries the kind of damage and a detail, for the caller to
// turn into a *CorruptionError with the file and offset.
type headerError struct {
	kind   error
	detail string
}

func (e *headerError) Error() string { return e.kind.Error() + ": " + e.detail }
func (e *headerError) Unwrap() error { return e.kind }

func badHeader(kind error, format string, args ...any) error {
	return &headerError{kind: kind, detail: fmt.Sprintf(format, args...)}
}

// decodeRecordHeader parses the record header at the start of b. It returns
// errShortHeader when b ends inside the header, and a *headerError when the
// header is damaged.
func (h FileHeader) decodeRecordHeader(b []byte) (recordHeader, int, error) {
	if h.Version == VersionV1 {
		return h.decodeV1(b)
	}
	var rh recordHeader
	if err := checkMagic(b, varintMagic[:]); err != nil {
		return rh, 0, err
	}
	off := len(varintMagic)
	flags := byte(0)
	if h.Version != VersionV2 {
		if len(b) <= off {
			return rh, 0, errShortHeader
		}
		flags = b[off]
		off++
	}
	ulen, n := binary.Uvarint(b[off:])
	if n <= 0 {
		return rh, 0, varintError(n, "uncompressed length")
	}
	off += n
	plen, n := binary.Uvarint(b[off:])
	if n <= 0 {
		return rh, 0, varintError(n, "payload length")
	}
	off += n
	rh.ulen, rh.plen = ulen, plen

	switch h.Version {
	case VersionStrata:
		if len(b) < off+8 {
			return rh, 0, errShortHeader
		}
		rh.payloadCRC = binary.LittleEndian.Uint32(b[off:])
		rh.hasCRC = true
		want := binary.LittleEndian.Uint32(b[off+4:])
		if got := crc32.Checksum(b[:off+4], crcTable); got != want {
			return rh, 0, badHeader(ErrHeaderChecksum, "stored %08x, computed %08x", want, got)
		}
		off += 8
		if flags&^knownFlags != 0 {
			return rh, 0, badHeader(ErrBadHeader, "unknown flags %#02x", flags)
		}
		rh.isNil = flags&flagNil != 0
		rh.compressed = flags&flagCompressed != 0
		switch {
		case rh.isNil && (rh.compressed || ulen != 0 || plen != 0):
			return rh, 0, badHeader(ErrBadHeader, "nil record with a payload")
		case rh.compressed && h.Codec == CodecNone:
			return rh, 0, badHeader(ErrBadHeader, "compressed record in a file without codec")
		case !rh.compressed && ulen != plen:
			return rh, 0, badHeader(ErrBadHeader, "uncompressed record with lengths %d and %d", ulen, plen)
		}
		return rh, off, nil
	case VersionV4:
		sum, n := binary.Uvarint(b[off:])
		if n <= 0 {
			return rh, 0, varintError(n, "header checksum")
		}
		if got := crc32.Checksum(b[:off], crcTable); uint64(got) != sum {
			return rh, 0, badHeader(ErrHeaderChecksum, "stored %08x, computed %08x", sum, got)
		}
		off += n
	}
	// go-sstables v2 to v4: the payload is compressed whenever the file has
	// a codec, and then plen is the compressed length; otherwise the stored
	// compressed length is 0 and the payload is ulen bytes long.
	if flags > 1 {
		return rh, 0, badHeader(ErrBadHeader, "nil flag %#02x", flags)
	}
	return rh, off, h.settleLegacyLengths(&rh, flags == 1)
}

func (h FileHeader) decodeV1(b []byte) (recordHeader, int, error) {
	var rh recordHeader
	if err := checkMagic(b, v1Magic[:]); err != nil {
		return rh, 0, err
	}
	if len(b) < v1HeaderSize {
		return rh, 0, errShortHeader
	}
	rh.ulen = binary.LittleEndian.Uint64(b[4:12])
	rh.plen = binary.LittleEndian.Uint64(b[12:20])
	return rh, v1HeaderSize, h.settleLegacyLengths(&rh, false)
}

// settleLegacyLengths applies the go-sstables length rules: a nil record has
// no payload whatever its compressed length says; with a codec the payload
// is the compressed length; without, the compressed length must be 0.
//
// A v1 record with a codec and a compressed length of 0 thus has an empty
// payload, which no codec decompresses: go-sstables fails on it too (its
// gzip reader returns io.EOF, wrapped, which its callers take for the end
// of the file), and Strata reports ErrBadPayload. The bytes that follow are
// not a payload stored uncompressed: go-sstables reads them as the next
// record header.
func (h FileHeader) settleLegacyLengths(rh *recordHeader, isNil bool) error {
	rh.isNil = isNil
	switch {
	case isNil:
		if rh.ulen != 0 {
			return badHeader(ErrBadHeader, "nil record of length %d", rh.ulen)
		}
		rh.plen = 0
	case h.Codec != CodecNone:
		rh.compressed = true
		rh.emptyIsNil = h.Version == VersionV1 && h.Codec == CodecSnappy
	case rh.plen != 0:
		return badHeader(ErrBadHeader, "compressed length %d in a file without codec", rh.plen)
	default:
		rh.plen = rh.ulen
	}
	return nil
}

// firstNonZero returns the index of b's first non-zero byte, or -1. Zero
// padding can run to megabytes, so it compares eight bytes at a time.
func firstNonZero(b []byte) int {
	i := 0
	for i+8 <= len(b) && binary.LittleEndian.Uint64(b[i:]) == 0 {
		i += 8
	}
	for ; i < len(b); i++ {
		if b[i] != 0 {
			return i
		}
	}
	return -1
}

// badZeroRun reports zero bytes where a record should start, followed by a
// non-zero byte at offset at: not padding, since padding ends the file.
func badZeroRun(at int64) error {
	return badHeader(ErrBadMagic, "zero bytes, then a non-zero byte at offset %d", at)
}

func checkMagic(b, magic []byte) error {
	n := min(len(b), len(magic))
	for i := range n {
		if b[i] != magic[i] {
			return badHeader(ErrBadMagic, "found % x", b[:n])
		}
	}
	if n < len(magic) {
		return errShortHeader
	}
	return nil
}

func varintError(n int, field string) error {
	if n == 0 {
		return errShortHeader
	}
	return badHeader(ErrBadHeader, "%s varint overflows", field)
}

// appendStrataHeader appends a VersionStrata record header.
func appendStrataHeader(dst []byte, flags byte, ulen, plen int, payloadCRC uint32) []byte {
	start := len(dst)
	dst = append(dst, varintMagic[:]...)
	dst = append(dst, flags)
	dst = binary.AppendUvarint(dst, uint64(ulen))
	dst = binary.AppendUvarint(dst, uint64(plen))
	dst = binary.LittleEndian.AppendUint32(dst, payloadCRC)
	return binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst[start:], crcTable))
}

// appendV4Header appends a go-sstables v4 record header.
func appendV4Header(dst []byte, isNil bool, ulen, clen int) []byte {
	start := len(dst)
	dst = append(dst, varintMagic[:]...)
	nilFlag := byte(0)
	if isNil {
		nilFlag = 1
	}
	dst = append(dst, nilFlag)
	dst = binary.AppendUvarint(dst, uint64(ulen))
	dst = binary.AppendUvarint(dst, uint64(clen))
	return binary.AppendUvarint(dst, uint64(crc32.Checksum(dst[start:], crcTable)))
}

// corruptAt wraps a header or payload problem found at off in file name.
func corruptAt(name string, off int64, err error) error {
	if he, ok := err.(*headerError); ok {
		return &CorruptionError{Path: name, Offset: off, Kind: he.kind, Detail: he.detail}
	}
	return &CorruptionError{Path: name, Offset: off, Kind: err}
}
