// Package logformat encodes the records of a database's write-ahead logs:
// a batch of writes per record, and, first in a log, its identity. Each is
// one recordio record, uncompressed.
//
// A batch:
//
//	+------------+--------------+---------------+------------+-------+-----
//	| seq        | count        | synced        | stamp      | op 0  | ...
//	| uint64 LE  | uint32 LE    | uint64 LE     | uint32 LE  |       |
//	+------------+--------------+---------------+------------+-------+-----
//	 0            8              12              20           24
//
//	op: kind byte | key length uvarint | key | value length uvarint | value
//
// A tombstone (kind 0) has no value fields; a range deletion (kind 2,
// format 4 on) carries its start as the key and its end as the value,
// either of them empty when unbounded; a merge operand (kind 3, format 6
// on) is written as a value (kind 1) is. seq, set when the batch commits, is
// the sequence number of the first op; op i gets seq+i. synced, set then
// too, is the length of its log known durable at that moment: recovery
// reads it to tell damage to synced data (a later record vouches for it)
// from a torn, unsynced tail (nothing does), even when a power loss wrote
// the tail's pages out of order. stamp, set as the record is appended,
// tells the log's own records from those a recycled file holds of its
// earlier use: the low 32 bits of the log's identity (format 5; of its
// number in formats 3 and 4).
//
// A log's identity record (format 5 on), written and synced with the file
// header before any manifest names the log:
//
//	+-----------+-----------+-----------+
//	| "strata.l"| number    | identity  |
//	| 8 bytes   | uint64 LE | uint64 LE |
//	+-----------+-----------+-----------+
//
// The identity is random (base.NewFileID) and recorded by the manifest
// with the log. No batch begins with the magic: as a sequence number it
// would exceed base.MaxSeq.
//
// The formats, which the manifest records for the whole database:
//
//	1  seq | count (12-byte header)
//	2  seq | count | synced (20 bytes)
//	3  seq | count | synced | log number's low 32 bits (24 bytes)
//	4  as 3; ops may be range deletions (kind 2)
//	5  as 4, the stamp the identity's low 32 bits; a log begins with its
//	   identity
//	6  as 5; ops may be merge operands (kind 3)
//	7  as 6; the manifest may name blob files, and tables whose values lie
//	   in them (table format 3)
//
// The log's records did not change with format 7: the number is the
// database's, which the manifest records, and an older build refuses it
// rather than miss a table's values in a blob file.
package logformat

import (
	"bytes"
	"encoding/binary"
	"errors"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/internal/base"
)

// The log formats.
const (
	V1         = 1
	WithSynced = 2
	LogNum     = 3
	RangeDel   = 4
	Identity   = 5
	Merge      = 6
	BlobFiles  = 7
	// Current is the format this build writes.
	Current = BlobFiles
)

// The sizes of a batch's header, by format.
const (
	HeaderSize       = 24
	HeaderSizeSynced = 20
	HeaderSizeV1     = 12
)

// headerSize returns the header size of format.
func headerSize(format uint64) int {
	switch format {
	case V1:
		return HeaderSizeV1
	case WithSynced:
		return HeaderSizeSynced
	}
	return HeaderSize
}

// ErrBadBatch reports a log record that is not a valid batch.
var ErrBadBatch = errors.New("logformat: malformed batch")

// AppendHeader appends an empty batch header to dst.
func AppendHeader(dst []byte) []byte { return append(dst, make([]byte, HeaderSize)...) }

// AppendOp appends an op to a batch's encoding: value is ignored for a
// deletion, and is a range deletion's end.
func AppendOp(dst []byte, kind base.Kind, key, value []byte) []byte {
	if kind == base.KindDelete {
		dst = append(dst, byte(kind))
		dst = binary.AppendUvarint(dst, uint64(len(key)))
		return append(dst, key...)
	}
	return append(AppendOpHeader(dst, kind, key, len(value)), value...)
}

// AppendOpHeader appends all of an op but its value, of valueLen bytes,
// which the caller appends next.
func AppendOpHeader(dst []byte, kind base.Kind, key []byte, valueLen int) []byte {
	dst = append(dst, byte(kind))
	dst = binary.AppendUvarint(dst, uint64(len(key)))
	dst = append(dst, key...)
	return binary.AppendUvarint(dst, uint64(valueLen))
}

// SetSeq records a batch's first sequence number and its count of ops.
func SetSeq(rec []byte, seq uint64, count uint32) {
	binary.LittleEndian.PutUint64(rec, seq)
	binary.LittleEndian.PutUint32(rec[8:], count)
}

// SetSynced records the length of the batch's log known durable when it
// is appended.
func SetSynced(rec []byte, off int64) {
	binary.LittleEndian.PutUint64(rec[12:], uint64(off))
}

// Synced returns the synced field of a record of the given format: 0 if
// the format has none or the record is too short for one.
func Synced(format uint64, rec []byte) int64 {
	if format == V1 || len(rec) < HeaderSizeSynced {
		return 0
	}
	return int64(binary.LittleEndian.Uint64(rec[12:]))
}

