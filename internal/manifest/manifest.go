package manifest

import (
	stdcmp "cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/filenames"
	"github.com/stratadb/strata/internal/logformat"
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
//	9 merger       name: the database's merge operator (log format 6 on);
//	               once recorded, every edit that describes the whole
//	               version records it again
//	10 add blob file number | size | values | value bytes | identity
//	               (uvarints; log format 7 on): a file of values the
//	               tables name (see sstables' blob files)
//	11 delete blob file number uvarint: no live table names it any more
//
// From log format 7 on, field 6 continues, after the identity, with the
// table's references into blob files when it has any: a count, then each
// file's number, values and value bytes (uvarints), as the table's
// properties count them, so that the version knows each blob file's live
// bytes without opening a table.
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
	tagMerger
	tagAddBlob
	tagDeleteBlob
)

// NumLevels is the number of levels: L0, and L1 to L6.
const NumLevels = 7

// TableInfo is what the manifest records about a table.
type TableInfo struct {
	Num, Size               uint64
	Smallest, Largest       []byte
	SmallestSeq, LargestSeq uint64
	ID                      uint64 // the table's identity; 0: written before identities
	// BlobRefs count the table's values in blob files (log format 7 on),
	// by file number ascending.
	BlobRefs []BlobRef
}

// BlobRef counts a table's values in one blob file: the table's
// properties' sstables.BlobRef.
type BlobRef struct {
	Num, Values, ValueBytes uint64
}

// BlobFileInfo is what the manifest records about a blob file.
type BlobFileInfo struct {
	Num, Size          uint64
	Values, ValueBytes uint64
	ID                 uint64
}

type LevelTable struct {
	Level int
	Info  TableInfo
}

// LogInfo is what the manifest records about a log: its number, its
// final length once closed (0 while it is written), and its identity (0:
// a log format before 5, or an edit that closes it).
type LogInfo struct {
	Num, Size, ID uint64
}

type Edit struct {
	Comparator                   string
	Merger                       string       // "": unchanged
	LogNum, NextFileNum, LastSeq uint64       // 0: unchanged
	LogFormat                    uint64       // 0: unchanged
	Deleted                      []LevelTable // only level and info.num set
	Added                        []LevelTable
	Logs                         []LogInfo
	AddedBlobs                   []BlobFileInfo
	DeletedBlobs                 []uint64
}

func (e *Edit) Encode() []byte {
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
	if e.Comparator != "" {
		field(tagComparator, []byte(e.Comparator))
	}
	if e.Merger != "" {
		field(tagMerger, []byte(e.Merger))
	}
	for _, f := range []struct{ tag, v uint64 }{{tagLogNum, e.LogNum}, {tagNextFileNum, e.NextFileNum}, {tagLastSeq, e.LastSeq}, {tagLogFormat, e.LogFormat}} {
		if f.v != 0 {
			field(f.tag, uvarints(f.v))
		}
	}
	for _, d := range e.Deleted {
		field(tagDeleteTable, uvarints(uint64(d.Level), d.Info.Num))
	}
	for _, a := range e.Added {
		t := a.Info
		v := uvarints(uint64(a.Level), t.Num, t.Size, t.SmallestSeq, t.LargestSeq, uint64(len(t.Smallest)))
		v = append(v, t.Smallest...)
		v = binary.AppendUvarint(v, uint64(len(t.Largest)))
		v = append(v, t.Largest...)
		if t.ID != 0 || len(t.BlobRefs) > 0 {
			v = binary.AppendUvarint(v, t.ID)
		}
		if len(t.BlobRefs) > 0 {
			v = binary.AppendUvarint(v, uint64(len(t.BlobRefs)))
			for _, r := range t.BlobRefs {
				v = append(v, uvarints(r.Num, r.Values, r.ValueBytes)...)
			}
		}
		field(tagAddTable, v)
	}
	for _, b := range e.AddedBlobs {
		field(tagAddBlob, uvarints(b.Num, b.Size, b.Values, b.ValueBytes, b.ID))
	}
	for _, num := range e.DeletedBlobs {
		field(tagDeleteBlob, uvarints(num))
	}
	for _, l := range e.Logs {
		if l.ID != 0 {
			field(tagLog, uvarints(l.Num, l.Size, l.ID))
		} else {
			field(tagLog, uvarints(l.Num, l.Size))
		}
	}
	return b
}

