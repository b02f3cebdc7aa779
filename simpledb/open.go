package simpledb

import (
	"errors"
	"io"
	"io/fs"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/filenames"
	"github.com/stratadb/strata/internal/logformat"
	"github.com/stratadb/strata/internal/manifest"
	"github.com/stratadb/strata/memstore"
	"github.com/stratadb/strata/recordio"
	"github.com/stratadb/strata/sstables"
	"github.com/stratadb/strata/vfs"
)

// Open opens the database in dir, creating it (and dir) if missing and
// recovering it after a crash. A nil opts gives the defaults. A second Open
// of the same directory fails with ErrLocked until the first is closed.
// With Options.ReadOnly it creates nothing and writes nothing: the logs
// a crash left are replayed into memory, and writes return ErrReadOnly.
// With Options.Follow it takes no lock either, and follows the Open that
// writes the database (see CatchUp).
func Open(dir string, opts *Options) (*DB, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	o := opts.withDefaults()
	o.ReadOnly = o.ReadOnly || o.Follow
	if fi, err := o.FS.Stat(dir); err == nil && !fi.IsDir() {
		return nil, errs.Errorf("simpledb: open %s: %w: it is a file, not a directory", dir, ErrNotDB)
	}
	if how := o.createsNothing(); how != "" {
		if err := checkExistingDir(o.FS, dir, how); err != nil {
			return nil, err
		}
	} else if err := createDir(o.FS, dir); err != nil {
		return nil, errs.Errorf("simpledb: create %s: %w", dir, err)
	}
	var lock io.Closer = noLock{}
	var createdLock bool
	if !o.Follow {
		var err error
		if lock, createdLock, err = lockDir(&o, dir); err != nil {
			return nil, errs.Errorf("simpledb: open %s: %w", dir, err)
		}
	}
	d := &DB{
		dir:     dir,
		opts:    o,
		fold:    o.Merger.fold(),
		fs:      o.FS,
		logger:  o.Logger,
		lock:    lock,
		closing: make(chan struct{}),
	}
	d.mu.snapshots = liveSnapshots{}
	d.events = newEventQueue(o.EventListener, o.Logger)
	d.logs = logFiles{fs: o.FS, dir: dir, logger: o.Logger, syncOften: !o.NoSync, events: d.events}
	d.cond = sync.NewCond(&d.mu.Mutex)
	d.mu.memstores = flushScheduler{cond: d.cond, env: flushEnv{
		flush:  d.flushOldest,
		failed: func() bool { return d.mu.failure.err() != nil },
		closed: d.closed.Load,
		fail:   func(err error) { d.setBackgroundError(err) },
	}}
	d.mu.versions = versionSet{fs: o.FS, dir: dir, logger: o.Logger, events: d.events, cmpName: o.Comparator.Name,
		mergeName: d.opts.mergerName(), maxRecycled: o.RecycledLogs}
	d.oracle.cmp = o.Comparator.Compare
	d.commits = newCommitPipeline(commitEnv{
		certify:        d.oracle.certify,
		waitForRoom:    d.waitForRoom,
		makeRoom:       d.makeRoom,
		recordWrite:    d.oracle.record,
		rotateForFlush: d.rotateForFlush,
		fail: func(err error) error {
			d.mu.Lock()
			defer d.mu.Unlock()
			return d.setBackgroundError(err)
		},
		failure: d.backgroundError,
		merge:   d.opts.Merger.fold(),
		synced: func(num uint64, took time.Duration) {
			d.latencies.logSync.add(took)
			if took > o.DiskSlowThreshold {
				emit(d.events, d.listener().DiskSlow, DiskSlowInfo{Path: filenames.LogPath(dir, num), Duration: took})
			}
		},
	})
	d.cache = sstables.NewCache(o.MemoryBudget)
	openFiles := o.MaxOpenFiles
	if o.Follow {
		openFiles = math.MaxInt // see Options.Follow
	}
	d.tables = newTableCache(openFiles, dir, &o, d.cache)
	d.tables.events = d.events
	if err := d.recover(); err != nil {
		// A failed Open leaves the directory as it found it: a LOCK file
		// it created goes too, removed while still held.
		if createdLock {
			d.deleteFile(filepath.Join(dir, filenames.LockName))
		}
		d.releaseAll()
		d.events.close()
		return nil, err
	}
	if o.ReadOnly {
		d.removeLock = createdLock
		return d, nil
	}
	d.startBackground()
	return d, nil
}

