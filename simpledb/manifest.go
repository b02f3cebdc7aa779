package simpledb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/recordio"
	"github.com/stratadb/strata/vfs"
)

// The manifest is a recordio log of version edits: each edit names tables
// added to and removed from levels, and the counters recovery needs. The
// live manifest is named by CURRENT. Every edit is synced before anything
// depends on it: before the log files or compaction inputs it makes
// obsolete are deleted. Open writes a new manifest that starts with one
// edit describing the whole version, then switches CURRENT to it.
//
// An edit is a list of fields, each tag uvarint | length uvarint | bytes:
//
//	1 comparator   name
//	2 log number   uvarint: the oldest log still needed
//	3 next file    uvarint: the next unused file number
//	4 last seq     uvarint: the highest sequence number in any table
//	5 delete table level uvarint | file number uvarint
//	6 add table    level | number | size | smallest seq | largest seq
//	               (uvarints) | smallest key | largest key (uvarint-prefixed)
//	               [| identity uvarint, log format 5 on]
//	7 log format   uvarint: how the logs this manifest names encode batches
//	8 log          number | size [| identity] (uvarints): a log exists;
//	               size 0 while it is written, then its final length once
//	               it is closed; the identity (log format 5 on) when it is
//	               started
//
// Field 8 lets Open prove that every log the state needs is there and
// whole: a log is recorded before anything is written to it (when a
// rotation starts it, or Open names it in a new manifest) and again with
// its length when it is closed (by a rotation or Close). A log the
// manifest names that is missing, shorter than its recorded length or
// damaged within it is corruption, never a torn tail.
//
// Identities (log format 5 on) tell a file from another of the same name:
// each table records a random identity in its properties and each log in
// its first record (see logIdentity), and the manifest records both, so
// that Open, the table cache and Verify refuse a table or log of another
// database, or of an earlier life of this one, whose name and length
// match. A table added by an older build has none (0), and its file must
// have none either.
const (
	tagComparator = iota + 1
	tagLogNum
	tagNextFileNum
	tagLastSeq
	tagDeleteTable
	tagAddTable
	tagLogFormat
	tagLog
)

// Log formats (see Batch for the header). A manifest without a log format
// field predates the batch header's synced field: its logs use
// logFormatV1. The format is the whole database's: Open replays the logs
// in the format their manifest records, and starts the new manifest, in
// currentLogFormat, with a new log that only that manifest names, so the
// older logs it made obsolete are never read in the new format. They are
// deleted, not recycled: recycling takes only logs of the running session.
//
// logFormatRangeDel changed no header: it is the format in which a batch
// may hold range deletions. Every manifest this build writes records it,
// so a build that predates range deletions refuses the database at Open
// (its manifest decoder rejects "log format 4" as ErrCorruption, naming
// the manifest) rather than meet a range deletion in a log, which it would
// refuse only as a damaged record, or at a log's tail drop as a torn
// write; its tables are format 2, which such a build refuses too.
const (
	logFormatV1       = 1 // batch header: seq | count
	logFormatSynced   = 2 // batch header: seq | count | synced
	logFormatLogNum   = 3 // batch header: seq | count | synced | log
	logFormatRangeDel = 4 // as 3; ops may be range deletions (kind 2)
	logFormatIdentity = 5 // as 4; a log starts with its identity, whose low 32 bits replace the log number in every batch
	currentLogFormat  = logFormatIdentity
)

// tableInfo is what the manifest records about a table.
type tableInfo struct {
	num, size               uint64
	smallest, largest       []byte
	smallestSeq, largestSeq uint64
	id                      uint64 // the table's identity; 0: written before identities
}

type levelTable struct {
	level int
	info  tableInfo
}

// logInfo is what the manifest records about a log: its number, its
// final length once closed (0 while it is written), and its identity (0:
// a log format before 5, or an edit that closes it).
type logInfo struct {
	num, size, id uint64
}

type versionEdit struct {
	comparator                   string
	logNum, nextFileNum, lastSeq uint64       // 0: unchanged
	logFormat                    uint64       // 0: unchanged
	deleted                      []levelTable // only level and info.num set
	added                        []levelTable
	logs                         []logInfo
}

