package simpledb

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/recordio"
)

// This file holds the read-only views of a database's files that tools
// need (the strata command among them): what the manifest says, the
// edits it is made of, the batches of a log. None of them takes the lock
// or writes anything; a caller that needs the files to hold still opens
// the database read-only first, which takes the lock (see readonly.go).

// TableInfo is what the manifest records about a table.
type TableInfo struct {
	// Level is the table's level, 0 to NumLevels-1.
	Level int
	// Number is the table's file number: its file is NNNNNN.sst.
	Number uint64
	// Size is the table file's length in bytes.
	Size uint64
	// Smallest and Largest bound the keys the table holds, its range
	// deletions included.
	Smallest, Largest []byte
	// SmallestSeq and LargestSeq bound its sequence numbers.
	SmallestSeq, LargestSeq uint64
	// ID is the table's identity, which its file's properties must carry
	// too; 0 for a table written before identities (log format 5).
	ID uint64
}

func (t tableInfo) export(level int) TableInfo {
	return TableInfo{Level: level, Number: t.num, Size: t.size, Smallest: t.smallest, Largest: t.largest,
		SmallestSeq: t.smallestSeq, LargestSeq: t.largestSeq, ID: t.id}
}

// LogInfo describes a write-ahead log.
type LogInfo struct {
	// Number is the log's file number: its file is NNNNNN.log.
	Number uint64
	// Size is the log's length the manifest recorded when the log was
	// closed; 0 while it is written (or after a crash that ended it).
	Size uint64
	// ID is the log's identity, which its first record must carry too
	// (log format 5 on); 0 if none was recorded.
	ID uint64
}

// Layout is a database's state as its manifest records it.
type Layout struct {
	// Manifest is the path of the live manifest, the one CURRENT names.
	Manifest string
	// Comparator names the key order.
	Comparator string
	// LogFormat is the encoding of the logs' batches (see Batch).
	LogFormat uint64
	// NextFileNumber and LastSeq are the manifest's counters.
	NextFileNumber, LastSeq uint64
	// Levels lists each level's tables: L0 newest first, the others in key
	// order.
	Levels [NumLevels][]TableInfo
	// Logs lists the logs that hold writes not yet in a table, oldest
	// first: the manifest's oldest needed log and every later one in the
	// directory.
	Logs []LogInfo
	// Obsolete lists the other files of the directory: obsolete tables,
	// logs and manifests a crash left for the next Open to delete,
	// temporary files, and anything that is not the database's (not
	// LOCK, not CURRENT).
	Obsolete []string
	// TornEdit is the damage of a torn last manifest edit, which Open
	// drops as a write a crash interrupted; nil when there is none.
	TornEdit error
}

// ReadLayout reads the manifest of the database in dir (opts: its FS and
// Comparator; nil for the defaults). A directory without CURRENT is
// ErrNotDB; a damaged CURRENT or manifest is ErrCorruption naming the
// file and offset.
func ReadLayout(dir string, opts *Options) (*Layout, error) {
	o := opts.withDefaults()
	names, err := o.FS.List(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotDB, err)
	}
	if !slices.Contains(names, currentName) {
		return nil, fmt.Errorf("%w: %s has no %s", ErrNotDB, dir, currentName)
	}
	path, err := CurrentManifest(dir, opts)
	if err != nil {
		return nil, err
	}
	state, err := replayManifest(o.FS, path, o.Comparator.Name)
	if err != nil {
		return nil, err
	}
	l := &Layout{Manifest: path, Comparator: state.comparator, LogFormat: state.logFormat,
		NextFileNumber: state.nextFileNum, LastSeq: state.lastSeq, TornEdit: state.torn}
	v := &version{cmp: o.Comparator.Compare}
	for level, tables := range state.levels {
		for _, info := range tables {
			v.levels[level] = append(v.levels[level], &table{tableInfo: info})
		}
	}
	v.sortLevels()
	for level, tables := range v.levels {
		for _, t := range tables {
			l.Levels[level] = append(l.Levels[level], t.tableInfo.export(level))
		}
	}
	for _, name := range names {
		kind, num := parseFileName(name)
		switch {
		case kind == fileLock, kind == fileCurrent, name == filepath.Base(path):
		case kind == fileLog && num >= state.logNum:
			info := state.logs[num]
			l.Logs = append(l.Logs, LogInfo{Number: num, Size: info.size, ID: info.id})
		case kind == fileTable && state.hasTable(num):
		default:
			l.Obsolete = append(l.Obsolete, name)
		}
	}
	slices.SortFunc(l.Logs, func(a, b LogInfo) int { return cmpUint(a.Number, b.Number) })
	return l, nil
}

// hasTable reports whether the state names table num at some level.
func (s *manifestState) hasTable(num uint64) bool {
	for _, tables := range s.levels {
		if _, ok := tables[num]; ok {
			return true
		}
	}
	return false
}

