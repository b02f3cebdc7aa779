package simpledb

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"time"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/filenames"
	"github.com/stratadb/strata/internal/logformat"
	"github.com/stratadb/strata/internal/manifest"
	"github.com/stratadb/strata/sstables"
)

// VerifyReport is what Verify found.
type VerifyReport struct {
	// Manifest is the path of the live manifest, if CURRENT could be read.
	Manifest string
	// Tables, BlobFiles and Logs count the files read, Bytes their bytes.
	Tables, BlobFiles, Logs int
	Bytes                   int64
	// Entries counts the table entries read, Batches the log records.
	Entries, Batches uint64
	// Damage lists every damage found, each an error naming the file and,
	// for damaged bytes, a *CorruptionError with the offset. Empty when the
	// database is whole.
	Damage []error
	// Notes lists what a crash leaves and Open repairs: a torn last
	// manifest edit, a log's torn tail. They are not damage.
	Notes []string
}

// Verify checks the database in dir without opening it for use and
// without writing anything: CURRENT and every edit of the manifest; that
// every table the manifest names is there, of its recorded size, with the
// keys and sequence numbers the manifest says and the levels below L0
// disjoint; every block of every table (sstables.Reader.Verify); every
// blob file the manifest names, whole, of its recorded identity and
// values, and every value a table names in one (a reference that names no
// value is damage naming both files); every
// record and batch of every log the database still needs, by the rules
// recovery applies (damage in a torn tail, which an interrupted write
// leaves, is a note, not damage). It reports every damage it can reach:
// with the manifest unreadable it verifies every table and log in the
// directory on its own. progress, if not nil, is called with the bytes of
// each file as it is done.
//
// It takes no lock and writes nothing, so the database may be open
// meanwhile, in this process or another, and written: Verify reads it as
// a follower does (Options.Follow), and reports damage only where two
// runs, a moment apart and with the manifest standing still during each,
// find the same; where the writer kept changing its manifest, it returns
// ErrOutpaced. A run that finds nothing is the answer. opts gives the FS
// and the Comparator; nil for the defaults. The error is for what stopped
// it: a directory that is no database (ErrNotDB), a comparator mismatch,
// an I/O error.
func Verify(dir string, opts *Options, progress func(bytes int64)) (*VerifyReport, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	o := opts.withDefaults()
	o.ReadOnly = true
	var suspect []string
	for attempt := range followAttempts {
		if attempt > 0 {
			time.Sleep(followConfirmPause)
			progress = nil // reported once
		}
		v := &verifier{opts: o, dir: dir, report: &VerifyReport{}, progress: progress}
		mark, merr := markManifest(o.FS, dir)
		err := v.run()
		if err == nil && len(v.report.Damage) == 0 {
			return v.report, nil
		}
		if errors.Is(err, ErrNotDB) || errors.Is(err, ErrComparatorMismatch) {
			return nil, err
		}
		if now, nerr := markManifest(o.FS, dir); merr == nil && nerr == nil && now != mark {
			suspect = nil // files may have gone under the run
			continue
		}
		found := make([]string, 0, len(v.report.Damage)+1)
		for _, d := range v.report.Damage {
			found = append(found, d.Error())
		}
		if err != nil {
			found = append(found, err.Error())
		}
		if slices.Equal(found, suspect) {
			if err != nil {
				return nil, err
			}
			return v.report, nil
		}
		suspect = found
	}
	return nil, errs.Errorf("simpledb: verify %s: %w", dir, ErrOutpaced)
}

type verifier struct {
	opts     Options
	dir      string
	report   *VerifyReport
	progress func(int64)
	lastSeq  uint64
	tails    tornTails
	missing  bool // a file the manifest names is missing
}

func (v *verifier) damage(err error) { v.report.Damage = append(v.report.Damage, err) }

// missingFile reports the file at path, a what the manifest names, missing.
func (v *verifier) missingFile(path, what string) {
	v.damage(errMissingFile(path, what))
	v.missing = true
}

// fileError reports what kept a file from being read (a directory where a
// file should be, a permission, an I/O error) as damage, so that the files
// after it are verified too; only a comparator mismatch, which no file
// can be read past, stops Verify.
func (v *verifier) fileError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrComparatorMismatch) {
		return err
	}
	v.damage(err)
	return nil
}