func (e *versionEdit) encode() []byte {
	var b []byte
	field := func(tag uint64, v []byte) {
		b = binary.AppendUvarint(b, tag)
		b = binary.AppendUvarint(b, uint64(len(v)))
		b = append(b, v...)
	}
	uvarints := func(vs ...uint64) []byte {
		var out []byte
		for _, v := range vs {
			out = binary.AppendUvarint(out, v)
		}
		return out
	}
	if e.comparator != "" {
		field(tagComparator, []byte(e.comparator))
	}
	for _, f := range []struct{ tag, v uint64 }{{tagLogNum, e.logNum}, {tagNextFileNum, e.nextFileNum}, {tagLastSeq, e.lastSeq}, {tagLogFormat, e.logFormat}} {
		if f.v != 0 {
			field(f.tag, uvarints(f.v))
		}
	}
	for _, d := range e.deleted {
		field(tagDeleteTable, uvarints(uint64(d.level), d.info.num))
	}
	for _, a := range e.added {
		t := a.info
		v := uvarints(uint64(a.level), t.num, t.size, t.smallestSeq, t.largestSeq, uint64(len(t.smallest)))
		v = append(v, t.smallest...)
		v = binary.AppendUvarint(v, uint64(len(t.largest)))
		v = append(v, t.largest...)
		if t.id != 0 {
			v = binary.AppendUvarint(v, t.id)
		}
		field(tagAddTable, v)
	}
	for _, l := range e.logs {
		if l.id != 0 {
			field(tagLog, uvarints(l.num, l.size, l.id))
		} else {
			field(tagLog, uvarints(l.num, l.size))
		}
	}
	return b
}

var errBadEdit = errors.New("malformed version edit")

func decodeEdit(b []byte) (versionEdit, error) {
	var e versionEdit
	for len(b) > 0 {
		tag, n := binary.Uvarint(b)
		if n <= 0 {
			return e, fmt.Errorf("%w: field tag", errBadEdit)
		}
		b = b[n:]
		length, n := binary.Uvarint(b)
		if n <= 0 || length > uint64(len(b)-n) {
			return e, fmt.Errorf("%w: field %d length", errBadEdit, tag)
		}
		v := b[n : n+int(length)]
		b = b[n+int(length):]
		r := editReader{b: v}
		switch tag {
		case tagComparator:
			e.comparator = string(v)
			r.b = nil
		case tagLogNum:
			e.logNum = r.uvarint()
		case tagNextFileNum:
			e.nextFileNum = r.uvarint()
		case tagLastSeq:
			e.lastSeq = r.uvarint()
		case tagLogFormat:
			if e.logFormat = r.uvarint(); r.err == nil && (e.logFormat < logFormatV1 || e.logFormat > currentLogFormat) {
				r.fail(fmt.Sprintf("log format %d", e.logFormat))
			}
		case tagLog:
			l := logInfo{num: r.uvarint(), size: r.uvarint()}
			if len(r.b) > 0 {
				l.id = r.uvarint()
			}
			e.logs = append(e.logs, l)
		case tagDeleteTable:
			level, num := r.uvarint(), r.uvarint()
			e.deleted = append(e.deleted, levelTable{level: int(level), info: tableInfo{num: num}})
			r.checkLevel(level)
		case tagAddTable:
			level := r.uvarint()
			r.checkLevel(level)
			t := tableInfo{num: r.uvarint(), size: r.uvarint(), smallestSeq: r.uvarint(), largestSeq: r.uvarint()}
			t.smallest, t.largest = r.bytes(), r.bytes()
			if len(r.b) > 0 {
				t.id = r.uvarint()
			}
			e.added = append(e.added, levelTable{level: int(level), info: t})
		default:
			return e, fmt.Errorf("%w: unknown field %d", errBadEdit, tag)
		}
		if r.err == nil && len(r.b) != 0 {
			r.err = fmt.Errorf("%w: field %d has %d trailing bytes", errBadEdit, tag, len(r.b))
		}
		if r.err != nil {
			return e, r.err
		}
	}
	return e, nil
}

// editReader decodes a field's contents, remembering the first error.
type editReader struct {
	b   []byte
	err error
}

func (r *editReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("bad uvarint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *editReader) bytes() []byte {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.fail("bad length")
		return nil
	}
	v := append([]byte{}, r.b[:n]...)
	r.b = r.b[n:]
	return v
}

func (r *editReader) checkLevel(level uint64) {
	if level >= NumLevels {
		r.fail(fmt.Sprintf("level %d", level))
	}
}

func (r *editReader) fail(msg string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s", errBadEdit, msg)
	}
}

// manifestState is what replaying a manifest yields.
type manifestState struct {
	// comparator is the name of the key order the database is opened
	// with: an edit that records another is ErrComparatorMismatch.
	comparator                   string
	levels                       [NumLevels]map[uint64]tableInfo
	logNum, nextFileNum, lastSeq uint64
	logFormat                    uint64
	// logs holds the logs at or after logNum the manifest names, with
	// their recorded lengths (0: being written when the manifest ended)
	// and identities.
	logs map[uint64]logInfo
	// torn is the damage of a torn last edit that replay dropped, if any.
	torn error
}

// named reports whether the manifest names log num: as the oldest log
// needed, or as a log it recorded when a rotation started it. Such a log's
// file header was durable before the edit that names it.
func (s *manifestState) named(num uint64) bool {
	_, ok := s.logs[num]
	return ok || num == s.logNum
}