// createsNothing returns why an Open with o creates nothing, for its
// errors ("read-only", "with ErrorIfNotExists"), or "" if it may create
// the database.
func (o *Options) createsNothing() string {
	switch {
	case o.Follow:
		return "to follow"
	case o.ReadOnly:
		return "read-only"
	case o.ErrorIfNotExists:
		return "with ErrorIfNotExists"
	}
	return ""
}

// checkExistingDir returns ErrNotDB unless dir holds a database's CURRENT,
// and ErrCorruption where it lacks one but holds a database's files, as
// recovery would, so that an Open that creates nothing (how says why)
// fails before it creates a LOCK file. (Recovery checks again, under the
// lock.)
func checkExistingDir(fsys vfs.FS, dir, how string) error {
	names, err := fsys.List(dir)
	if err != nil {
		return errs.Errorf("simpledb: open %s %s: %w: %w", dir, how, ErrNotDB, err)
	}
	if slices.Contains(names, filenames.CurrentName) {
		return nil
	}
	if err := checkNewDir(fsys, dir, names); err != nil {
		return err
	}
	return errNoDatabase(dir, how)
}

// errNoDatabase is the error of an Open that creates nothing (how says
// why) for a directory that holds no database, nor the files of one.
func errNoDatabase(dir, how string) error {
	return errs.Errorf("simpledb: open %s %s: %w: it holds none, and this Open creates none", dir, how, ErrNotDB)
}

// createDir creates dir if it is missing, and makes its entry in the parent
// durable, and the entry of every parent it created: a database whose
// directory a power loss could unlink would lose every write acknowledged
// in it.
func createDir(fsys vfs.FS, dir string) error {
	var missing []string
	for p := filepath.Clean(dir); p != filepath.Dir(p); p = filepath.Dir(p) {
		if _, err := fsys.Stat(p); err == nil {
			break
		}
		missing = append(missing, p)
	}
	if len(missing) == 0 {
		return nil
	}
	if err := fsys.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, p := range missing {
		if err := fsys.SyncDir(filepath.Dir(p)); err != nil {
			return err
		}
	}
	return nil
}

