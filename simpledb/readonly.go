package simpledb

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/stratadb/strata/internal/filenames"
	"github.com/stratadb/strata/memstore"
	"github.com/stratadb/strata/vfs"
)

// A read-only Open (Options.ReadOnly) runs the first half of recovery
// only: it reads CURRENT and the manifest, opens the tables, and replays
// the logs, with the same proof and the same errors as any Open, so a
// damaged database is ErrCorruption here too. It then serves reads from
// what it found: the logs' writes stay in the memstore they were replayed
// into, which is never flushed. It creates no log, writes no table,
// manifest or CURRENT, deletes no obsolete file, starts no flush or
// compaction, and Close writes nothing either. A missing directory, or
// one holding no database (empty, or only what a crash while creating one
// leaves), is ErrNotDB, and is not created.
//
// The lock. A read-only Open takes the directory's lock, as every Open
// does and as Pebble does in read-only mode, so it fails with ErrLocked
// while another Open (read-only or not, in this process or another) holds
// the directory, and a writer cannot open it meanwhile. That is what
// keeps a reader from seeing a directory half changed: a writer's Open
// removes obsolete logs, and its compactions delete tables, which a reader
// that listed the directory a moment before would report as missing. The
// price is that readers exclude each other too. The LOCK file is the one
// thing a read-only Open may write: a directory without one (a checkpoint,
// a copy) gets it created for the lock, and removed again at Close, so
// the directory is left as it was found. On a read-only filesystem, where
// the lock cannot be taken (EROFS), a read-only Open goes without it: no
// writer can change the directory there either.

// serveReadOnly makes the version that prove opened, and the writes it
// replayed into recovered, what reads see.
func (d *DB) serveReadOnly(recovered *memstore.Memstore) {
	d.mem = &memTable{m: recovered}
	d.visibleSeq.Store(d.lastSeq)
	d.l0Tables.Store(int64(len(d.current.levels[0])))
	d.installReadState()
}

// checkWritable returns ErrClosed once the database is closed, and
// ErrReadOnly if it was opened read-only.
func (d *DB) checkWritable() error {
	if err := d.checkOpen(); err != nil {
		return err
	}
	if d.opts.ReadOnly {
		return ErrReadOnly
	}
	return nil
}

// checkReadOnlyDir returns ErrNotDB unless dir holds a database's CURRENT,
// and ErrCorruption where it lacks one but holds a database's files, as
// recovery would, so that a read-only Open of anything else, or one with
// ErrorIfNotExists, fails before it creates a LOCK file. (Recovery checks
// again, under the lock.)
func checkReadOnlyDir(fsys vfs.FS, dir string) error {
	names, err := fsys.List(dir)
	if err != nil {
		return fmt.Errorf("simpledb: open %s read-only: %w: %w", dir, ErrNotDB, err)
	}
	if slices.Contains(names, filenames.CurrentName) {
		return nil
	}
	d := &DB{fs: fsys, dir: dir}
	if err := d.checkNewDir(names); err != nil {
		return err
	}
	return errNoDatabase(dir)
}

// errNoDatabase is a read-only Open's error for a directory that holds no
// database, nor the files of one.
func errNoDatabase(dir string) error {
	return fmt.Errorf("%w: %s holds none, and this Open creates none (read-only or ErrorIfNotExists)", ErrNotDB, dir)
}

// lockDir takes the lock of the database in dir, and reports whether it
// created the LOCK file, which a read-only Open (or Verify) removes again
// when it is done. A read-only Open on a read-only filesystem gets a
// readOnlyFSLock instead.
func lockDir(o *Options, dir string) (lock io.Closer, created bool, err error) {
	path := filepath.Join(dir, filenames.LockName)
	_, statErr := o.FS.Stat(path)
	lock, err = o.FS.Lock(path)
	if err != nil && o.ReadOnly && errors.Is(err, syscall.EROFS) {
		return readOnlyFSLock{}, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return lock, errors.Is(statErr, fs.ErrNotExist), nil
}

// readOnlyFSLock stands for the lock of a directory on a read-only
// filesystem, which nothing can change: it holds nothing.
type readOnlyFSLock struct{}

func (readOnlyFSLock) Close() error { return nil }
