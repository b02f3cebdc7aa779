package inspect

import (
	"io"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/manifest"
	"github.com/stratadb/strata/recordio"
)

// ManifestEdit is one edit of a manifest: a change to the set of tables,
// blob files and logs, and the counters recovery needs. Zero fields are unchanged.
type ManifestEdit struct {
	// Offset is where the edit's record starts in the manifest.
	Offset int64
	// Comparator names the key order; the first edit of a manifest
	// records it.
	Comparator string
	// Merger names the merge operator, where the edit records it.
	Merger string
	// LogNumber is the oldest log still needed, NextFileNumber the next
	// unused file number, LastSeq the highest sequence number in any
	// table, LogFormat the encoding of the logs' batches.
	LogNumber, NextFileNumber, LastSeq, LogFormat uint64
	// Deleted lists the tables removed (only Level and Number set), Added
	// those added, with the values each keeps in blob files.
	Deleted, Added []TableInfo
	// AddedBlobs lists the blob files added (LiveValues and LiveBytes
	// zero), DeletedBlobs the numbers of those removed.
	AddedBlobs   []BlobFileInfo
	DeletedBlobs []uint64
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
		return errs.Errorf("inspect: manifest: %w", err)
	}
	defer r.Close()
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return errs.Errorf("inspect: manifest: %w", err)
		}
		e, err := manifest.DecodeEdit(rec)
		if err != nil {
			return base.Corruptf(path, r.Offset(), ErrCorruption, "%v", err)
		}
		me := ManifestEdit{Offset: r.Offset(), Comparator: e.Comparator, Merger: e.Merger, LogNumber: e.LogNum,
			NextFileNumber: e.NextFileNum, LastSeq: e.LastSeq, LogFormat: e.LogFormat}
		for _, d := range e.Deleted {
			me.Deleted = append(me.Deleted, TableInfo{Level: d.Level, Number: d.Info.Num})
		}
		for _, a := range e.Added {
			me.Added = append(me.Added, exportTable(a.Info, a.Level))
		}
		for _, b := range e.AddedBlobs {
			me.AddedBlobs = append(me.AddedBlobs, exportBlobFile(b))
		}
		me.DeletedBlobs = e.DeletedBlobs
		for _, l := range e.Logs {
			me.Logs = append(me.Logs, LogInfo{Number: l.Num, Size: l.Size, ID: l.ID})
		}
		if err := fn(me); err != nil {
			return err
		}
	}
}
