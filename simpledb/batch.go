package simpledb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/stratadb/strata/internal/base"
)

// Batch collects writes that Write applies atomically: all of them or none,
// also across a crash, since a batch is one write-ahead log record. A Batch
// is not safe for concurrent use; it can be reused after Reset.
//
// Its encoding is the log record:
//
//	+------------+--------------+---------------+------------+-------+-----
//	| seq        | count        | synced        | log        | op 0  | ...
//	| uint64 LE  | uint32 LE    | uint64 LE     | uint32 LE  |       |
//	+------------+--------------+---------------+------------+-------+-----
//	 0            8              12              20           24
//
//	op: kind byte | key length uvarint | key | value length uvarint | value
//
// where a tombstone (kind 0) has no value fields, a range deletion (kind 2,
// log format 4 on) carries its start as the key and its end as the value,
// either of them empty when unbounded, and seq, set when the
// batch commits, is the sequence number of the first op; op i gets seq+i.
// synced, also set when the batch commits, is the length of its log known
// durable at that moment: recovery reads it to tell damage to synced data
// (a later record vouches for it) from a torn, unsynced tail (nothing
// does), even when a power loss wrote the tail's pages out of order. log,
// stamped as the record is appended, is the low 32 bits of its log's
// random identity (log format 5; the log's number in formats 3 and 4): a
// recycled log file still holds its earlier use's records after the new
// ones, valid but of another log, and log tells them apart. Older formats
// lack the last fields: logFormatSynced records end the header at synced
// (20 bytes), logFormatV1 records at count (12 bytes).
type Batch struct {
	data      []byte
	count     uint32
	rangeDels int   // range deletions among the ops: see ErrRangeDelOrder
	bytes     int64 // key and value bytes, for write amplification
	err       error // the first rejected op; Write returns it
}

const (
	batchHeaderSize       = 24
	batchHeaderSizeSynced = 20
	batchHeaderSizeV1     = 12
)

// NewBatch returns an empty batch.
func (d *DB) NewBatch() *Batch { return new(Batch) }

// Put adds a write of value under key. The batch copies both.
func (b *Batch) Put(key, value []byte) error {
	if err := base.CheckKey(key); err != nil {
		return b.reject(err)
	}
	if len(value) > MaxValueSize {
		return b.reject(fmt.Errorf("%w: %d bytes", ErrValueTooLarge, len(value)))
	}
	b.init()
	b.data = append(b.data, byte(base.KindSet))
	b.data = binary.AppendUvarint(b.data, uint64(len(key)))
	b.data = append(b.data, key...)
	b.data = binary.AppendUvarint(b.data, uint64(len(value)))
	b.data = append(b.data, value...)
	return b.added(len(key) + len(value))
}

// Delete adds a deletion of key.
func (b *Batch) Delete(key []byte) error {
	if err := base.CheckKey(key); err != nil {
		return b.reject(err)
	}
	b.init()
	b.data = append(b.data, byte(base.KindDelete))
	b.data = binary.AppendUvarint(b.data, uint64(len(key)))
	b.data = append(b.data, key...)
	return b.added(len(key))
}

// DeleteRange adds the deletion of every key in [start, end): one op,
// whose size and cost do not depend on how many keys the range holds. A nil
// or empty start or end leaves that side unbounded, so DeleteRange(nil,
// nil) deletes every key. A start at or after end makes an empty range:
// nothing is added and the call returns nil. A start or end over
// MaxKeySize is ErrKeyTooLarge. Keys written after the deletion, also
// later in the same batch, are not deleted. Start and end compare
// bytewise: a database in another key order refuses the batch
// (ErrRangeDelOrder).
func (b *Batch) DeleteRange(start, end []byte) error {
	for _, k := range [][]byte{start, end} {
		if len(k) > base.MaxKeySize {
			return b.reject(fmt.Errorf("%w: %d bytes, the limit is %d", ErrKeyTooLarge, len(k), base.MaxKeySize))
		}
	}
	if len(start) > 0 && len(end) > 0 && bytes.Compare(start, end) >= 0 {
		return nil
	}
	b.init()
	b.data = append(b.data, byte(base.KindRangeDelete))
	b.data = binary.AppendUvarint(b.data, uint64(len(start)))
	b.data = append(b.data, start...)
	b.data = binary.AppendUvarint(b.data, uint64(len(end)))
	b.data = append(b.data, end...)
	b.rangeDels++
	return b.added(len(start) + len(end))
}

// Len returns the number of writes in the batch.
func (b *Batch) Len() int { return int(b.count) }

// Reset empties the batch for reuse.
func (b *Batch) Reset() {
	b.data, b.count, b.rangeDels, b.bytes, b.err = b.data[:0], 0, 0, 0, nil
}

func (b *Batch) init() {
	if len(b.data) == 0 {
		b.data = append(b.data, make([]byte, batchHeaderSize)...)
	}
}

