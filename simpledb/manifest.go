package simpledb

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/stratadb/strata/internal/filenames"
	"github.com/stratadb/strata/internal/logformat"
	"github.com/stratadb/strata/internal/manifest"
	"github.com/stratadb/strata/recordio"
)

// newFileNum allocates a file number. Callers hold d.mu or run before the
// database is shared.
func (d *DB) newFileNum() uint64 {
	n := d.nextFileNum
	d.nextFileNum++
	return n
}

// writeNewManifest starts a manifest whose first edit describes the whole
// current version and the logs it needs, then points CURRENT at it. Open
// calls it, and Resume after the manifest failed. Its LastSeq is what the
// tables hold (d.flushedSeq), not the last number assigned: the logs it
// names may hold later writes, which replay must find above it. The
// caller holds d.mu or has not shared the database yet.
func (d *DB) writeNewManifest() error {
	num := d.newFileNum()
	path := filenames.ManifestPath(d.dir, num)
	w, err := recordio.Create(path, manifest.FileOptions(d.fs))
	if err != nil {
		return fmt.Errorf("simpledb: new manifest: %w", err)
	}
	snapshot := &manifest.Edit{Comparator: d.opts.Comparator.Name, Merger: d.mergerName(), LogNum: d.logNum, NextFileNum: d.nextFileNum, LastSeq: d.flushedSeq,
		LogFormat: logformat.Current}
	for _, mt := range append(slices.Clone(d.imm), d.mem) {
		snapshot.Logs = append(snapshot.Logs, manifest.LogInfo{Num: mt.logNum, Size: mt.logSize, ID: mt.logID})
	}
	for level, tables := range d.current.levels {
		for _, t := range tables {
			snapshot.Added = append(snapshot.Added, manifest.LevelTable{Level: level, Info: t.TableInfo})
		}
	}
	if _, err := w.WriteSync(snapshot.Encode()); err != nil {
		w.Close()
		return fmt.Errorf("simpledb: new manifest: %w", err)
	}
	if err := d.setCurrent(filepath.Base(path)); err != nil {
		w.Close()
		return err
	}
	d.manifest, d.manifestNum = w, num
	return nil
}

// setCurrent atomically points the database's CURRENT at a manifest: see
// writeCurrent.
func (d *DB) setCurrent(name string) error {
	return manifest.WriteCurrent(d.fs, d.dir, name)
}

// writeEdit records an edit in the manifest, durably. The caller holds
// d.mu and installs the edit with applyEdit once it returns nil. A flush's
// edit carries the last sequence number it wrote; replay keeps the highest
// of all, so the manifest's covers every table.
func (d *DB) writeEdit(edit *manifest.Edit) error {
	if d.manifestErr != nil {
		return d.manifestErr
	}
	edit.NextFileNum = d.nextFileNum
	if _, err := d.manifest.WriteSync(edit.Encode()); err != nil {
		d.manifestErr = fmt.Errorf("manifest: %w", err)
		return d.manifestErr
	}
	return nil
}

// applyEdit installs the version an edit makes and publishes it to readers.
// The caller holds d.mu; the new version takes over its references on the
// added tables. Tables the edit deletes become obsolete: their files go
// when their last reader is done. A table it deletes and adds again, which
// a trivial move does, stays live.
func (d *DB) applyEdit(edit *manifest.Edit, added []levelTableRef) {
	deleted := map[uint64]bool{}
	for _, del := range edit.Deleted {
		deleted[del.Info.Num] = true
	}
	nv := d.current.withEdit(deleted, added)
	readded := map[uint64]bool{}
	for _, a := range added {
		readded[a.t.Num] = true
	}
	for _, level := range d.current.levels {
		for _, t := range level {
			if deleted[t.Num] && !readded[t.Num] {
				t.obsolete.Store(true)
			}
		}
	}
	if edit.LogNum != 0 {
		d.logNum = edit.LogNum
	}
	old := d.current
	d.current = nv
	d.l0Tables.Store(int64(len(nv.levels[0])))
	d.installReadState()
	old.unref(d)
}
