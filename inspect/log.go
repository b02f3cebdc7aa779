package inspect

import (
	"fmt"
	"io"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/logformat"
	"github.com/stratadb/strata/recordio"
)

// OpKind is the kind of a write in a log record.
type OpKind uint8

// The kinds of writes, as a log records them.
const (
	OpDelete      = OpKind(base.KindDelete)
	OpPut         = OpKind(base.KindSet)
	OpDeleteRange = OpKind(base.KindRangeDelete)
	OpMerge       = OpKind(base.KindMerge)
)

// String names the kind: "put", "delete", "delete-range" or "merge".
func (k OpKind) String() string {
	switch k {
	case OpPut:
		return "put"
	case OpDelete:
		return "delete"
	case OpDeleteRange:
		return "delete-range"
	case OpMerge:
		return "merge"
	}
	return fmt.Sprintf("op(%d)", uint8(k))
}

// LogOp is one write of a log record. A range deletion's Key and Value are
// its start and end, empty where unbounded.
type LogOp struct {
	Seq   uint64
	Kind  OpKind
	Key   []byte
	Value []byte
}

// LogRecord is one record of a log: a committed batch, or the log's
// identity.
type LogRecord struct {
	// Offset is where the record starts in the log, Size its length on
	// disk, header included.
	Offset, Size int64
	// Identity is set for a log's first record (format 5 on), which names
	// the log and its identity and holds no batch: the other fields but
	// Offset and Size are then zero.
	Identity *LogIdentity
	// Seq is the sequence number of the first op, Count the number of ops.
	Seq   uint64
	Count int
	// Synced is the log's length known durable when the batch was
	// appended (formats 2 on). Log is the stamp of the log it was appended
	// to: the low 32 bits of its identity (format 5 on) or of its number
	// (formats 3 and 4). In a recycled log's file, a record with another
	// stamp is a leftover of the file's earlier use.
	Synced int64
	Log    uint32
	// Ops are the batch's writes; their keys and values are valid only
	// during the call.
	Ops []LogOp
}

// LogIdentity is what a log's first record says of it (log format 5 on).
type LogIdentity struct {
	// Number is the log's file number, ID its random identity, which the
	// manifest records too.
	Number, ID uint64
}

// ReadLog calls fn with each record of the log at path, in the given
// format (a Layout's LogFormat; 0 for the current one), and opts' FS.
// Damage ends the walk with an ErrCorruption naming the file and offset,
// after fn has seen every record before it; so does an error fn returns.
// Zeros at the end (space allocated ahead) are the log's clean end. It
// shows the file as it is: Open would stop a closed log at its recorded
// length, and a recycled file's records of another log after the log's
// own.
func ReadLog(path string, format uint64, opts *Options, fn func(LogRecord) error) error {
	if fn == nil {
		fn = func(LogRecord) error { return nil } // a check alone
	}
	if format == 0 {
		format = logformat.Current
	}
	if format < logformat.V1 || format > logformat.Current {
		return errs.Errorf("%w: %d", ErrUnknownLogFormat, format)
	}
	o := opts.withDefaults()
	r, err := recordio.Open(path, &recordio.ReaderOptions{FS: o.FS, NoMmap: true, ZeroCopy: true})
	if err != nil {
		return errs.Errorf("inspect: log: %w", err)
	}
	defer r.Close()
	var ops []LogOp
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return errs.Errorf("inspect: log: %w", err)
		}
		info := r.Info()
		if format >= logformat.Identity && info.Offset == recordio.FileHeaderSize {
			num, id, ok := logformat.DecodeIdentity(rec)
			if !ok {
				return base.Corruptf(path, info.Offset, ErrCorruption, "the log's first record is not its identity")
			}
			if err := fn(LogRecord{Offset: info.Offset, Size: info.Size, Identity: &LogIdentity{Number: num, ID: id}}); err != nil {
				return err
			}
			continue
		}
		lr := LogRecord{Offset: info.Offset, Size: info.Size, Synced: logformat.Synced(format, rec), Log: logformat.Stamp(format, rec)}
		ops = ops[:0]
		seq, count, err := logformat.Decode(format, rec, func(seq uint64, kind base.Kind, key, value []byte) error {
			ops = append(ops, LogOp{Seq: seq, Kind: OpKind(kind), Key: key, Value: value})
			return nil
		})
		if err != nil {
			return base.Corruptf(path, info.Offset, ErrCorruption, "%v", err)
		}
		lr.Seq, lr.Count, lr.Ops = seq, int(count), ops
		if err := fn(lr); err != nil {
			return err
		}
	}
}