func (b *Batch) added(n int) error {
	b.count++
	b.bytes += int64(n)
	if len(b.data) > MaxBatchSize {
		return b.reject(fmt.Errorf("%w: %d bytes", ErrBatchTooLarge, len(b.data)))
	}
	return nil
}

// reject records the first rejected op: Write refuses the whole batch, so a
// caller that ignores Put's error cannot commit half of what it meant.
func (b *Batch) reject(err error) error {
	if b.err == nil {
		b.err = err
	}
	return err
}

func (b *Batch) setSeq(seq uint64) {
	binary.LittleEndian.PutUint64(b.data, seq)
	binary.LittleEndian.PutUint32(b.data[8:], b.count)
}

// setSynced records the length of the batch's log known durable when it is
// appended.
func (b *Batch) setSynced(off int64) {
	binary.LittleEndian.PutUint64(b.data[12:], uint64(off))
}

// recordSynced returns the synced field of a log record of the given
// format: 0 if the format has none or the record is too short for one.
func recordSynced(format uint64, rec []byte) int64 {
	if format == logFormatV1 || len(rec) < batchHeaderSizeSynced {
		return 0
	}
	return int64(binary.LittleEndian.Uint64(rec[12:]))
}

// setRecordStamp stamps a log record with the log it is appended to: see
// recordStamp.
func setRecordStamp(rec []byte, stamp uint32) {
	binary.LittleEndian.PutUint32(rec[20:], stamp)
}

// recordStamp returns the log field of a log record of the given format:
// the low 32 bits of its log's number (formats 3 and 4) or of its log's
// identity (format 5 on). A recycled log's file holds its earlier use's
// records after its own, and the stamp tells them apart. Formats without
// the field, and records too short for it, give 0.
func recordStamp(format uint64, rec []byte) uint32 {
	if format < logFormatLogNum || len(rec) < batchHeaderSize {
		return 0
	}
	return binary.LittleEndian.Uint32(rec[20:])
}

// errBadBatch reports a log record that is not a valid batch.
var errBadBatch = errors.New("malformed batch")

// decodeBatch checks a batch's encoding and calls fn for each op, with the
// op's sequence number. It returns the batch's first seq and count.
func decodeBatch(data []byte, fn func(seq uint64, kind base.Kind, key, value []byte) error) (uint64, uint32, error) {
	return decodeLogRecord(currentLogFormat, data, fn)
}

// decodeLogRecord is decodeBatch for a log record of the given format.
func decodeLogRecord(format uint64, data []byte, fn func(seq uint64, kind base.Kind, key, value []byte) error) (uint64, uint32, error) {
	header := batchHeaderSize
	switch format {
	case logFormatV1:
		header = batchHeaderSizeV1
	case logFormatSynced:
		header = batchHeaderSizeSynced
	}
	if len(data) < header {
		return 0, 0, fmt.Errorf("%w: %d-byte header", errBadBatch, len(data))
	}
	seq := binary.LittleEndian.Uint64(data)
	count := binary.LittleEndian.Uint32(data[8:])
	if seq == 0 || seq > base.MaxSeq || uint64(count) > base.MaxSeq-seq+1 {
		return 0, 0, fmt.Errorf("%w: seq %d count %d", errBadBatch, seq, count)
	}
	p := data[header:]
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
			return 0, 0, fmt.Errorf("%w: %d of %d ops", errBadBatch, i, count)
		}
		kind := base.Kind(p[0])
		p = p[1:]
		key, ok := field()
		if !ok || len(key) == 0 && kind != base.KindRangeDelete {
			return 0, 0, fmt.Errorf("%w: op %d key", errBadBatch, i)
		}
		var value []byte
		switch {
		case kind == base.KindSet:
			if value, ok = field(); !ok {
				return 0, 0, fmt.Errorf("%w: op %d value", errBadBatch, i)
			}
		case kind == base.KindDelete:
		case kind == base.KindRangeDelete && format >= logFormatRangeDel:
			// The range's end; Batch.DeleteRange adds no empty range.
			value, ok = field()
			if !ok || len(key) > base.MaxKeySize || len(value) > base.MaxKeySize ||
				len(key) > 0 && len(value) > 0 && bytes.Compare(key, value) >= 0 {
				return 0, 0, fmt.Errorf("%w: op %d range", errBadBatch, i)
			}
		default:
			return 0, 0, fmt.Errorf("%w: op %d kind %d", errBadBatch, i, kind)
		}
		if fn != nil {
			if err := fn(seq+uint64(i), kind, key, value); err != nil {
				return 0, 0, err
			}
		}
	}
	if len(p) != 0 {
		return 0, 0, fmt.Errorf("%w: %d trailing bytes", errBadBatch, len(p))
	}
	return seq, count, nil
}