func (v *verifier) note(format string, args ...any) {
	v.report.Notes = append(v.report.Notes, fmt.Sprintf(format, args...))
}

func (v *verifier) done(bytes int64) {
	v.report.Bytes += bytes
	if v.progress != nil {
		v.progress(bytes)
	}
}

func (v *verifier) run() error {
	if err := checkExistingDir(v.opts.FS, v.dir, "to verify"); err != nil {
		if !errors.Is(err, ErrCorruption) {
			return err
		}
		v.damage(err) // the files of a database, without CURRENT
	}
	names, err := v.opts.FS.List(v.dir)
	if err != nil {
		return errs.Errorf("simpledb: verify: %w", err)
	}
	state, err := v.manifest(names)
	if err != nil {
		return err
	}
	if state == nil {
		// Without the manifest, every table and log on its own.
		for _, name := range names {
			switch kind, num := filenames.Parse(name); kind {
			case filenames.Table:
				if err := v.fileError(v.table(manifest.TableInfo{Num: num}, -1)); err != nil {
					return err
				}
			case filenames.Log:
				if err := v.fileError(v.log(num, manifest.LogInfo{}, false, logformat.Current)); err != nil {
					return err
				}
			case filenames.Blob:
				if r := v.blob(manifest.BlobFileInfo{Num: num}, false); r != nil {
					r.Close()
				}
			}
		}
		return nil
	}
	v.lastSeq = state.LastSeq
	v.levels(state)
	blobs := verifiedBlobs{}
	defer blobs.close()
	for _, num := range slices.Sorted(maps.Keys(state.BlobFiles)) {
		if r := v.blob(state.BlobFiles[num], true); r != nil {
			blobs[num] = r
		}
	}
	for level, tables := range state.Levels {
		for _, num := range slices.Sorted(maps.Keys(tables)) {
			if err := v.fileError(v.table(tables[num], level)); err != nil {
				return err
			}
			if err := v.fileError(v.blobRefs(tables[num], state, blobs)); err != nil {
				return err
			}
		}
	}
	present := map[uint64]bool{}
	var logs []uint64
	for _, name := range names {
		if kind, num := filenames.Parse(name); kind == filenames.Log && num >= state.LogNum {
			present[num] = true
			logs = append(logs, num)
		}
	}
	need := slices.Sorted(maps.Keys(state.Logs))
	if state.LogNum > 0 {
		need = append(need, state.LogNum)
	}
	for _, num := range need {
		if !present[num] {
			v.missingFile(filenames.LogPath(v.dir, num), "a log")
			present[num] = true
		}
	}
	slices.Sort(logs)
	for _, num := range logs {
		if err := v.fileError(v.log(num, state.Logs[num], state.Named(num), state.LogFormat)); err != nil {
			return err
		}
	}
	switch {
	case state.Torn != nil && len(v.report.Damage) > 0:
		// What the dropped edit recorded may be what is missing, as
		// Open says too.
		v.damage(errs.Errorf("the manifest's last edit was dropped as torn: %w", state.Torn))
	case v.missing:
		v.damage(errManifestNamesMissing(v.report.Manifest))
	}
	return nil
}

// manifest reads CURRENT and replays the manifest. It returns nil, having
// reported the damage, when either is damaged.
func (v *verifier) manifest(names []string) (*manifest.State, error) {
	if !slices.Contains(names, filenames.CurrentName) {
		return nil, nil // reported by checkReadOnlyDir
	}
	name, err := manifest.ReadCurrent(v.opts.FS, v.dir)
	if err != nil {
		v.damage(errs.Errorf("simpledb: verify: %w", err))
		return nil, nil
	}
	path := filepath.Join(v.dir, name)
	v.report.Manifest = path
	state, err := manifest.Replay(v.opts.FS, path, v.opts.Comparator.Name)
	switch {
	case errors.Is(err, ErrComparatorMismatch):
		return nil, err
	case err != nil:
		v.damage(err)
		v.report.Manifest = ""
		return nil, nil
	}
	if info, err := v.opts.FS.Stat(path); err == nil {
		v.done(info.Size())
	}
	if state.Torn != nil {
		v.note("the manifest's last edit is torn, as a crash leaves it; Open drops it: %v", state.Torn)
	}
	return state, nil
}

