package simpledb

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/filenames"
	"github.com/stratadb/strata/internal/logformat"
	"github.com/stratadb/strata/internal/manifest"
	"github.com/stratadb/strata/memstore"
	"github.com/stratadb/strata/recordio"
	"github.com/stratadb/strata/sstables"
	"github.com/stratadb/strata/vfs"
)

// DB is an embedded key-value database. All its methods are safe for
// concurrent use.
//
// Its locks are taken in this order, a goroutine holding one taking only
// later ones: closeMu, walMu, pubMu, mu, syncMu. commitMu and rsMu are
// innermost: nothing is locked under them. (Snapshot.mu comes before mu.)
// The write path holds walMu while it appends and while a writer stalls,
// so nothing a reader or Stats needs is guarded by it.
type DB struct {
	dir    string
	opts   Options
	fs     vfs.FS
	logger *slog.Logger
	lock   io.Closer
	cache  *sstables.Cache
	// removeLock: a read-only Open created the LOCK file, and Close
	// removes it, so that the directory is left as it was found.
	removeLock bool

	tables *tableCache // the open tables, at most opts.MaxOpenFiles: see tablecache.go

	// mu guards the fields below it. It is never held across a log write or
	// a table write, only across a manifest write (an edit must be logged
	// and installed in order) and the file deletions that installing it
	// may cause.
	mu          sync.Mutex
	cond        *sync.Cond // broadcast whenever flush, compaction or error state changes
	mem         *memTable
	imm         []*memTable // full memstores awaiting flush, oldest first
	current     *version
	nextFileNum uint64
	logNum      uint64             // the oldest log still needed
	recycled    []manifest.LogInfo // obsolete logs kept for reuse: see log.go
	manifest    *recordio.Writer
	manifestNum uint64
	// manifestErr is the manifest's failure: an edit whose write failed
	// may be on disk or not, so no edit follows it; Resume starts a new
	// manifest.
	manifestErr error
	snapshots   map[uint64]int    // sequence number -> live snapshots at it
	compacting  bool              // a compaction runs: at most one at a time
	compactPtr  [NumLevels][]byte // where the next compaction of each level starts
	bgErr       error
	// bgRecoverable: the filesystem caused bgErr, and Resume may clear
	// it; autoResuming: a goroutine retries Resume (out of space). See
	// resume.go.
	bgRecoverable bool
	autoResuming  bool
	// compactPause is the error of a compaction that ran out of space;
	// compactions wait until compactRetry, compactBackoff after it.
	compactPause   error
	compactRetry   time.Time
	compactBackoff time.Duration
	failed         atomic.Bool  // bgErr is set; read without mu on hot paths
	l0Tables       atomic.Int64 // len(current.levels[0]), for the write path
	stats          statCounters
	// closed is set (under mu, so waiters on cond see it) by Close; read
	// anywhere. closing is closed then too, for goroutines that sleep.
	closed  atomic.Bool
	closing chan struct{}
	// resumeMu serializes Resume calls.
	resumeMu sync.Mutex

	rsMu sync.RWMutex
	rs   *readState

	// The commit pipeline: see commit.go.
	closeMu    sync.RWMutex // held shared by writes, exclusively by Close
	commitMu   sync.Mutex   // guards queue and leading
	queue      []*commitWaiter
	leading    bool
	visibleSeq atomic.Uint64 // every write up to it is applied and readable

	// walMu guards the log writer and what the append stage owns. mem
	// changes only under both walMu and mu, so either suffices to read it.
	walMu     sync.Mutex
	wal       *logWriter
	walFile   vfs.File // the log's file, which the sync stage fsyncs
	plainLogs bool     // the filesystem cannot map logs: see openLogFile
	// walBase maps the logs' logical length, in which the sync stage
	// measures durability, to offsets in the current log: offset =
	// logical length - walBase.
	walBase    int64
	lastSeq    uint64 // the last sequence number assigned
	writeStats writeCounters

	// pubMu guards the groups appended but not yet published, in order,
	// and pubErr: once a group that reached the log fails, every later one
	// fails with it.
	pubMu   sync.Mutex
	pending []*commitGroup
	pubErr  error

	// syncMu guards the sync stage and logErr.
	syncMu   sync.Mutex
	syncCond *sync.Cond
	syncedTo atomic.Uint64 // the logs are durable up to this logical length; written under syncMu, read anywhere
	syncing  bool          // an fsync is running
	// logErr is the log's first failure, of an append or an fsync (set by
	// failLog): nothing is appended or synced after it,
	// and every write past syncedTo fails with it.
	logErr       error
	logSyncs     atomic.Int64
	logSyncNanos atomic.Int64
	// gather holds the next fsync back for the synced writers the last
	// one released: see gather.go.
	gather syncGather

	bgWG sync.WaitGroup
}