// CurrentManifest returns the path of the manifest that CURRENT in dir
// names (opts: its FS; nil for the default), without reading the manifest.
func CurrentManifest(dir string, opts *Options) (string, error) {
	o := opts.withDefaults()
	name, err := readCurrent(o.FS, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w: %s has no %s", ErrNotDB, dir, currentName)
	}
	if err != nil {
		return "", fmt.Errorf("simpledb: %w", err)
	}
	return filepath.Join(dir, name), nil
}

// ManifestEdit is one edit of a manifest: a change to the set of tables
// and logs, and the counters recovery needs. Zero fields are unchanged.
type ManifestEdit struct {
	// Offset is where the edit's record starts in the manifest.
	Offset int64
	// Comparator names the key order; the first edit of a manifest
	// records it.
	Comparator string
	// LogNumber is the oldest log still needed, NextFileNumber the next
	// unused file number, LastSeq the highest sequence number in any
	// table, LogFormat the encoding of the logs' batches.
	LogNumber, NextFileNumber, LastSeq, LogFormat uint64
	// Deleted lists the tables removed (only Level and Number set), Added
	// those added.
	Deleted, Added []TableInfo
	// Logs lists logs started (Size 0) or closed (Size their length).
	Logs []LogInfo
}

// ReadManifest calls fn with each edit of the manifest at path, in order
// (opts: its FS; nil for the default). Damage ends the walk with an
// ErrCorruption naming the file and offset, after fn has seen every edit
// before it; so does an error fn returns.
func ReadManifest(path string, opts *Options, fn func(ManifestEdit) error) error {
	if fn == nil {
		fn = func(ManifestEdit) error { return nil } // a check alone
	}
	o := opts.withDefaults()
	r, err := recordio.Open(path, &recordio.ReaderOptions{FS: o.FS, NoMmap: true})
	if err != nil {
		return fmt.Errorf("simpledb: manifest: %w", err)
	}
	defer r.Close()
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("simpledb: manifest: %w", err)
		}
		e, err := decodeEdit(rec)
		if err != nil {
			return base.Corruptf(path, r.Offset(), ErrCorruption, "%v", err)
		}
		me := ManifestEdit{Offset: r.Offset(), Comparator: e.comparator, LogNumber: e.logNum,
			NextFileNumber: e.nextFileNum, LastSeq: e.lastSeq, LogFormat: e.logFormat}
		for _, d := range e.deleted {
			me.Deleted = append(me.Deleted, TableInfo{Level: d.level, Number: d.info.num})
		}
		for _, a := range e.added {
			me.Added = append(me.Added, a.info.export(a.level))
		}
		for _, l := range e.logs {
			me.Logs = append(me.Logs, LogInfo{Number: l.num, Size: l.size, ID: l.id})
		}
		if err := fn(me); err != nil {
			return err
		}
	}
}

// OpKind is the kind of a write in a log record.
type OpKind uint8

// The kinds of writes, as a log records them.
const (
	OpDelete      = OpKind(base.KindDelete)
	OpPut         = OpKind(base.KindSet)
	OpDeleteRange = OpKind(base.KindRangeDelete)
)

// String names the kind: "put", "delete" or "delete-range".
func (k OpKind) String() string {
	switch k {
	case OpPut:
		return "put"
	case OpDelete:
		return "delete"
	case OpDeleteRange:
		return "delete-range"
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

// ErrUnknownLogFormat reports a log format this build does not read.
var ErrUnknownLogFormat = errors.New("simpledb: unknown log format")

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
		format = currentLogFormat
	}
	if format < logFormatV1 || format > currentLogFormat {
		return fmt.Errorf("%w: %d", ErrUnknownLogFormat, format)
	}
	o := opts.withDefaults()
	r, err := recordio.Open(path, &recordio.ReaderOptions{FS: o.FS, NoMmap: true, ZeroCopy: true})
	if err != nil {
		return fmt.Errorf("simpledb: log: %w", err)
	}
	defer r.Close()
	var ops []LogOp
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("simpledb: log: %w", err)
		}
		info := r.Info()
		if format >= logFormatIdentity && info.Offset == recordio.FileHeaderSize {
			num, id, ok := decodeLogIdentity(rec)
			if !ok {
				return base.Corruptf(path, info.Offset, ErrCorruption, "the log's first record is not its identity")
			}
			if err := fn(LogRecord{Offset: info.Offset, Size: info.Size, Identity: &LogIdentity{Number: num, ID: id}}); err != nil {
				return err
			}
			continue
		}
		lr := LogRecord{Offset: info.Offset, Size: info.Size, Synced: recordSynced(format, rec), Log: recordStamp(format, rec)}
		ops = ops[:0]
		seq, count, err := decodeLogRecord(format, rec, func(seq uint64, kind base.Kind, key, value []byte) error {
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