// levels checks that the tables of each level below L0 are disjoint.
func (v *verifier) levels(state *manifest.State) {
	cmp := v.opts.Comparator.Compare
	for level := 1; level < NumLevels; level++ {
		tables := slices.Collect(maps.Values(state.Levels[level]))
		slices.SortFunc(tables, func(a, b manifest.TableInfo) int { return cmp(a.Smallest, b.Smallest) })
		for i := 1; i < len(tables); i++ {
			if a, b := tables[i-1], tables[i]; cmp(a.Largest, b.Smallest) >= 0 {
				v.damage(errs.Errorf("%w: %s: L%d's tables %06d and %06d overlap", ErrCorruption, v.report.Manifest, level, a.Num, b.Num))
			}
		}
	}
}

// table verifies a table against what the manifest records of it (level
// -1: nothing, the manifest being unreadable).
func (v *verifier) table(info manifest.TableInfo, level int) error {
	path := filenames.TablePath(v.dir, info.Num)
	stat, err := v.opts.FS.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		v.missingFile(path, "a table")
		return nil
	}
	if err != nil {
		return errs.Errorf("simpledb: verify: %w", err)
	}
	if !stat.Mode().IsRegular() {
		return base.Corruptf(path, 0, ErrCorruption, "not a regular file (%v)", stat.Mode().Type())
	}
	v.report.Tables++
	defer v.done(stat.Size())
	if level >= 0 && uint64(stat.Size()) != info.Size {
		v.damage(base.Corruptf(path, stat.Size(), ErrCorruption, "the table ends here; the manifest recorded %d bytes", info.Size))
	}
	ropts := &sstables.ReaderOptions{FS: v.opts.FS, Comparator: v.opts.Comparator, NoMmap: true}
	if level >= 0 {
		if err := v.tableMetadata(path, info, ropts); err != nil {
			return err
		}
	}
	st, err := sstables.VerifyFile(path, ropts, v.damage)
	v.report.Entries += st.Entries
	if err != nil {
		return errs.Errorf("simpledb: verify: %w", err)
	}
	return nil
}

// blob verifies a blob file, against what the manifest records of it if
// recorded, and returns it open, nil if it is missing or damaged.
func (v *verifier) blob(info manifest.BlobFileInfo, recorded bool) *sstables.BlobReader {
	path := filenames.BlobPath(v.dir, info.Num)
	stat, err := v.opts.FS.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		v.missingFile(path, "a blob file")
		return nil
	}
	if err != nil {
		v.damage(errs.Errorf("simpledb: verify: %w", err))
		return nil
	}
	v.report.BlobFiles++
	defer v.done(stat.Size())
	ropts := &sstables.ReaderOptions{FS: v.opts.FS, NoMmap: true}
	var r *sstables.BlobReader
	if recorded {
		r, err = openBlobFile(path, info, ropts)
	} else {
		r, err = sstables.OpenBlob(path, ropts)
	}
	if err != nil {
		v.damage(err)
		return nil
	}
	if err := r.Verify(); err != nil {
		v.damage(err)
		r.Close()
		return nil
	}
	return r
}

// blobRefs checks that the values a table names in blob files are there:
// each blob file it names is one the manifest records, and each handle
// locates a value of it. It reads the table again, and each value it
// names.
func (v *verifier) blobRefs(info manifest.TableInfo, state *manifest.State, blobs verifiedBlobs) error {
	if len(info.BlobRefs) == 0 {
		return nil
	}
	path := filenames.TablePath(v.dir, info.Num)
	for _, ref := range info.BlobRefs {
		if _, ok := state.BlobFiles[ref.Num]; !ok {
			v.damage(base.Corruptf(path, 0, ErrCorruption, "the manifest records that it names blob file %d, which the manifest does not record", ref.Num))
			return nil
		}
		if blobs[ref.Num] == nil {
			return nil // the blob file's damage is reported
		}
	}
	r, err := sstables.Open(path, &sstables.ReaderOptions{FS: v.opts.FS, Comparator: v.opts.Comparator, NoMmap: true, Blobs: blobs})
	if err != nil {
		return nil // the table's damage is reported
	}
	defer r.Close()
	it := r.NewIterator(nil)
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		if _, inBlob := it.BlobHandle(); inBlob {
			it.Value()
		}
	}
	if err := it.Err(); err != nil {
		if errors.Is(err, ErrCorruption) {
			v.damage(err)
			return nil
		}
		return errs.Errorf("simpledb: verify: %w", err)
	}
	return nil
}

