package simpledb

import (
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"time"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/internal/logformat"
	"github.com/stratadb/strata/internal/manifest"
	"github.com/stratadb/strata/memstore"
	"github.com/stratadb/strata/vfs"
)

// A follower (Options.Follow) reads the files of a database that another
// Open may be writing, without its lock, as one moment of the writer's: it
// marks the manifest, reads the version and the logs, and starts over if a
// log it read was recycled under the read, or the manifest moved in a way
// that voids the logs it read. An error counts only if the manifest stood
// still and the next capture finds it again. docs/7-followers.md has the
// reasoning and the measurements.

// followAttempts bounds the captures of one catch-up.
const followAttempts = 50

// followConfirmPause is how long a catch-up waits before it captures again
// to confirm what may be damage.
const followConfirmPause = 20 * time.Millisecond

// errManifestMoved: the manifest changed while a capture read what it
// names; the capture is void.
var errManifestMoved = errors.New("simpledb: the manifest changed during the catch-up")

// errLogRecycled: the writer reused a log's file for a newer log while a
// capture read it (see logWalk.live). The manifest has moved then: the
// log's flush was recorded before its reuse.
var errLogRecycled = errors.New("simpledb: the log was recycled under the read")

// CatchUp brings a follower's view up to date: reads that start after it
// returns see every write the database's files held when it began. It is
// safe to call concurrently with reads; iterators and snapshots taken
// before it keep their view. On a database not opened with Options.Follow
// it does nothing and returns nil: no other Open can write to it.
//
// It fails with ErrCorruption where the files are damaged, with ErrOutpaced
// if the writer changed its manifest under each of its attempts, and with
// ErrClosed after Close, which waits for a CatchUp under way. A failed
// CatchUp leaves the view as it was.
func (d *DB) CatchUp() error {
	if err := d.checkOpen(); err != nil {
		return err
	}
	if !d.opts.Follow {
		return nil
	}
	d.followMu.Lock()
	defer d.followMu.Unlock()
	start, from := time.Now(), d.commits.visible()
	if err := d.follow(); err != nil {
		return err
	}
	emit(d.events, d.listener().CaughtUp, CatchUpInfo{FromSeq: from, ToSeq: d.commits.visible(), Duration: time.Since(start)})
	return nil
}

// follow captures the database as its files hold it now and makes that
// what reads see.
func (d *DB) follow() error {
	var suspect string // the error of the last capture, with the manifest unchanged
	for range followAttempts {
		if d.closed.Load() {
			return ErrClosed
		}
		c, err := d.capture()
		switch {
		case err == nil:
			return d.installView(c)
		case errors.Is(err, errManifestMoved):
			suspect = ""
		case err.Error() == suspect:
			return err
		default:
			suspect = err.Error()
			time.Sleep(followConfirmPause)
		}
	}
	return errs.Errorf("simpledb: catch up with %s: %w", d.dir, ErrOutpaced)
}

// view is what a capture found: the version and the logs' writes.
type view struct {
	v       *version
	mem     *memstore.Memstore
	lastSeq uint64
}

// manifestMark is where the manifest stood: the file CURRENT names and its
// size.
type manifestMark struct {
	name string
	size int64
}

func markManifest(fsys vfs.FS, dir string) (manifestMark, error) {
	name, err := manifest.ReadCurrent(fsys, dir)
	if err != nil {
		return manifestMark{}, errs.Errorf("simpledb: %w", err)
	}
	info, err := fsys.Stat(filepath.Join(dir, name))
	if err != nil {
		return manifestMark{}, errs.Errorf("simpledb: %w", err)
	}
	return manifestMark{name, info.Size()}, nil
}

// capture reads one view of the database; see the top of this file.
func (d *DB) capture() (*view, error) {
	mark, err := markManifest(d.fs, d.dir)
	if err != nil {
		return nil, err
	}
	state, err := manifest.Replay(d.fs, filepath.Join(d.dir, mark.name), d.opts.Comparator.Name)
	if err == nil {
		err = d.opts.checkMerger(d.dir, state.Merger)
	}
	if err != nil {
		return nil, d.unlessMoved(mark, err)
	}
	names, err := d.fs.List(d.dir)
	if err != nil {
		return nil, errs.Errorf("simpledb: list %s: %w", d.dir, err)
	}
	v, err := d.followVersion(state)
	if err != nil {
		return nil, d.unlessMoved(mark, err)
	}
	c := &view{v: v, mem: d.opts.newMemstore(), lastSeq: state.LastSeq}
	logs := logsToReplay(state, names)
	err = checkLogsExist(d.dir, state, names)
	if err == nil {
		err = replayLogs(&d.opts, d.dir, logs, state, &c.lastSeq, c.mem)
	}
	if err == nil {
		err = d.checkLogsStill(mark, state, logs)
	} else {
		err = d.unlessMoved(mark, err)
	}
	if err != nil {
		v.unref()
		return nil, err
	}
	return c, nil
}