// lockDir takes the lock of the database in dir, and reports whether it
// created the LOCK file, which a read-only Open (or Verify) removes again
// when it is done. A read-only Open on a read-only filesystem gets a
// noLock instead.
func lockDir(o *Options, dir string) (lock io.Closer, created bool, err error) {
	path := filepath.Join(dir, filenames.LockName)
	_, statErr := o.FS.Stat(path)
	lock, err = o.FS.Lock(path)
	if err != nil && o.ReadOnly && errors.Is(err, syscall.EROFS) {
		return noLock{}, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return lock, errors.Is(statErr, fs.ErrNotExist), nil
}

// noLock stands for a lock not taken: by a follower, or of a directory on
// a read-only filesystem, which nothing can change.
type noLock struct{}

func (noLock) Close() error { return nil }

// recover loads the manifest's version, proves that every file it needs is
// there and whole, replays the logs it still needs, makes what they held a
// table, and starts a new log and manifest.
//
// Nothing is written, renamed or deleted until the proof is complete: the
// tables the manifest names exist, have their recorded sizes and open; the
// logs it names exist; every log replays, with damage only in a torn tail.
// Anything else is ErrCorruption, and the directory stays as it was.
func (d *DB) recover() error {
	if d.opts.Follow {
		return d.follow()
	}
	names, err := d.fs.List(d.dir)
	if err != nil {
		return errs.Errorf("simpledb: list %s: %w", d.dir, err)
	}
	state := &manifest.State{NextFileNum: 1, LogFormat: logformat.Current}
	var manifestName string
	if slices.Contains(names, filenames.CurrentName) {
		if manifestName, err = manifest.ReadCurrent(d.fs, d.dir); err != nil {
			return errs.Errorf("simpledb: %w", err)
		}
		if state, err = manifest.Replay(d.fs, filepath.Join(d.dir, manifestName), d.opts.Comparator.Name); err != nil {
			return err
		}
		if err := d.opts.checkMerger(d.dir, state.Merger); err != nil {
			return err
		}
	} else if err := checkNewDir(d.fs, d.dir, names); err != nil {
		return err
	} else if how := d.opts.createsNothing(); how != "" {
		return errNoDatabase(d.dir, how)
	}
	recovered := d.opts.newMemstore()
	if err := d.prove(state, names, recovered); err != nil {
		var missing missingFile
		switch {
		case state.Torn != nil:
			// What the dropped edit recorded was needed after all.
			return errs.Errorf("%w; the manifest's last edit was dropped as torn: %w", err, state.Torn)
		case errors.As(err, &missing):
			return errs.Errorf("%w; %w", err, errManifestNamesMissing(manifestName))
		}
		return err
	}
	if d.opts.ReadOnly {
		// The version that prove opened, and the writes it replayed, are
		// what reads see.
		d.mu.memstores.reset(&memTable{m: recovered})
		d.mu.versions.install(d.mu.versions.current())
		d.installReadState()
		return nil
	}
	return d.start(recovered)
}

// checkNewDir accepts dir, a directory without CURRENT, as a new database only if
// it holds nothing, or just what a crash during creation leaves (a
// manifest, temporary files, a log without records). One that holds only a
// database's files, among them tables or logs with records, has lost its
// CURRENT: that is corruption. Anything else is not a database and is left
// alone.
func checkNewDir(fsys vfs.FS, dir string, names []string) error {
	var data, foreign string
	for _, name := range names {
		switch kind, num := filenames.Parse(name); kind {
		case filenames.Lock, filenames.Manifest, filenames.Temp:
		case filenames.Log:
			switch logHolds(fsys, filenames.LogPath(dir, num)) {
			case logHoldsBatches:
				data = name
			case logHoldsOther:
				foreign = name
			}
		case filenames.Table, filenames.Blob:
			data = name
		default:
			foreign = name
		}
	}
	switch {
	case foreign != "":
		return errs.Errorf("%w: %s holds %s but no %s", ErrNotDB, dir, foreign, filenames.CurrentName)
	case data != "":
		return base.Corruptf(filepath.Join(dir, filenames.CurrentName), 0, ErrCorruption, "missing, yet the directory holds %s", data)
	}
	return nil
}

// What a file named as a log holds.
const (
	logHoldsNothing = iota // empty, zeros, a file header alone, or with the log's identity
	logHoldsBatches
	logHoldsOther // not a log at all
)

// logHolds tells what the file at path, named as a log, holds.
func logHolds(fsys vfs.FS, path string) int {
	if info, err := fsys.Stat(path); err == nil && info.Size() == 0 {
		return logHoldsNothing
	}
	r, err := recordio.Open(path, &recordio.ReaderOptions{FS: fsys, NoMmap: true})
	if err != nil {
		if headerUnwritten(fsys, path) {
			return logHoldsNothing
		}
		return logHoldsOther
	}
	defer r.Close()
	rec, err := r.Next()
	if _, _, identity := logformat.DecodeIdentity(rec); err == nil && identity {
		_, err = r.Next()
	}
	if err == io.EOF {
		return logHoldsNothing
	}
	return logHoldsBatches
}

// prove checks that every file state needs is there and whole: the logs
// it names exist, the tables it names open, and the logs replay with no
// damage but a torn tail. It opens the version and replays the logs into
// recovered; it writes nothing.
func (d *DB) prove(state *manifest.State, names []string, recovered *memstore.Memstore) error {
	if err := checkLogsExist(d.dir, state, names); err != nil {
		return err
	}
	d.mu.versions.recover(state, names)

	// The database holds the version, and the version each table from the
	// moment it is open, so that a failure part way closes (releaseAll)
	// those opened before it.
	v := &version{cmp: d.opts.Comparator.Compare}
	v.refs.Store(1)
	d.mu.versions.install(v)
	if err := openBlobFiles(d.tables, v, state); err != nil {
		return err
	}
	for level, tables := range state.Levels {
		for _, info := range tables {
			t, err := d.tables.openTable(info, false)
			if err != nil {
				return err
			}
			v.levels[level] = append(v.levels[level], t)
		}
	}
	v.sortLevels()

	lastSeq := state.LastSeq
	err := replayLogs(&d.opts, d.dir, logsToReplay(state, names), state, &lastSeq, recovered)
	d.commits.resetSeq(lastSeq)
	return err
}

// logsToReplay returns the numbers of the logs in names that state still
// needs, in order.
func logsToReplay(state *manifest.State, names []string) []uint64 {
	var logs []uint64
	for _, name := range names {
		if kind, num := filenames.Parse(name); kind == filenames.Log && num >= state.LogNum {
			logs = append(logs, num)
		}
	}
	slices.Sort(logs)
	return logs
}

// checkLogsExist proves that the logs the manifest still needs are in dir,
// whose files are names: the oldest one, which every edit names as it advances, and
// every later one it recorded when a rotation started it.
func checkLogsExist(dir string, state *manifest.State, names []string) error {
	present := map[uint64]bool{}
	for _, name := range names {
		if kind, num := filenames.Parse(name); kind == filenames.Log {
			present[num] = true
		}
	}
	need := slices.Sorted(maps.Keys(state.Logs))
	if state.LogNum > 0 {
		need = append([]uint64{state.LogNum}, need...)
	}
	for _, num := range need {
		if !present[num] {
			return errMissingFile(filenames.LogPath(dir, num), "a log")
		}
	}
	return nil
}

// replayLogs applies the batches of the logs nums, in order, of the
// database in dir opened with o, to m, by
// the rules of a log walk (see logWalk and tornTails). Damage at the end of
// the last log's records, which no later record vouches for, is a torn
// tail: the unacknowledged end of the last write, or a log whose creation
// a crash interrupted before it was named. It is dropped. Any other damage
// is ErrCorruption.
func replayLogs(o *Options, dir string, nums []uint64, state *manifest.State, lastSeq *uint64, m *memstore.Memstore) error {
	var tails tornTails
	var torn *logOutcome
	r := newReplayer(m, o.Comparator.Compare)
	for _, num := range nums {
		path := filenames.LogPath(dir, num)
		w := &logWalk{fsys: o.FS, path: path, num: num, info: state.Logs[num], named: state.Named(num),
			format: state.LogFormat, lastSeq: lastSeq, apply: r.apply, live: o.Follow}
		out, err := w.run()
		if err == nil {
			err = r.flush()
		}
		if err != nil {
			return errs.Errorf("simpledb: replay %s: %w", path, err)
		}
		if len(out.damage) > 0 {
			return errs.Errorf("simpledb: replay: %w", out.damage[0])
		}
		if err := tails.next(num, out); err != nil {
			return errs.Errorf("simpledb: replay: %w", err)
		}
		if out.tail != nil && torn == nil {
			torn = out
		}
	}
	if torn != nil && !o.Follow {
		// (A follower reads a log being written: its end is torn often.)
		o.Logger.Warn("simpledb: dropped the torn tail of the log", "damage", torn.tail)
	}
	return nil
}

// start makes the recovered writes a table, starts a new log and a new
// manifest naming it, and removes what the previous session left behind.
func (d *DB) start(recovered *memstore.Memstore) error {
	if recovered.Len() > 0 || len(recovered.RangeDeletions()) > 0 {
		t, blobs, err := d.writeL0(recovered, nil)
		recovered.Release()
		if err != nil {
			return err
		}
		if t != nil {
			d.mu.versions.install(d.mu.versions.current().withEdit(nil, []levelTableRef{{0, t}}, nil, blobs)).unref()
		}
	}
	// The new log exists, durably, before the new manifest names it, so
	// that the log a manifest names is always there: one that is missing
	// was lost. A crash before CURRENT switches leaves the new log empty
	// and unnamed after the old ones, and the next Open replays it as
	// such; once CURRENT switches, the logs replayed above are obsolete.
	logNum := d.mu.versions.newFileNum()
	w, f, err := d.logs.create(logNum, manifest.LogInfo{})
	if err != nil {
		return err
	}
	d.commits.installLog(w, f)
	// Every write replayed is in a table now.
	d.mu.versions.restart(d.commits.lastAssigned(nil), logNum)
	d.mu.memstores.reset(&memTable{m: d.opts.newMemstore(), logNum: logNum, logID: w.info.ID})
	if err := d.mu.versions.writeNewManifest(d.mu.memstores.logs()); err != nil {
		return err
	}
	d.installReadState()
	d.removeObsoleteFiles()
	return nil
}

// removeObsoleteFiles deletes what a previous session left behind: logs
// older than the oldest one needed, tables the version does not name, old
// manifests and temporary files. It runs while opening, before any flush
// or compaction can be writing; from then on each flush deletes the log it
// made obsolete, and each table goes with its last reference.
func (d *DB) removeObsoleteFiles() {
	names, err := d.fs.List(d.dir)
	if err != nil {
		d.logger.Error("simpledb: list for cleanup", "err", err)
		return
	}
	live := map[uint64]bool{}
	for _, level := range d.mu.versions.current().levels {
		for _, t := range level {
			live[t.Num] = true
		}
	}
	for num := range d.mu.versions.current().blobs {
		live[num] = true
	}
	for _, name := range names {
		if d.mu.versions.obsolete(name, live) {
			d.deleteFile(filepath.Join(d.dir, name))
		}
	}
}