// Open opens the database in dir, creating it (and dir) if missing and
// recovering it after a crash. A nil opts gives the defaults. A second Open
// of the same directory fails with ErrLocked until the first is closed.
// With Options.ReadOnly it creates nothing and writes nothing: see
// readonly.go.
func Open(dir string, opts *Options) (*DB, error) {
	o := opts.withDefaults()
	if o.ReadOnly || o.ErrorIfNotExists {
		if err := checkReadOnlyDir(o.FS, dir); err != nil {
			return nil, err
		}
	} else if err := createDir(o.FS, dir); err != nil {
		return nil, fmt.Errorf("simpledb: create %s: %w", dir, err)
	}
	lock, createdLock, err := lockDir(&o, dir)
	if err != nil {
		return nil, fmt.Errorf("simpledb: open %s: %w", dir, err)
	}
	d := &DB{
		dir:       dir,
		opts:      o,
		fs:        o.FS,
		logger:    o.Logger,
		lock:      lock,
		snapshots: map[uint64]int{},
		closing:   make(chan struct{}),
	}
	d.cond = sync.NewCond(&d.mu)
	d.syncCond = sync.NewCond(&d.syncMu)
	d.gather.init(d.syncCond)
	if o.BlockCacheSize > 0 {
		d.cache = sstables.NewCache(o.BlockCacheSize)
	}
	d.tables = newTableCache(o.MaxOpenFiles, d.openReader)
	if err := d.recover(); err != nil {
		// A failed Open leaves the directory as it found it: a LOCK file
		// it created goes too, removed while still held.
		if createdLock {
			d.deleteFile(filepath.Join(dir, filenames.LockName))
		}
		d.releaseAll()
		return nil, err
	}
	if o.ReadOnly {
		d.removeLock = createdLock
		return d, nil
	}
	d.startBackground()
	return d, nil
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

// recover loads the manifest's version, proves that every file it needs is
// there and whole, replays the logs it still needs, makes what they held a
// table, and starts a new log and manifest.
//
// Nothing is written, renamed or deleted until the proof is complete: the
// tables the manifest names exist, have their recorded sizes and open; the
// logs it names exist; every log replays, with damage only in a torn tail.
// Anything else is ErrCorruption, and the directory stays as it was.
func (d *DB) recover() error {
	names, err := d.fs.List(d.dir)
	if err != nil {
		return fmt.Errorf("simpledb: list %s: %w", d.dir, err)
	}
	state := &manifest.State{NextFileNum: 1, LogFormat: logformat.Current}
	if slices.Contains(names, filenames.CurrentName) {
		name, err := manifest.ReadCurrent(d.fs, d.dir)
		if err != nil {
			return fmt.Errorf("simpledb: %w", err)
		}
		if state, err = manifest.Replay(d.fs, filepath.Join(d.dir, name), d.opts.Comparator.Name); err != nil {
			return err
		}
	} else if err := d.checkNewDir(names); err != nil {
		return err
	} else if d.opts.ReadOnly || d.opts.ErrorIfNotExists {
		return errNoDatabase(d.dir)
	}
	recovered := d.newMemstore()
	if err := d.prove(state, names, recovered); err != nil {
		if state.Torn != nil {
			// What the dropped edit recorded was needed after all.
			return fmt.Errorf("%w; the manifest's last edit was dropped as torn: %w", err, state.Torn)
		}
		return err
	}
	if d.opts.ReadOnly {
		d.serveReadOnly(recovered)
		return nil
	}
	return d.start(recovered)
}

// prove checks that every file state needs is there and whole: the logs
// it names exist, the tables it names open, and the logs replay with no
// damage but a torn tail. It opens the version and replays the logs into
// recovered; it writes nothing.
func (d *DB) prove(state *manifest.State, names []string, recovered *memstore.Memstore) error {
	if err := d.checkLogsExist(state, names); err != nil {
		return err
	}
	// Numbers a crashed session allocated but never recorded may name files
	// still here: start after every number in use.
	d.nextFileNum = max(state.NextFileNum, 1)
	for _, name := range names {
		if _, num := filenames.Parse(name); num >= d.nextFileNum {
			d.nextFileNum = num + 1
		}
	}
	d.lastSeq = state.LastSeq

	// The database holds the version, and the version each table from the
	// moment it is open, so that a failure part way closes (releaseAll)
	// those opened before it.
	v := &version{cmp: d.opts.Comparator.Compare}
	v.refs.Store(1)
	d.current = v
	for level, tables := range state.Levels {
		for _, info := range tables {
			t, err := d.openTable(info)
			if err != nil {
				return err
			}
			v.levels[level] = append(v.levels[level], t)
		}
	}
	v.sortLevels()

	var logs []uint64
	for _, name := range names {
		if kind, num := filenames.Parse(name); kind == filenames.Log && num >= state.LogNum {
			logs = append(logs, num)
		}
	}
	slices.Sort(logs)
	return d.replayLogs(logs, state, recovered)
}

// start makes the recovered writes a table, starts a new log and a new
// manifest naming it, and removes what the previous session left behind.
func (d *DB) start(recovered *memstore.Memstore) error {
	if recovered.Len() > 0 || len(recovered.RangeDeletions()) > 0 {
		t, err := d.writeL0(recovered, nil)
		if err != nil {
			return err
		}
		if t != nil {
			nv := d.current.withEdit(nil, []levelTableRef{{0, t}})
			d.current.unref(d)
			d.current = nv
		}
	}
	// The new log exists, durably, before the new manifest names it, so
	// that the log a manifest names is always there: one that is missing
	// was lost. A crash before CURRENT switches leaves the new log empty
	// and unnamed after the old ones, and the next Open replays it as
	// such; once CURRENT switches, the logs replayed above are obsolete.
	logNum := d.newFileNum()
	w, f, err := d.createLog(logNum, manifest.LogInfo{})
	if err != nil {
		return err
	}
	d.wal, d.walFile, d.walBase = w, f, -w.Size()
	d.logNum = logNum
	d.mem = &memTable{m: d.newMemstore(), logNum: logNum, logID: w.info.ID}
	if err := d.writeNewManifest(); err != nil {
		return err
	}
	d.visibleSeq.Store(d.lastSeq)
	d.l0Tables.Store(int64(len(d.current.levels[0])))
	d.installReadState()
	d.removeObsoleteFiles()
	return nil
}

// checkLogsExist proves that the logs the manifest still needs are in the
// directory: the oldest one, which every edit names as it advances, and
// every later one it recorded when a rotation started it.
func (d *DB) checkLogsExist(state *manifest.State, names []string) error {
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
			return base.Corruptf(filenames.LogPath(d.dir, num), 0, ErrCorruption, "a log the manifest names is missing")
		}
	}
	return nil
}