var ErrBadEdit = errors.New("malformed version edit")

func DecodeEdit(b []byte) (Edit, error) {
	var e Edit
	for len(b) > 0 {
		tag, n := binary.Uvarint(b)
		if n <= 0 {
			return e, errs.Errorf("%w: field tag", ErrBadEdit)
		}
		b = b[n:]
		length, n := binary.Uvarint(b)
		if n <= 0 || length > uint64(len(b)-n) {
			return e, errs.Errorf("%w: field %d length", ErrBadEdit, tag)
		}
		v := b[n : n+int(length)]
		b = b[n+int(length):]
		r := editReader{b: v}
		switch tag {
		case tagComparator:
			e.Comparator = string(v)
			r.b = nil
		case tagMerger:
			e.Merger = string(v)
			r.b = nil
		case tagLogNum:
			e.LogNum = r.uvarint()
		case tagNextFileNum:
			e.NextFileNum = r.uvarint()
		case tagLastSeq:
			e.LastSeq = r.uvarint()
		case tagLogFormat:
			if e.LogFormat = r.uvarint(); r.err == nil && (e.LogFormat < logformat.V1 || e.LogFormat > logformat.Current) {
				r.fail(fmt.Sprintf("log format %d", e.LogFormat))
			}
		case tagLog:
			l := LogInfo{Num: r.uvarint(), Size: r.uvarint()}
			if len(r.b) > 0 {
				l.ID = r.uvarint()
			}
			e.Logs = append(e.Logs, l)
		case tagDeleteTable:
			level, num := r.uvarint(), r.uvarint()
			e.Deleted = append(e.Deleted, LevelTable{Level: int(level), Info: TableInfo{Num: num}})
			r.checkLevel(level)
		case tagAddTable:
			level := r.uvarint()
			r.checkLevel(level)
			t := TableInfo{Num: r.uvarint(), Size: r.uvarint(), SmallestSeq: r.uvarint(), LargestSeq: r.uvarint()}
			t.Smallest, t.Largest = r.bytes(), r.bytes()
			if len(r.b) > 0 {
				t.ID = r.uvarint()
			}
			if len(r.b) > 0 {
				t.BlobRefs = r.blobRefs()
			}
			e.Added = append(e.Added, LevelTable{Level: int(level), Info: t})
		case tagAddBlob:
			e.AddedBlobs = append(e.AddedBlobs, BlobFileInfo{Num: r.uvarint(), Size: r.uvarint(), Values: r.uvarint(), ValueBytes: r.uvarint(), ID: r.uvarint()})
		case tagDeleteBlob:
			e.DeletedBlobs = append(e.DeletedBlobs, r.uvarint())
		default:
			return e, errs.Errorf("%w: unknown field %d", ErrBadEdit, tag)
		}
		if r.err == nil && len(r.b) != 0 {
			r.err = errs.Errorf("%w: field %d has %d trailing bytes", ErrBadEdit, tag, len(r.b))
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

// blobRefs decodes a table's references into blob files: a count, then
// each file's number, values and bytes, by number ascending.
func (r *editReader) blobRefs() []BlobRef {
	n := r.uvarint()
	if n == 0 || n > uint64(len(r.b)) {
		r.fail("bad blob reference count")
		return nil
	}
	refs := make([]BlobRef, n)
	for i := range refs {
		refs[i] = BlobRef{Num: r.uvarint(), Values: r.uvarint(), ValueBytes: r.uvarint()}
		if i > 0 && refs[i].Num <= refs[i-1].Num {
			r.fail("blob references out of order")
		}
	}
	return refs
}

func (r *editReader) checkLevel(level uint64) {
	if level >= NumLevels {
		r.fail(fmt.Sprintf("level %d", level))
	}
}

func (r *editReader) fail(msg string) {
	if r.err == nil {
		r.err = errs.Errorf("%w: %s", ErrBadEdit, msg)
	}
}

// State is what replaying a manifest yields.
type State struct {
	// Comparator is the name of the key order the database is opened
	// with: an edit that records another is ErrComparatorMismatch.
	Comparator string
	// Merger is the name of the merger the manifest records, "" if none.
	Merger                       string
	Levels                       [NumLevels]map[uint64]TableInfo
	LogNum, NextFileNum, LastSeq uint64
	LogFormat                    uint64
	// Logs holds the Logs at or after logNum the manifest names, with
	// their recorded lengths (0: being written when the manifest ended)
	// and identities.
	Logs map[uint64]LogInfo
	// BlobFiles are the blob files the manifest names.
	BlobFiles map[uint64]BlobFileInfo
	// Torn is the damage of a Torn last edit that replay dropped, if any.
	Torn error
}

// Named reports whether the manifest names log num: as the oldest log
// needed, or as a log it recorded when a rotation started it. Such a log's
// file header was durable before the edit that names it.
func (s *State) Named(num uint64) bool {
	_, ok := s.Logs[num]
	return ok || num == s.LogNum
}

func (s *State) Apply(e *Edit) error {
	if e.Comparator != "" && e.Comparator != s.Comparator {
		return errs.Errorf("%w: the database uses %q, not %q", base.ErrComparatorMismatch, e.Comparator, s.Comparator)
	}
	for _, d := range e.Deleted {
		if _, ok := s.Levels[d.Level][d.Info.Num]; !ok {
			return errs.Errorf("%w: deletes table %d, not in L%d", ErrBadEdit, d.Info.Num, d.Level)
		}
		delete(s.Levels[d.Level], d.Info.Num)
	}
	for _, a := range e.Added {
		if s.Levels[a.Level] == nil {
			s.Levels[a.Level] = map[uint64]TableInfo{}
		}
		s.Levels[a.Level][a.Info.Num] = a.Info
	}
	s.LogNum = max(s.LogNum, e.LogNum)
	s.NextFileNum = max(s.NextFileNum, e.NextFileNum)
	s.LastSeq = max(s.LastSeq, e.LastSeq)
	if e.LogFormat != 0 {
		s.LogFormat = e.LogFormat
	}
	if e.Merger != "" {
		s.Merger = e.Merger
	}
	if s.BlobFiles == nil {
		s.BlobFiles = map[uint64]BlobFileInfo{}
	}
	for _, num := range e.DeletedBlobs {
		if _, ok := s.BlobFiles[num]; !ok {
			return errs.Errorf("%w: deletes blob file %d, not in the version", ErrBadEdit, num)
		}
		delete(s.BlobFiles, num)
	}
	for _, b := range e.AddedBlobs {
		s.BlobFiles[b.Num] = b
	}
	if s.Logs == nil {
		s.Logs = map[uint64]LogInfo{}
	}
	for _, l := range e.Logs {
		if l.ID == 0 {
			l.ID = s.Logs[l.Num].ID // closing a log keeps the identity it was started with
		}
		s.Logs[l.Num] = l
	}
	for num := range s.Logs {
		if num < s.LogNum {
			delete(s.Logs, num) // flushed: obsolete
		}
	}
	return nil
}

// CURRENT is a recordio file of one record, the live manifest's name, so
// that it is checksummed like every other file.

// ReadCurrent returns the manifest file name CURRENT points to.
func ReadCurrent(fsys vfs.FS, dir string) (string, error) {
	path := filepath.Join(dir, filenames.CurrentName)
	r, err := recordio.Open(path, &recordio.ReaderOptions{FS: fsys, NoMmap: true, MaxRecordSize: 4096})
	if err != nil {
		return "", err
	}
	defer r.Close()
	rec, err := r.Next()
	if err == io.EOF {
		return "", base.Corruptf(path, recordio.FileHeaderSize, base.ErrCorruption, "empty")
	}
	if err != nil {
		return "", err
	}
	name := string(rec)
	if kind, _ := filenames.Parse(name); kind != filenames.Manifest {
		return "", base.Corruptf(path, r.Offset(), base.ErrCorruption, "names %q, not a manifest", name)
	}
	return name, nil
}

// FileOptions write the manifest and CURRENT: uncompressed, as every
// version of the database wrote them, so that an older build reads them.
func FileOptions(fsys vfs.FS) *recordio.WriterOptions {
	return &recordio.WriterOptions{FS: fsys, Compression: recordio.NoCompression}
}

// WriteCurrent atomically points dir's CURRENT at a manifest: write a
// temporary file, sync it, rename it over CURRENT, sync the directory.
func WriteCurrent(fsys vfs.FS, dir, manifest string) error {
	tmp := filepath.Join(dir, filenames.CurrentName+".tmp")
	w, err := recordio.Create(tmp, FileOptions(fsys))
	if err == nil {
		_, err = w.Write([]byte(manifest))
		if cerr := w.Close(); err == nil { // Close syncs
			err = cerr
		}
	}
	if err == nil {
		err = fsys.Rename(tmp, filepath.Join(dir, filenames.CurrentName))
	}
	if err == nil {
		err = fsys.SyncDir(dir)
	}
	if err != nil {
		return errs.Errorf("simpledb: write CURRENT: %w", err)
	}
	return nil
}

// Replay rebuilds the state a manifest describes. Damage that no
// valid edit follows is a torn last edit, whose write a crash interrupted,
// and is dropped: whether anything depended on it (a log or table it made
// obsolete and that is gone) is for the caller to prove, by finding every
// file the state without it names. Damage that a valid edit follows is
// corruption, and the caller deletes nothing.
func Replay(fsys vfs.FS, path, comparator string) (*State, error) {
	r, err := recordio.Open(path, &recordio.ReaderOptions{FS: fsys, NoMmap: true})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, base.Corruptf(path, 0, base.ErrCorruption, "the manifest CURRENT names is missing")
	}
	if err != nil {
		return nil, errs.Errorf("simpledb: manifest: %w", err)
	}
	defer r.Close()
	s := &State{Comparator: comparator, LogFormat: logformat.V1, Logs: map[uint64]LogInfo{}, BlobFiles: map[uint64]BlobFileInfo{}}
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if errors.Is(err, base.ErrCorruption) {
			if _, rerr := r.Resync(); rerr == io.EOF {
				s.Torn = err // a torn last edit
				break
			}
			return nil, errs.Errorf("simpledb: manifest: %w, and valid edits follow", err)
		}
		if err != nil {
			return nil, errs.Errorf("simpledb: manifest: %w", err)
		}
		e, err := DecodeEdit(rec)
		if err == nil {
			err = s.Apply(&e)
		}
		if errors.Is(err, base.ErrComparatorMismatch) {
			return nil, errs.Errorf("simpledb: %s: %w", path, err)
		}
		if err != nil {
			return nil, base.Corruptf(path, r.Offset(), base.ErrCorruption, "%v", err)
		}
	}
	if s.NextFileNum == 0 {
		return nil, base.Corruptf(path, 0, base.ErrCorruption, "no next file number")
	}
	return s, nil
}

// HasTable reports whether the state names table num at some level.
func (s *State) HasTable(num uint64) bool {
	for _, tables := range s.Levels {
		if _, ok := tables[num]; ok {
			return true
		}
	}
	return false
}

// TableOrder returns the order a read visits level's tables in: L0 newest
// first (flushes write tables of ever higher sequence numbers, so the
// largest sequence number orders them, then the number), the others by
// smallest key in the key order cmp.
func TableOrder(level int, cmp func(a, b []byte) int) func(a, b *TableInfo) int {
	if level == 0 {
		return func(a, b *TableInfo) int {
			if c := stdcmp.Compare(b.LargestSeq, a.LargestSeq); c != 0 {
				return c
			}
			return stdcmp.Compare(b.Num, a.Num)
		}
	}
	return func(a, b *TableInfo) int { return cmp(a.Smallest, b.Smallest) }
}