func (s *manifestState) apply(e *versionEdit) error {
	if e.comparator != "" && e.comparator != s.comparator {
		return fmt.Errorf("%w: the database uses %q, not %q", ErrComparatorMismatch, e.comparator, s.comparator)
	}
	for _, d := range e.deleted {
		if _, ok := s.levels[d.level][d.info.num]; !ok {
			return fmt.Errorf("%w: deletes table %d, not in L%d", errBadEdit, d.info.num, d.level)
		}
		delete(s.levels[d.level], d.info.num)
	}
	for _, a := range e.added {
		if s.levels[a.level] == nil {
			s.levels[a.level] = map[uint64]tableInfo{}
		}
		s.levels[a.level][a.info.num] = a.info
	}
	s.logNum = max(s.logNum, e.logNum)
	s.nextFileNum = max(s.nextFileNum, e.nextFileNum)
	s.lastSeq = max(s.lastSeq, e.lastSeq)
	if e.logFormat != 0 {
		s.logFormat = e.logFormat
	}
	if s.logs == nil {
		s.logs = map[uint64]logInfo{}
	}
	for _, l := range e.logs {
		if l.id == 0 {
			l.id = s.logs[l.num].id // closing a log keeps the identity it was started with
		}
		s.logs[l.num] = l
	}
	for num := range s.logs {
		if num < s.logNum {
			delete(s.logs, num) // flushed: obsolete
		}
	}
	return nil
}

// CURRENT is a recordio file of one record, the live manifest's name, so
// that it is checksummed like every other file.

// readCurrent returns the manifest file name CURRENT points to.
func readCurrent(fsys vfs.FS, dir string) (string, error) {
	path := filepath.Join(dir, currentName)
	r, err := recordio.Open(path, &recordio.ReaderOptions{FS: fsys, NoMmap: true, MaxRecordSize: 4096})
	if err != nil {
		return "", err
	}
	defer r.Close()
	rec, err := r.Next()
	if err == io.EOF {
		return "", base.Corruptf(path, recordio.FileHeaderSize, ErrCorruption, "empty")
	}
	if err != nil {
		return "", err
	}
	name := string(rec)
	if kind, _ := parseFileName(name); kind != fileManifest {
		return "", base.Corruptf(path, r.Offset(), ErrCorruption, "names %q, not a manifest", name)
	}
	return name, nil
}

// metaFileOptions write the manifest and CURRENT: uncompressed, as every
// version of the database wrote them, so that an older build reads them.
func metaFileOptions(fsys vfs.FS) *recordio.WriterOptions {
	return &recordio.WriterOptions{FS: fsys, Compression: recordio.NoCompression}
}

// writeCurrent atomically points dir's CURRENT at a manifest: write a
// temporary file, sync it, rename it over CURRENT, sync the directory.
func writeCurrent(fsys vfs.FS, dir, manifest string) error {
	tmp := filepath.Join(dir, currentName+".tmp")
	w, err := recordio.Create(tmp, metaFileOptions(fsys))
	if err == nil {
		_, err = w.Write([]byte(manifest))
		if cerr := w.Close(); err == nil { // Close syncs
			err = cerr
		}
	}
	if err == nil {
		err = fsys.Rename(tmp, filepath.Join(dir, currentName))
	}
	if err == nil {
		err = fsys.SyncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("simpledb: write CURRENT: %w", err)
	}
	return nil
}

// replayManifest rebuilds the state a manifest describes. Damage that no
// valid edit follows is a torn last edit, whose write a crash interrupted,
// and is dropped: whether anything depended on it (a log or table it made
// obsolete and that is gone) is for the caller to prove, by finding every
// file the state without it names. Damage that a valid edit follows is
// corruption, and the caller deletes nothing.
func replayManifest(fsys vfs.FS, path, comparator string) (*manifestState, error) {
	r, err := recordio.Open(path, &recordio.ReaderOptions{FS: fsys, NoMmap: true})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, base.Corruptf(path, 0, ErrCorruption, "the manifest CURRENT names is missing")
	}
	if err != nil {
		return nil, fmt.Errorf("simpledb: manifest: %w", err)
	}
	defer r.Close()
	s := &manifestState{comparator: comparator, logFormat: logFormatV1, logs: map[uint64]logInfo{}}
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if errors.Is(err, ErrCorruption) {
			if _, rerr := r.Resync(); rerr == io.EOF {
				s.torn = err // a torn last edit
				break
			}
			return nil, fmt.Errorf("simpledb: manifest: %w, and valid edits follow", err)
		}
		if err != nil {
			return nil, fmt.Errorf("simpledb: manifest: %w", err)
		}
		e, err := decodeEdit(rec)
		if err == nil {
			err = s.apply(&e)
		}
		if errors.Is(err, ErrComparatorMismatch) {
			return nil, fmt.Errorf("simpledb: %s: %w", path, err)
		}
		if err != nil {
			return nil, base.Corruptf(path, r.Offset(), ErrCorruption, "%v", err)
		}
	}
	if s.nextFileNum == 0 {
		return nil, base.Corruptf(path, 0, ErrCorruption, "no next file number")
	}
	return s, nil
}