// verifiedBlobs are the blob files Verify opened and found whole, a
// table's sstables.BlobSource.
type verifiedBlobs map[uint64]*sstables.BlobReader

func (b verifiedBlobs) Blob(num uint64) (*sstables.BlobReader, error) {
	if r := b[num]; r != nil {
		return r, nil
	}
	return nil, errs.Errorf("%w: blob file %d is not one the manifest records", ErrCorruption, num)
}

func (verifiedBlobs) ReleaseBlob(*sstables.BlobReader) {}

func (b verifiedBlobs) close() {
	for _, r := range b {
		r.Close()
	}
}

// tableMetadata checks that a table's keys and sequence numbers lie
// within what the manifest records. A table that does not open is left to
// VerifyFile to report.
func (v *verifier) tableMetadata(path string, info manifest.TableInfo, ropts *sstables.ReaderOptions) error {
	r, err := sstables.Open(path, ropts)
	if errors.Is(err, ErrCorruption) {
		return nil
	}
	if err != nil {
		return errs.Errorf("simpledb: verify: %w", err)
	}
	defer r.Close()
	m := r.Metadata()
	if err := checkTableID(path, m.ID, info.ID); err != nil {
		v.damage(err)
	}
	if m.Records+m.RangeDeletions == 0 {
		return nil
	}
	cmp := v.opts.Comparator.Compare
	if m.MinSeq < info.SmallestSeq || m.MaxSeq > info.LargestSeq {
		v.damage(base.Corruptf(path, 0, ErrCorruption, "sequence numbers %d to %d; the manifest records %d to %d", m.MinSeq, m.MaxSeq, info.SmallestSeq, info.LargestSeq))
	}
	if m.Records > 0 && (cmp(m.MinKey, info.Smallest) < 0 || cmp(m.MaxKey, info.Largest) > 0) {
		v.damage(base.Corruptf(path, 0, ErrCorruption, "keys %q to %q; the manifest records %q to %q", m.MinKey, m.MaxKey, info.Smallest, info.Largest))
	}
	return nil
}

// log verifies log num by recovery's rules (see logWalk): damage is
// damage, a torn tail or a log a crash interrupted while creating it a
// note.
func (v *verifier) log(num uint64, info manifest.LogInfo, named bool, format uint64) error {
	path := filenames.LogPath(v.dir, num)
	stat, err := v.opts.FS.Stat(path)
	if err != nil {
		return errs.Errorf("simpledb: verify: %w", err)
	}
	if !stat.Mode().IsRegular() {
		return base.Corruptf(path, 0, ErrCorruption, "not a regular file (%v)", stat.Mode().Type())
	}
	v.report.Logs++
	defer v.done(stat.Size())
	w := &logWalk{fsys: v.opts.FS, path: path, num: num, info: info, named: named, format: format, lastSeq: &v.lastSeq}
	out, err := w.run()
	if err != nil {
		return errs.Errorf("simpledb: verify: %w", err)
	}
	for _, err := range out.damage {
		v.damage(err)
	}
	v.report.Batches += uint64(out.batches)
	if err := v.tails.next(num, out); err != nil {
		v.damage(err)
	}
	switch {
	case out.unwritten:
		v.note("%s was being created when a crash interrupted it (%d bytes); Open reads it as empty: %v", path, stat.Size(), out.tail)
	case out.tail != nil:
		v.note("%s ends in a torn tail at offset %d, as a crash or a write under way leaves it; Open drops it: %v", path, out.tail.Offset, out.tail)
	}
	return nil
}
