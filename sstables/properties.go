package sstables

import (
	"encoding/binary"
	"fmt"

	"github.com/stratadb/strata/recordio"
)

// Metadata describes a table. The writer records it in the properties
// block; the reader returns it from Metadata.
type Metadata struct {
	// FormatVersion is the table format version.
	FormatVersion uint32
	// Records counts entries, tombstones included; Tombstones counts those.
	Records, Tombstones uint64
	// MinKey and MaxKey are the smallest and largest keys.
	MinKey, MaxKey []byte
	// MinSeq and MaxSeq bound the sequence numbers of the entries and the
	// range tombstones.
	MinSeq, MaxSeq uint64
	// DataBlocks counts data blocks.
	DataBlocks uint64
	// DataSize, IndexSize and FilterSize are the on-disk bytes of the data
	// blocks, the index block and the filter block.
	DataSize, IndexSize, FilterSize uint64
	// RawKeySize and RawValueSize sum the keys' and values' lengths.
	RawKeySize, RawValueSize uint64
	// FileSize is the table file's length (filled in by the reader).
	FileSize uint64
	// Comparator is the name of the key order.
	Comparator string
	// Codec compresses the blocks.
	Codec recordio.Codec
	// BlockSize, RestartInterval and BloomBitsPerKey are the writer's
	// options.
	BlockSize, RestartInterval, BloomBitsPerKey uint64
	// CreatedUnixNano is when the writer finished the table.
	CreatedUnixNano int64
	// RangeDeletions counts the fragments of the range-deletion block, and
	// RangeDelSize is its bytes on disk (0: none, as in every version 1
	// table).
	RangeDeletions, RangeDelSize uint64
	// ID is the identity the writer was given (WriterOptions.ID); 0 if
	// none.
	ID uint64
	// BlobRefs count the table's values in each blob file, by file number
	// ascending (format 3); nil if none.
	BlobRefs []BlobRef
	// rangeDelOffset is where the range-deletion block starts.
	rangeDelOffset uint64
}

// The properties block is a list of fields, each tag uvarint | length
// uvarint | bytes, so that readers skip fields they do not know. Numbers
// are uvarints inside their bytes; keys and names are raw.
const (
	propFormatVersion = iota + 1
	propRecords
	propTombstones
	propMinKey
	propMaxKey
	propMinSeq
	propMaxSeq
	propDataBlocks
	propDataSize
	propIndexSize
	propFilterSize
	propRawKeySize
	propRawValueSize
	propComparator
	propCodec
	propBlockSize
	propRestartInterval
	propBloomBitsPerKey
	propCreatedUnixNano
	// Format version 2: the range-deletion block's handle and fragments.
	propRangeDelOffset
	propRangeDelSize
	propRangeDeletions
	// The table's identity (WriterOptions.ID), when it has one. Readers
	// that predate it skip it as a field they do not know.
	propID
	// Format version 3: the table's references into blob files.
	propBlobRefs
)

// numericProps lists the numeric fields; FileSize is not stored.
func (m *Metadata) numericProps() map[uint64]*uint64 {
	return map[uint64]*uint64{
		propRecords: &m.Records, propTombstones: &m.Tombstones,
		propMinSeq: &m.MinSeq, propMaxSeq: &m.MaxSeq,
		propDataBlocks: &m.DataBlocks, propDataSize: &m.DataSize,
		propIndexSize: &m.IndexSize, propFilterSize: &m.FilterSize,
		propRawKeySize: &m.RawKeySize, propRawValueSize: &m.RawValueSize,
		propBlockSize: &m.BlockSize, propRestartInterval: &m.RestartInterval,
		propBloomBitsPerKey: &m.BloomBitsPerKey,
		propRangeDelOffset:  &m.rangeDelOffset, propRangeDelSize: &m.RangeDelSize,
		propRangeDeletions: &m.RangeDeletions, propID: &m.ID,
	}
}

func (m *Metadata) encode() []byte {
	var b []byte
	field := func(tag uint64, v []byte) {
		b = binary.AppendUvarint(b, tag)
		b = binary.AppendUvarint(b, uint64(len(v)))
		b = append(b, v...)
	}
	number := func(tag, v uint64) { field(tag, binary.AppendUvarint(nil, v)) }
	number(propFormatVersion, uint64(m.FormatVersion))
	numbers := m.numericProps()
	for tag := uint64(propFormatVersion); tag <= propCreatedUnixNano; tag++ {
		if p, ok := numbers[tag]; ok {
			number(tag, *p)
		}
	}
	if m.RangeDelSize > 0 {
		for tag := uint64(propRangeDelOffset); tag <= propRangeDeletions; tag++ {
			number(tag, *numbers[tag])
		}
	}
	if m.ID != 0 {
		number(propID, m.ID)
	}
	if len(m.BlobRefs) > 0 {
		field(propBlobRefs, encodeBlobRefs(m.BlobRefs))
	}
	field(propMinKey, m.MinKey)
	field(propMaxKey, m.MaxKey)
	field(propComparator, []byte(m.Comparator))
	number(propCodec, uint64(m.Codec))
	number(propCreatedUnixNano, uint64(m.CreatedUnixNano))
	return b
}

func decodeMetadata(b []byte) (Metadata, error) {
	var m Metadata
	numbers := m.numericProps()
	for len(b) > 0 {
		tag, n := binary.Uvarint(b)
		if n <= 0 {
			return m, fmt.Errorf("bad field tag")
		}
		b = b[n:]
		length, n := binary.Uvarint(b)
		if n <= 0 || length > uint64(len(b)-n) {
			return m, fmt.Errorf("field %d: bad length", tag)
		}
		v := b[n : n+int(length)]
		b = b[n+int(length):]

		if tag == propBlobRefs {
			refs, err := decodeBlobRefs(v)
			if err != nil {
				return m, err
			}
			m.BlobRefs = refs
			continue
		}
		var num uint64
		if tag != propMinKey && tag != propMaxKey && tag != propComparator {
			var k int
			if num, k = binary.Uvarint(v); k <= 0 || k != len(v) {
				if tag <= propID {
					return m, fmt.Errorf("field %d: bad number", tag)
				}
				continue // a field from a newer writer
			}
		}
		switch tag {
		case propFormatVersion:
			m.FormatVersion = uint32(num)
		case propMinKey:
			m.MinKey = append([]byte{}, v...)
		case propMaxKey:
			m.MaxKey = append([]byte{}, v...)
		case propComparator:
			m.Comparator = string(v)
		case propCodec:
			m.Codec = recordio.Codec(num)
		case propCreatedUnixNano:
			m.CreatedUnixNano = int64(num)
		default:
			if p, ok := numbers[tag]; ok {
				*p = num
			}
		}
	}
	if !knownFormat(m.FormatVersion) {
		return m, fmt.Errorf("format version %d", m.FormatVersion)
	}
	if m.FormatVersion == formatVersionV1 && m.RangeDelSize != 0 {
		return m, fmt.Errorf("range deletions in a version %d table", m.FormatVersion)
	}
	if m.FormatVersion < formatVersionBlobs && m.BlobRefs != nil {
		return m, fmt.Errorf("blob references in a version %d table", m.FormatVersion)
	}
	return m, nil
}