// checkNewDir accepts a directory without CURRENT as a new database only if
// it holds nothing, or just what a crash during creation leaves (a
// manifest, temporary files, a log without records). One that holds only a
// database's files, among them tables or logs with records, has lost its
// CURRENT: that is corruption. Anything else is not a database and is left
// alone.
func (d *DB) checkNewDir(names []string) error {
	var data, foreign string
	for _, name := range names {
		switch kind, num := filenames.Parse(name); kind {
		case filenames.Lock, filenames.Manifest, filenames.Temp:
		case filenames.Log:
			switch d.logHolds(num) {
			case logHoldsBatches:
				data = name
			case logHoldsOther:
				foreign = name
			}
		case filenames.Table:
			data = name
		default:
			foreign = name
		}
	}
	switch {
	case foreign != "":
		return fmt.Errorf("%w: %s holds %s but no %s", ErrNotDB, d.dir, foreign, filenames.CurrentName)
	case data != "":
		return base.Corruptf(filepath.Join(d.dir, filenames.CurrentName), 0, ErrCorruption, "missing, yet the directory holds %s", data)
	}
	return nil
}

// What a file named as a log holds.
const (
	logHoldsNothing = iota // empty, zeros, a file header alone, or with the log's identity
	logHoldsBatches
	logHoldsOther // not a log at all
)