// SetStamp stamps a record with the log it is appended to.
func SetStamp(rec []byte, stamp uint32) {
	binary.LittleEndian.PutUint32(rec[20:], stamp)
}

// Stamp returns the stamp of a record of the given format: 0 for formats
// without one, and records too short for it.
func Stamp(format uint64, rec []byte) uint32 {
	if format < LogNum || len(rec) < HeaderSize {
		return 0
	}
	return binary.LittleEndian.Uint32(rec[20:])
}

// Decode checks a batch of the given format and calls fn, if not nil, for
// each op with its sequence number. It returns the batch's first sequence
// number and its count of ops. A malformed batch is ErrBadBatch; an error
// fn returns ends the decoding and is returned.
func Decode(format uint64, data []byte, fn func(seq uint64, kind base.Kind, key, value []byte) error) (uint64, uint32, error) {
	header := headerSize(format)
	if len(data) < header {
		return 0, 0, errs.Errorf("%w: %d-byte header", ErrBadBatch, len(data))
	}
	seq := binary.LittleEndian.Uint64(data)
	count := binary.LittleEndian.Uint32(data[8:])
	if seq == 0 || seq > base.MaxSeq || uint64(count) > base.MaxSeq-seq+1 {
		return 0, 0, errs.Errorf("%w: seq %d count %d", ErrBadBatch, seq, count)
	}
	if err := decodeOps(format, data[header:], seq, count, fn); err != nil {
		return 0, 0, err
	}
	return seq, count, nil
}

// Ops calls fn with each op of a batch built in memory, whose header may
// not hold its sequence number yet: count says how many ops it holds.
func Ops(data []byte, count uint32, fn func(kind base.Kind, key, value []byte)) error {
	if len(data) < headerSize(Current) {
		return errs.Errorf("%w: %d-byte header", ErrBadBatch, len(data))
	}
	return decodeOps(Current, data[headerSize(Current):], 1, count, func(_ uint64, kind base.Kind, key, value []byte) error {
		fn(kind, key, value)
		return nil
	})
}

// decodeOps decodes count ops from p, the first numbered seq.
func decodeOps(format uint64, p []byte, seq uint64, count uint32, fn func(seq uint64, kind base.Kind, key, value []byte) error) error {
	field := func() ([]byte, bool) {
		n, k := binary.Uvarint(p)
		if k <= 0 || n > uint64(len(p)-k) {
			return nil, false
		}
		v := p[k : k+int(n)]
		p = p[k+int(n):]
		return v, true
	}
	for i := range count {
		if len(p) == 0 {
			return errs.Errorf("%w: %d of %d ops", ErrBadBatch, i, count)
		}
		kind := base.Kind(p[0])
		p = p[1:]
		key, ok := field()
		if !ok || len(key) == 0 && kind != base.KindRangeDelete {
			return errs.Errorf("%w: op %d key", ErrBadBatch, i)
		}
		var value []byte
		switch {
		case kind == base.KindSet, kind == base.KindMerge && format >= Merge:
			if value, ok = field(); !ok {
				return errs.Errorf("%w: op %d value", ErrBadBatch, i)
			}
		case kind == base.KindDelete:
		case kind == base.KindRangeDelete && format >= RangeDel:
			// The range's end; an empty range is never written.
			value, ok = field()
			if !ok || len(key) > base.MaxKeySize || len(value) > base.MaxKeySize ||
				len(key) > 0 && len(value) > 0 && bytes.Compare(key, value) >= 0 {
				return errs.Errorf("%w: op %d range", ErrBadBatch, i)
			}
		default:
			return errs.Errorf("%w: op %d kind %d", ErrBadBatch, i, kind)
		}
		if fn != nil {
			if err := fn(seq+uint64(i), kind, key, value); err != nil {
				return err
			}
		}
	}
	if len(p) != 0 {
		return errs.Errorf("%w: %d trailing bytes", ErrBadBatch, len(p))
	}
	return nil
}

const (
	identityMagic = "strata.l"
	// IdentitySize is the length of an identity record.
	IdentitySize = 24
)

// EncodeIdentity returns the identity record of log num.
func EncodeIdentity(num, id uint64) []byte {
	b := append(make([]byte, 0, IdentitySize), identityMagic...)
	b = binary.LittleEndian.AppendUint64(b, num)
	return binary.LittleEndian.AppendUint64(b, id)
}

// DecodeIdentity parses an identity record: ok is false for anything else.
func DecodeIdentity(rec []byte) (num, id uint64, ok bool) {
	if len(rec) != IdentitySize || string(rec[:8]) != identityMagic {
		return 0, 0, false
	}
	num, id = binary.LittleEndian.Uint64(rec[8:]), binary.LittleEndian.Uint64(rec[16:])
	return num, id, id != 0
}
