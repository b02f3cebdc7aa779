package simpledb

import (
	"log/slog"
	"path/filepath"
	"sync/atomic"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/internal/filenames"
	"github.com/stratadb/strata/internal/logformat"
	"github.com/stratadb/strata/internal/manifest"
	"github.com/stratadb/strata/recordio"
	"github.com/stratadb/strata/vfs"
)

// versionSet owns the database's versions and its manifest: the current
// version and the references on its tables, the file numbers, the logs'
// bookkeeping (the oldest still needed, the obsolete ones kept for reuse)
// and the manifest, in which every edit is durable before it is installed.
//
// It is guarded by DB.mu, which it shares with the memstores so that a
// flush's edit and the memstore it retires change together: every method
// needs that lock held, or the database not shared yet. It calls nothing
// of the database's: the database installs what it returns, and tells it
// the logs its memstores hold.
type versionSet struct {
	fs     vfs.FS
	dir    string
	logger *slog.Logger
	events *eventQueue // ManifestCreated
	// cmpName and mergeName are the names every manifest records;
	// maxRecycled is Options.RecycledLogs.
	cmpName, mergeName string
	maxRecycled        int

	v *version // the current version
	// flushedSeq is the last sequence number the tables hold, which a new
	// manifest records as its LastSeq: every write up to it is in a table,
	// every later one in a log alone, which replay requires to hold only
	// batches above it.
	flushedSeq  uint64
	nextFileNum uint64
	logNum      uint64             // the oldest log still needed
	recycled    []manifest.LogInfo // obsolete logs kept for reuse
	manifest    struct {
		w   *recordio.Writer
		num uint64
		// err is the manifest's failure: an edit whose write failed may be
		// on disk or not, so no edit follows it; restartManifest starts a
		// new manifest.
		err error
	}
	// l0Tables is len(current.levels[0]), read without the lock by the
	// write path.
	l0Tables atomic.Int64
}

// recover starts the set from what the manifest recorded, state, in a
// directory whose files are names. Numbers a crashed session allocated but
// never recorded may name files still here: numbering starts after every
// number in use.
func (vs *versionSet) recover(state *manifest.State, names []string) {
	vs.nextFileNum = max(state.NextFileNum, 1)
	for _, name := range names {
		if _, num := filenames.Parse(name); num >= vs.nextFileNum {
			vs.nextFileNum = num + 1
		}
	}
	vs.flushedSeq, vs.logNum = state.LastSeq, state.LogNum
}

// restart records that the tables hold every write up to flushedSeq and
// that logNum is the oldest log needed: Open's, once it has made a table
// of what it replayed and started a new log.
func (vs *versionSet) restart(flushedSeq, logNum uint64) {
	vs.flushedSeq, vs.logNum = flushedSeq, logNum
}

// current returns the current version. The caller holds DB.mu, or a
// reference on a version taken under it, to keep using it past the lock.
func (vs *versionSet) current() *version { return vs.v }

// nextFile returns the next file number newFileNum will allocate.
func (vs *versionSet) nextFile() uint64 { return vs.nextFileNum }

// l0Count returns how many tables L0 holds; without the lock.
func (vs *versionSet) l0Count() int { return int(vs.l0Tables.Load()) }

// newFileNum allocates a file number.
func (vs *versionSet) newFileNum() uint64 {
	n := vs.nextFileNum
	vs.nextFileNum++
	return n
}

// writeNewManifest starts a manifest whose first edit describes the whole
// current version and logs, the logs the memstores hold, then points
// CURRENT at it. Open calls it, and Resume after the manifest failed. Its
// LastSeq is what the tables hold (flushedSeq), not the last number
// assigned: the logs it names may hold later writes, which replay must
// find above it.
func (vs *versionSet) writeNewManifest(logs []manifest.LogInfo) error {
	num := vs.newFileNum()
	path := filenames.ManifestPath(vs.dir, num)
	w, err := recordio.Create(path, manifest.FileOptions(vs.fs))
	if err != nil {
		return errs.Errorf("simpledb: new manifest: %w", err)
	}
	snapshot := &manifest.Edit{Comparator: vs.cmpName, Merger: vs.mergeName, LogNum: vs.logNum, NextFileNum: vs.nextFileNum,
		LastSeq: vs.flushedSeq, LogFormat: logformat.Current, Logs: logs}
	for level, tables := range vs.v.levels {
		for _, t := range tables {
			snapshot.Added = append(snapshot.Added, manifest.LevelTable{Level: level, Info: t.TableInfo})
		}
	}
	for _, b := range vs.v.blobs {
		snapshot.AddedBlobs = append(snapshot.AddedBlobs, b.BlobFileInfo)
	}
	if _, err := w.WriteSync(snapshot.Encode()); err != nil {
		w.Close()
		return errs.Errorf("simpledb: new manifest: %w", err)
	}
	if err := manifest.WriteCurrent(vs.fs, vs.dir, filepath.Base(path)); err != nil {
		w.Close()
		return err
	}
	vs.manifest.w, vs.manifest.num = w, num
	emit(vs.events, vs.events.listener().ManifestCreated, FileInfo{Num: num, Path: path})
	return nil
}

