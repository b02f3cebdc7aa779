package sstables

import (
	"encoding/binary"
	"fmt"

	"github.com/stratadb/strata/recordio"
)

// BlockHandle locates a block: the offset of its recordio record and the
// record's length on disk, header included.
type BlockHandle struct {
	Offset, Length uint64
}

func (h BlockHandle) append(dst []byte) []byte {
	dst = binary.AppendUvarint(dst, h.Offset)
	return binary.AppendUvarint(dst, h.Length)
}

// decodeHandle decodes a block handle and checks that the block lies
// between the file header and limit.
func decodeHandle(b []byte, limit uint64) (BlockHandle, error) {
	off, n := binary.Uvarint(b)
	if n <= 0 {
		return BlockHandle{}, errBlock("malformed block handle")
	}
	length, m := binary.Uvarint(b[n:])
	if m <= 0 || n+m != len(b) {
		return BlockHandle{}, errBlock("malformed block handle")
	}
	h := BlockHandle{Offset: off, Length: length}
	if !h.within(limit) {
		return BlockHandle{}, errBlock(fmt.Sprintf("block handle (%d, %d) outside [%d, %d)", off, length, recordio.FileHeaderSize, limit))
	}
	return h, nil
}

// within reports whether the block starts after the file header and ends
// by limit. Checking this where handles are decoded means every read is of
// a place a block may be, so a bad handle is reported as damage.
func (h BlockHandle) within(limit uint64) bool {
	return h.Offset >= recordio.FileHeaderSize && h.Length > 0 && h.Offset <= limit && h.Length <= limit-h.Offset
}

const (
	// formatVersion is the table format this package writes. Version 2
	// added the range-deletion block (located by the properties, see
	// propRangeDelOffset), version 3 values in blob files (kindSetBlob,
	// propBlobRefs); earlier tables still read. A reader of an earlier
	// version refuses a later table (unknown format version), so that it
	// never misses its range deletions or takes a handle for a value.
	formatVersion = formatVersionBlobs
	// formatVersionV1 is the format before range deletions.
	formatVersionV1 = 1
	// formatVersionBlobs is the first format whose values may lie in blob
	// files.
	formatVersionBlobs = 3
	// footerSize is the footer's payload; stored uncompressed, its recordio
	// record is always footerRecordSize bytes (a 14-byte header: magic 3,
	// flags 1, two one-byte lengths, two checksums), the last of the file.
	footerSize       = 64
	footerRecordSize = 14 + footerSize
)

// knownFormat reports whether this package reads format version v.
func knownFormat(v uint32) bool { return v >= formatVersionV1 && v <= formatVersion }

// tableMagic ends every footer.
var tableMagic = [8]byte{'S', 'T', 'R', 'A', 'T', 'A', 'S', 'T'}

// footer locates the index, filter and properties blocks:
//
//	index handle:      offset uint64 LE | length uint64 LE
//	filter handle:     offset uint64 LE | length uint64 LE   (length 0: no filter)
//	properties handle: offset uint64 LE | length uint64 LE
//	format version:    uint32 LE
//	reserved:          4 zero bytes
//	magic:             "STRATAST"
type footer struct {
	index, filter, props BlockHandle
	version              uint32
}

func (f footer) encode() []byte {
	b := make([]byte, 0, footerSize)
	for _, h := range []BlockHandle{f.index, f.filter, f.props} {
		b = binary.LittleEndian.AppendUint64(b, h.Offset)
		b = binary.LittleEndian.AppendUint64(b, h.Length)
	}
	b = binary.LittleEndian.AppendUint32(b, f.version)
	b = append(b, 0, 0, 0, 0)
	return append(b, tableMagic[:]...)
}

// decodeFooter checks the footer's magic, version and zero reserved bytes,
// and that every handle lies between the file header and the footer; a zero
// filter handle means no filter.
func decodeFooter(b []byte, footerOffset uint64) (footer, error) {
	if len(b) != footerSize {
		return footer{}, fmt.Errorf("footer of %d bytes", len(b))
	}
	if [8]byte(b[56:]) != tableMagic {
		return footer{}, fmt.Errorf("magic % x", b[56:])
	}
	var f footer
	for i, h := range []*BlockHandle{&f.index, &f.filter, &f.props} {
		h.Offset = binary.LittleEndian.Uint64(b[16*i:])
		h.Length = binary.LittleEndian.Uint64(b[16*i+8:])
		noFilter := h == &f.filter && *h == BlockHandle{}
		if !noFilter && !h.within(footerOffset) {
			return footer{}, fmt.Errorf("handle %d (%d, %d) outside [%d, %d)", i, h.Offset, h.Length, recordio.FileHeaderSize, footerOffset)
		}
	}
	f.version = binary.LittleEndian.Uint32(b[48:])
	if !knownFormat(f.version) {
		return footer{}, fmt.Errorf("unknown format version %d", f.version)
	}
	// Writers zero them; a later format may give them a meaning that this
	// reader would miss.
	if reserved := b[52:56]; [4]byte(reserved) != [4]byte{} {
		return footer{}, fmt.Errorf("reserved bytes % x", reserved)
	}
	return f, nil
}