// logHolds tells what the file named as log num holds.
func (d *DB) logHolds(num uint64) int {
	path := filenames.LogPath(d.dir, num)
	if info, err := d.fs.Stat(path); err == nil && info.Size() == 0 {
		return logHoldsNothing
	}
	r, err := recordio.Open(path, &recordio.ReaderOptions{FS: d.fs, NoMmap: true})
	if err != nil {
		if headerUnwritten(d.fs, path) {
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

// replayLogs applies the batches of the logs nums, in order, to m, by
// the rules of a log walk (see logWalk and tornTails). Damage at the end of
// the last log's records, which no later record vouches for, is a torn
// tail: the unacknowledged end of the last write, or a log whose creation
// a crash interrupted before it was named. It is dropped. Any other damage
// is ErrCorruption.
func (d *DB) replayLogs(nums []uint64, state *manifest.State, m *memstore.Memstore) error {
	var tails tornTails
	var torn *logOutcome
	for _, num := range nums {
		w := &logWalk{fsys: d.fs, path: filenames.LogPath(d.dir, num), num: num, info: state.Logs[num], named: state.Named(num),
			format: state.LogFormat, lastSeq: &d.lastSeq, apply: m.Apply}
		out, err := w.run()
		if err != nil {
			return err
		}
		if len(out.damage) > 0 {
			return fmt.Errorf("simpledb: replay: %w", out.damage[0])
		}
		if err := tails.next(num, out); err != nil {
			return fmt.Errorf("simpledb: replay: %w", err)
		}
		if out.tail != nil && torn == nil {
			torn = out
		}
	}
	if torn != nil {
		d.logger.Warn("simpledb: dropped the torn tail of the log", "damage", torn.tail)
	}
	return nil
}

// openTable opens a table the manifest names, into the table cache. The
// table comes with one reference, the caller's.
func (d *DB) openTable(info manifest.TableInfo) (*table, error) {
	d.tables.reserve()
	r, err := d.openReader(info)
	if err != nil {
		d.tables.release()
		return nil, err
	}
	t := &table{TableInfo: info, tc: d.tables, rangeDels: r.RangeDeletions()}
	t.refs.Store(1)
	d.tables.add(t, r)
	return t, nil
}

// openReader opens a table's file and checks it against what the manifest
// records: at Open, after the table is written, and whenever the table
// cache reopens it. A missing or damaged file is ErrCorruption naming it.
func (d *DB) openReader(info manifest.TableInfo) (*sstables.Reader, error) {
	path := filenames.TablePath(d.dir, info.Num)
	o := d.tableReaderOptions(!d.opts.MmapTables, false)
	o.CacheID = info.Num
	r, err := sstables.Open(path, o)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, base.Corruptf(path, 0, ErrCorruption, "a table the manifest names is missing")
	}
	if errors.Is(err, ErrComparatorMismatch) {
		return nil, fmt.Errorf("simpledb: open table %d: %w", info.Num, err)
	}
	// A table cut or grown is damaged even if what is left reads as one.
	// (An open Reader knows its file's size; a damaged one may be cut.)
	size := int64(-1)
	if r != nil {
		size = int64(r.Metadata().FileSize)
	} else if fi, serr := d.fs.Stat(path); serr == nil {
		size = fi.Size()
	}
	if size >= 0 && uint64(size) != info.Size {
		if r != nil {
			r.Close()
		}
		return nil, base.Corruptf(path, size, ErrCorruption, "the table ends here; the manifest recorded %d bytes", info.Size)
	}
	if err != nil {
		return nil, fmt.Errorf("simpledb: open table %d: %w", info.Num, err)
	}
	if err := checkTableID(path, r.Metadata().ID, info.ID); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// checkTableFile checks that the table file at path is the table the
// manifest records as info: its size and identity.
func (d *DB) checkTableFile(path string, info manifest.TableInfo) error {
	m, err := sstables.ReadMetadata(path, &sstables.ReaderOptions{FS: d.fs, Comparator: d.opts.Comparator})
	if err != nil {
		return err
	}
	if m.FileSize != info.Size {
		return base.Corruptf(path, int64(m.FileSize), ErrCorruption, "the table ends here; the manifest recorded %d bytes", info.Size)
	}
	return checkTableID(path, m.ID, info.ID)
}

// checkTableID refuses a table file whose identity is not the one the
// manifest records: a table of another database, or of an earlier life
// of this one, that has the right name and size. A table the manifest
// records without one (written before identities) must have none.
func checkTableID(path string, got, want uint64) error {
	if got != want {
		return base.Corruptf(path, 0, ErrCorruption,
			"the table's identity is %016x, the manifest recorded %016x: a table of another database, or of an earlier life of this one", got, want)
	}
	return nil
}

// newFileNum allocates a file number. Callers hold d.mu or run before the
// database is shared.
func (d *DB) newFileNum() uint64 {
	n := d.nextFileNum
	d.nextFileNum++
	return n
}

// writeNewManifest starts a manifest whose first edit describes the whole
// current version and the logs it needs, then points CURRENT at it. Open
// calls it, and Resume after the manifest failed. The caller holds d.mu or
// has not shared the database yet.
func (d *DB) writeNewManifest() error {
	num := d.newFileNum()
	path := filenames.ManifestPath(d.dir, num)
	w, err := recordio.Create(path, manifest.FileOptions(d.fs))
	if err != nil {
		return fmt.Errorf("simpledb: new manifest: %w", err)
	}
	snapshot := &manifest.Edit{Comparator: d.opts.Comparator.Name, LogNum: d.logNum, NextFileNum: d.nextFileNum, LastSeq: d.lastSeq,
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

// installReadState publishes the current memstores and version to readers.
// The caller holds d.mu (or has not shared the database yet).
func (d *DB) installReadState() {
	rs := &readState{mem: d.mem, imm: slices.Clone(d.imm), v: d.current}
	rs.refs.Store(1)
	d.current.ref()
	d.swapReadState(rs)
}

// swapReadState makes rs the state reads acquire (nil: none, after Close)
// and drops the database's reference on the one it replaces.
func (d *DB) swapReadState(rs *readState) {
	d.rsMu.Lock()
	old := d.rs
	d.rs = rs
	d.rsMu.Unlock()
	if old != nil {
		old.unref(d)
	}
}

// acquire returns the read state with a reference the caller must drop,
// or ErrClosed once Close has released it: its tables may be closed.
func (d *DB) acquire() (*readState, error) {
	d.rsMu.RLock()
	defer d.rsMu.RUnlock()
	if d.rs == nil {
		return nil, ErrClosed
	}
	d.rs.refs.Add(1)
	return d.rs, nil
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
	for _, level := range d.current.levels {
		for _, t := range level {
			live[t.Num] = true
		}
	}
	for _, name := range names {
		kind, num := filenames.Parse(name)
		if kind == filenames.Log && num < d.logNum || kind == filenames.Table && !live[num] && num < d.nextFileNum ||
			kind == filenames.Manifest && num != d.manifestNum || kind == filenames.Temp {
			d.deleteFile(filepath.Join(d.dir, name))
		}
	}
}

func (d *DB) deleteFile(path string) {
	if err := d.fs.Remove(path); err != nil {
		d.logger.Error("simpledb: delete obsolete file", "file", path, "err", err)
	}
}

// Get returns a copy of the value of key, or ErrNotFound when it is absent
// or deleted. The copy is the caller's; AppendValue reads into a buffer the
// caller reuses instead, and Has reads no value.
func (d *DB) Get(key []byte) ([]byte, error) {
	return d.read(key, nil, readCopy)
}

// AppendValue appends the value of key to dst and returns the extended
// slice, or dst and ErrNotFound when key is absent or deleted. A read into a
// buffer with room allocates nothing: reuse the result, truncated, for the
// next read.
//
// Reads hand values back this way rather than as views of the database's
// memory released by a closer (Pebble's Get) or passed to a callback
// (bbolt's View): the value is the caller's, with no lifetime rule to
// break, and copying it costs little beside finding it (see
// BenchmarkSimpleDBGetAppendValue).
func (d *DB) AppendValue(dst, key []byte) ([]byte, error) {
	return d.read(key, dst, readAppend)
}

// Has reports whether key has a value: false, with a nil error, when it is
// absent or deleted. It reads no value.
func (d *DB) Has(key []byte) (bool, error) {
	return found(d.read(key, nil, readNone))
}

// found turns a read's ErrNotFound into false.
func found(_ []byte, err error) (bool, error) {
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

func (d *DB) read(key, dst []byte, mode readMode) ([]byte, error) {
	if err := d.checkOpen(); err != nil {
		return dst, err
	}
	if err := base.CheckKey(key); err != nil {
		return dst, err
	}
	rs, err := d.acquire()
	if err != nil {
		return dst, err
	}
	defer rs.unref(d)
	return rs.get(key, d.visibleSeq.Load(), dst, mode)
}

// readMode says what a read does with the value it finds.
type readMode uint8

const (
	readCopy   readMode = iota // return a new copy, never nil
	readAppend                 // append it to dst
	readNone                   // leave it: only whether it is there matters
)

// value returns v as mode asks for it.
func (m readMode) value(dst, v []byte) []byte {
	switch m {
	case readCopy:
		return append(make([]byte, 0, len(v)), v...)
	case readAppend:
		return append(dst, v...)
	}
	return dst
}

// get reads key as of seq, which is a snapshot's or the visible sequence
// number loaded after rs was acquired, and returns its value as mode asks.
//
// The order matters. A flush or compaction that built rs's tables kept, of
// each key's versions that no snapshot tells apart, only the newest, which
// was applied, so at or below the visible sequence number, before rs was
// installed: a seq loaded later still sees it, and a dropped version could
// only have hidden behind it. A seq loaded before acquiring could predate
// a flush installed in between, and find its version dropped in favour of
// one above seq. Writes at or below seq that rs lacks went to memstores
// created after rs, so they come after all that rs holds: the read sees
// the state after a prefix of the commits, between acquire and load.
func (rs *readState) get(key []byte, seq uint64, dst []byte, mode readMode) ([]byte, error) {
	for i := len(rs.imm); i >= 0; i-- {
		mt := rs.mem
		if i < len(rs.imm) {
			mt = rs.imm[i]
		}
		switch v, res := mt.m.GetAt(key, seq); res {
		case memstore.Found:
			return mode.value(dst, v), nil
		case memstore.Deleted:
			return dst, ErrNotFound
		}
	}
	hash := sstables.HashKey(key) // once for every table's filter
	find := func(t *table) ([]byte, bool, error) {
		out := dst
		kind, found, err := t.find(key, hash, seq, func(v []byte) { out = mode.value(dst, v) })
		if err != nil || !found {
			return dst, found, err
		}
		if kind == base.KindDelete {
			return dst, true, ErrNotFound
		}
		return out, true, nil
	}
	for _, t := range rs.v.levels[0] {
		if !t.overlaps(rs.v.cmp, key, key) {
			continue
		}
		if v, found, err := find(t); found || err != nil {
			return v, err
		}
	}
	for level := 1; level < NumLevels; level++ {
		if t := rs.v.tableFor(level, key); t != nil {
			if v, found, err := find(t); found || err != nil {
				return v, err
			}
		}
	}
	return dst, ErrNotFound
}

func (d *DB) checkOpen() error {
	if d.closed.Load() {
		return ErrClosed
	}
	return nil
}

// Close stops background work, makes every acknowledged write durable and
// releases the database's files and lock. Iterators still open keep
// working until they are closed: each holds the tables it reads. Reads
// through a snapshot, like every other call, return ErrClosed; releasing
// it is still allowed.
//
// If the log has failed (an append to it or its fsync), Close returns that
// failure, matching ErrBackground and ErrWriteOutcomeUnknown, and does not
// fsync the log again: what the log holds since its last good fsync may be
// lost already, and a retry that succeeds would not prove otherwise. It
// releases everything all the same.
func (d *DB) Close() error {
	// Writes already under way finish first; then the log is synced and
	// closed.
	d.closeMu.Lock()
	d.mu.Lock()
	if d.closed.Load() {
		d.mu.Unlock()
		d.closeMu.Unlock()
		return ErrClosed
	}
	d.closed.Store(true)
	close(d.closing)
	d.cond.Broadcast()
	d.mu.Unlock()
	d.closeMu.Unlock()
	d.gather.stop()
	d.syncMu.Lock()
	err := d.logErr
	d.syncMu.Unlock()
	var logSize int64
	switch {
	case err == nil && d.wal == nil:
		// A rotation closed the log and failed to start the next.
		err = d.backgroundError()
	case err != nil:
		// The log's writer would flush and fsync it on Close, so its file
		// is closed instead. The error is moot: the log failed already (and
		// a rotation whose fsync failed closed the file). (A Resume that
		// failed may have given the file up already.)
		if d.walFile != nil {
			d.walFile.Close()
		}
		d.wal = nil
	case d.wal != nil:
		logSize = d.wal.Size()
		err = d.wal.Close()
		d.wal = nil
	}

	d.bgWG.Wait()
	d.deleteRecycledLogs()
	if err == nil && logSize > 0 {
		// The log is whole and durable: record its length, so that the next
		// Open tells damage to its end from a torn tail.
		d.mu.Lock()
		err = d.writeEdit(&manifest.Edit{Logs: []manifest.LogInfo{{Num: d.mem.logNum, Size: uint64(logSize)}}})
		d.mu.Unlock()
	}
	if rerr := d.releaseAll(); err == nil {
		err = rerr
	}
	if err != nil {
		return fmt.Errorf("simpledb: close: %w", err)
	}
	return nil
}

// releaseAll drops the database's references and closes its files.
func (d *DB) releaseAll() error {
	var errs []error
	if d.wal != nil {
		errs = append(errs, d.wal.Close())
	}
	if d.manifest != nil {
		errs = append(errs, d.manifest.Close())
	}
	// Reads that acquire the state from now on get ErrClosed: once the
	// last reference goes, its tables are closed.
	d.swapReadState(nil)
	if d.current != nil {
		d.current.unref(d)
	}
	if d.removeLock {
		d.deleteFile(filepath.Join(d.dir, filenames.LockName)) // while still held, as a failed Open does
	}
	errs = append(errs, d.lock.Close())
	return errors.Join(errs...)
}