// restartManifest starts a new manifest, describing the whole state (logs
// as writeNewManifest takes them), if the current one failed: an edit
// whose write failed may or may not be on disk, so nothing can be appended
// after it.
func (vs *versionSet) restartManifest(logs []manifest.LogInfo) error {
	if vs.manifest.err == nil {
		return nil
	}
	old, oldNum := vs.manifest.w, vs.manifest.num
	if err := vs.writeNewManifest(logs); err != nil {
		return err
	}
	old.Close()
	if err := vs.fs.Remove(filenames.ManifestPath(vs.dir, oldNum)); err != nil {
		vs.logger.Error("simpledb: delete obsolete file", "file", filenames.ManifestPath(vs.dir, oldNum), "err", err)
	}
	vs.manifest.err = nil
	return nil
}

// manifestFailed reports whether the manifest failed: no edit can be
// written until restartManifest.
func (vs *versionSet) manifestFailed() bool { return vs.manifest.err != nil }

// writeEdit records an edit in the manifest, durably; the caller installs
// it with apply once it returns nil. A flush's edit carries the last
// sequence number it wrote; replay keeps the highest of all, so the
// manifest's covers every table. The edit deletes the blob files that no
// table names once it applies.
func (vs *versionSet) writeEdit(edit *manifest.Edit) error {
	if vs.manifest.err != nil {
		return vs.manifest.err
	}
	edit.NextFileNum = vs.nextFileNum
	edit.DeletedBlobs = unreferencedBlobs(vs.v, edit)
	if _, err := vs.manifest.w.WriteSync(edit.Encode()); err != nil {
		vs.manifest.err = errs.Errorf("manifest: %w", err)
		return vs.manifest.err
	}
	return nil
}

// apply installs the version an edit makes, taking over the caller's
// references on the added tables and blob files, and returns the version
// it replaces, whose reference the caller drops once readers no longer get
// it. Tables and blob files the edit deletes become obsolete: their files
// go when their last reader is done. A table it deletes and adds again,
// which a trivial move does, stays live.
func (vs *versionSet) apply(edit *manifest.Edit, added []levelTableRef, addedBlobs []*blobFile) (old *version) {
	deleted := map[uint64]bool{}
	for _, del := range edit.Deleted {
		deleted[del.Info.Num] = true
	}
	for _, num := range edit.DeletedBlobs {
		vs.v.blobs[num].obsolete.Store(true)
	}
	nv := vs.v.withEdit(deleted, added, edit.DeletedBlobs, addedBlobs)
	readded := map[uint64]bool{}
	for _, a := range added {
		readded[a.t.Num] = true
	}
	for _, level := range vs.v.levels {
		for _, t := range level {
			if deleted[t.Num] && !readded[t.Num] {
				t.obsolete.Store(true)
			}
		}
	}
	if edit.LogNum != 0 {
		vs.logNum = edit.LogNum
	}
	vs.flushedSeq = max(vs.flushedSeq, edit.LastSeq)
	return vs.install(nv)
}

// install makes v, with the caller's reference, the current version, and
// returns the one it replaces (nil if none) with the set's reference.
func (vs *versionSet) install(v *version) (old *version) {
	old, vs.v = vs.v, v
	vs.l0Tables.Store(int64(len(v.levels[0])))
	return old
}

// retireLog keeps obsolete log l for a later rotation to reuse, if fewer
// than Options.RecycledLogs are kept, and reports whether it did; the
// caller deletes it otherwise. It is called once the edit that made the
// log obsolete is durable.
func (vs *versionSet) retireLog(l manifest.LogInfo) bool {
	if len(vs.recycled) >= vs.maxRecycled {
		return false
	}
	vs.recycled = append(vs.recycled, l)
	return true
}

// takeRecycledLog returns an obsolete log kept for reuse, or a zero
// manifest.LogInfo if none is: the one retired last, whose pages are the
// likeliest to be cached still.
func (vs *versionSet) takeRecycledLog() manifest.LogInfo {
	n := len(vs.recycled)
	if n == 0 {
		return manifest.LogInfo{}
	}
	l := vs.recycled[n-1]
	vs.recycled = vs.recycled[:n-1]
	return l
}

// takeRecycledLogs returns every obsolete log kept for reuse, and keeps
// none: Close deletes them.
func (vs *versionSet) takeRecycledLogs() []manifest.LogInfo {
	logs := vs.recycled
	vs.recycled = nil
	return logs
}

// obsolete reports whether a file in the directory, by name, is one a
// previous session left behind: a log older than the oldest one needed, a
// table or blob file the current version does not name, an old manifest or
// a temporary file. live are the current version's tables and blob files.
func (vs *versionSet) obsolete(name string, live map[uint64]bool) bool {
	kind, num := filenames.Parse(name)
	return kind == filenames.Log && num < vs.logNum || (kind == filenames.Table || kind == filenames.Blob) && !live[num] && num < vs.nextFileNum ||
		kind == filenames.Manifest && num != vs.manifest.num || kind == filenames.Temp
}

// close closes the manifest and drops the set's reference on the current
// version.
func (vs *versionSet) close() error {
	var err error
	if vs.manifest.w != nil {
		err = vs.manifest.w.Close()
	}
	if vs.v != nil {
		vs.v.unref()
	}
	return err
}
