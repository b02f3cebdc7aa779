package inspect

import (
	"cmp"
	"errors"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/internal/filenames"
	"github.com/stratadb/strata/internal/manifest"
)

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
	// BlobRefs count the table's values that lie in blob files, per file,
	// by file number ascending (log format 7 on); nil when it keeps all its
	// values itself.
	BlobRefs []BlobRef
}

// BlobRef counts a table's values in one blob file.
type BlobRef struct {
	// Number is the blob file's number: its file is NNNNNN.blob.
	Number uint64
	// Values counts the table's values in the file, ValueBytes their
	// bytes.
	Values, ValueBytes uint64
}

func exportTable(t manifest.TableInfo, level int) TableInfo {
	info := TableInfo{Level: level, Number: t.Num, Size: t.Size, Smallest: t.Smallest, Largest: t.Largest,
		SmallestSeq: t.SmallestSeq, LargestSeq: t.LargestSeq, ID: t.ID}
	for _, r := range t.BlobRefs {
		info.BlobRefs = append(info.BlobRefs, BlobRef{Number: r.Num, Values: r.Values, ValueBytes: r.ValueBytes})
	}
	return info
}

// BlobFileInfo is what the manifest records about a blob file, the file
// that keeps a table's large values apart from it; in a Layout, with what
// of it the live tables still name.
type BlobFileInfo struct {
	// Number is the blob file's number: its file is NNNNNN.blob.
	Number uint64
	// Size is the file's length in bytes.
	Size uint64
	// Values counts the values the file holds, ValueBytes their bytes
	// (uncompressed), as its trailer says too.
	Values, ValueBytes uint64
	// ID is the file's identity, which its trailer must carry too.
	ID uint64
	// LiveValues and LiveBytes count the values, and their bytes, that
	// the live tables name (the sum of their BlobRefs to the file): the
	// rest is garbage, which compactions drop by copying the live values
	// out of a file that holds too much of it. Set in a Layout only; zero
	// in a ManifestEdit, which records no table's use of the file.
	LiveValues, LiveBytes uint64
}

// Garbage returns the bytes of the file's values no live table names
// (in a Layout; in a ManifestEdit, all of them).
func (b BlobFileInfo) Garbage() uint64 { return b.ValueBytes - min(b.LiveBytes, b.ValueBytes) }

func exportBlobFile(b manifest.BlobFileInfo) BlobFileInfo {
	return BlobFileInfo{Number: b.Num, Size: b.Size, Values: b.Values, ValueBytes: b.ValueBytes, ID: b.ID}
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
	// Merger names the merge operator the database was written with, ""
	// if none.
	Merger string
	// LogFormat is the encoding of the logs' batches.
	LogFormat uint64
	// NextFileNumber and LastSeq are the manifest's counters.
	NextFileNumber, LastSeq uint64
	// Levels lists each level's tables: L0 newest first, the others in key
	// order.
	Levels [manifest.NumLevels][]TableInfo
	// BlobFiles lists the blob files the manifest names, by number, with
	// the bytes of each that the tables of Levels name.
	BlobFiles []BlobFileInfo
	// Logs lists the logs that hold writes not yet in a table, oldest
	// first: the manifest's oldest needed log and every later one in the
	// directory.
	Logs []LogInfo
	// Obsolete lists the other files of the directory: obsolete tables,
	// blob files, logs and manifests a crash left for the next Open to
	// delete, temporary files, and anything that is not the database's
	// (not LOCK, not CURRENT).
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
		return nil, errs.Errorf("%w: %w", ErrNotDB, err)
	}
	if !slices.Contains(names, filenames.CurrentName) {
		return nil, errs.Errorf("%w: %s has no %s", ErrNotDB, dir, filenames.CurrentName)
	}
	path, err := CurrentManifest(dir, opts)
	if err != nil {
		return nil, err
	}
	state, err := manifest.Replay(o.FS, path, o.Comparator.Name)
	if err != nil {
		return nil, err
	}
	l := &Layout{Manifest: path, Comparator: state.Comparator, Merger: state.Merger, LogFormat: state.LogFormat,
		NextFileNumber: state.NextFileNum, LastSeq: state.LastSeq, TornEdit: state.Torn}
	live := map[uint64]BlobRef{} // per blob file, the sum of the tables' references
	for level, tables := range state.Levels {
		infos, order := slices.Collect(maps.Values(tables)), manifest.TableOrder(level, o.Comparator.Compare)
		slices.SortFunc(infos, func(a, b manifest.TableInfo) int { return order(&a, &b) })
		for _, info := range infos {
			l.Levels[level] = append(l.Levels[level], exportTable(info, level))
			for _, r := range info.BlobRefs {
				sum := live[r.Num]
				sum.Values, sum.ValueBytes = sum.Values+r.Values, sum.ValueBytes+r.ValueBytes
				live[r.Num] = sum
			}
		}
	}
	for _, num := range slices.Sorted(maps.Keys(state.BlobFiles)) {
		b := exportBlobFile(state.BlobFiles[num])
		b.LiveValues, b.LiveBytes = live[num].Values, live[num].ValueBytes
		l.BlobFiles = append(l.BlobFiles, b)
	}
	for _, name := range names {
		kind, num := filenames.Parse(name)
		_, namedBlob := state.BlobFiles[num]
		switch {
		case kind == filenames.Lock, kind == filenames.Current, name == filepath.Base(path):
		case kind == filenames.Log && num >= state.LogNum:
			info := state.Logs[num]
			l.Logs = append(l.Logs, LogInfo{Number: num, Size: info.Size, ID: info.ID})
		case kind == filenames.Table && state.HasTable(num):
		case kind == filenames.Blob && namedBlob:
		default:
			l.Obsolete = append(l.Obsolete, name)
		}
	}
	slices.SortFunc(l.Logs, func(a, b LogInfo) int { return cmp.Compare(a.Number, b.Number) })
	return l, nil
}

// CurrentManifest returns the path of the manifest that CURRENT in dir
// names (opts: its FS; nil for the default), without reading the manifest.
func CurrentManifest(dir string, opts *Options) (string, error) {
	o := opts.withDefaults()
	name, err := manifest.ReadCurrent(o.FS, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", errs.Errorf("%w: %s has no %s", ErrNotDB, dir, filenames.CurrentName)
	}
	if err != nil {
		return "", errs.Errorf("inspect: %w", err)
	}
	return filepath.Join(dir, name), nil
}