// unlessMoved returns err, or errManifestMoved (wrapping it) if the
// manifest changed since mark: then a file may have gone under the read.
func (d *DB) unlessMoved(mark manifestMark, err error) error {
	if now, merr := markManifest(d.fs, d.dir); merr != nil || now != mark {
		return errs.Errorf("%w: %w", errManifestMoved, err)
	}
	return err
}

// checkLogsStill returns errManifestMoved if the manifest, since mark, was
// replaced, or named a log that the listing missed among the logs read
// (their numbers, oldest first): a rotation the listing raced. A flush
// that made logs read obsolete leaves them valid, since their walks
// confirmed that no reuse wrote over them (logWalk.live); the tables of
// the mark hold the rest. Logs of a format before their identity records
// cannot tell a reuse, so there any edit that moves a log voids the read.
func (d *DB) checkLogsStill(mark manifestMark, state *manifest.State, read []uint64) error {
	now, err := markManifest(d.fs, d.dir)
	switch {
	case err != nil || now.name != mark.name:
		return errManifestMoved
	case now.size == mark.size:
		return nil
	}
	later, err := manifest.Replay(d.fs, filepath.Join(d.dir, now.name), d.opts.Comparator.Name)
	if err != nil {
		return errManifestMoved
	}
	named := slices.Sorted(maps.Keys(later.Logs))
	if state.LogFormat < logformat.Identity {
		if later.LogNum != state.LogNum || !slices.Equal(named, slices.Sorted(maps.Keys(state.Logs))) {
			return errManifestMoved
		}
		return nil
	}
	if later.LogNum > 0 {
		named = append(named, later.LogNum)
	}
	for _, num := range named {
		if len(read) > 0 && num < read[len(read)-1] && !slices.Contains(read, num) {
			return errManifestMoved
		}
	}
	return nil
}

// followVersion returns a version of the tables and blob files state
// names, each with a reference: the current view's where it holds the same
// file, otherwise opened now. It holds a reference on the current view's version while it
// takes references on its tables, taken under d.mu before Close can
// release it.
func (d *DB) followVersion(state *manifest.State) (*version, error) {
	have := map[uint64]*table{}
	haveBlobs := map[uint64]*blobFile{}
	d.mu.Lock()
	cur := d.mu.versions.current()
	if d.closed.Load() {
		cur = nil // Close releases it
	}
	if cur != nil {
		cur.ref()
	}
	d.mu.Unlock()
	if cur != nil {
		defer cur.unref()
		for _, level := range cur.levels {
			for _, t := range level {
				have[t.Num] = t
			}
		}
		maps.Copy(haveBlobs, cur.blobs)
	}
	v := &version{cmp: d.opts.Comparator.Compare}
	v.refs.Store(1)
	for num, info := range state.BlobFiles {
		b := haveBlobs[num]
		if b != nil && b.BlobFileInfo == info {
			b.ref()
		} else {
			var err error
			if b, err = d.tables.openBlob(info); err != nil {
				v.unref()
				return nil, err
			}
		}
		if v.blobs == nil {
			v.blobs = map[uint64]*blobFile{}
		}
		v.blobs[num] = b
	}
	for level, tables := range state.Levels {
		for _, info := range tables {
			t := have[info.Num]
			if t != nil && t.ID == info.ID && t.Size == info.Size {
				t.ref()
			} else {
				var err error
				if t, err = d.tables.openTable(info, false); err != nil {
					v.unref()
					return nil, err
				}
			}
			v.levels[level] = append(v.levels[level], t)
		}
	}
	v.sortLevels()
	return v, nil
}

// installView makes c what reads see; the view it replaces stays with the
// iterators and snapshots that hold it. After Close it drops c.
func (d *DB) installView(c *view) error {
	d.mu.Lock()
	if d.closed.Load() {
		d.mu.Unlock()
		c.v.unref()
		c.mem.Release()
		return ErrClosed
	}
	old := d.mu.versions.install(c.v)
	d.mu.memstores.reset(&memTable{m: c.mem})
	d.commits.resetSeq(c.lastSeq)
	d.installReadState()
	d.mu.Unlock()
	if old != nil {
		old.unref()
	}
	return nil
}
