// Package marked opens a Strata database that carries a marker key naming
// what it holds (a raft log store, a kv state machine), and refuses one
// that holds something else before writing anything to it.
//
// A read-write simpledb.Open rewrites a database's manifest and logs, so a
// directory that holds files is first opened read-only to check the
// marker; a database without any key is new, and gets the marker.
package marked

import (
	"errors"
	"io/fs"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/simpledb"
	"github.com/stratadb/strata/vfs"
)

var (
	// ErrForeign: the database has keys but not the marker, or another one.
	ErrForeign = errors.New("database holds something else")
	// ErrVersion: the marker names a format version this build does not know.
	ErrVersion = errors.New("unknown format version")
)

// Marker is the key and value that mark a database: the value is Magic
// followed by one version byte.
type Marker struct {
	Key     []byte
	Magic   string
	Version byte
}

// Open opens the database in dir with opts, checking m first.
func Open(dir string, opts simpledb.Options, m Marker) (*simpledb.DB, error) {
	if !opts.ReadOnly {
		exists, err := holdsFiles(opts.FS, dir)
		if err != nil {
			return nil, err
		}
		if exists {
			ro := opts
			ro.ReadOnly = true
			db, err := simpledb.Open(dir, &ro)
			if err != nil {
				return nil, err
			}
			err = check(db, m, false)
			if cerr := db.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return nil, err
			}
		}
	}
	db, err := simpledb.Open(dir, &opts)
	if err != nil {
		return nil, err
	}
	if err := check(db, m, !opts.ReadOnly); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func holdsFiles(fsys vfs.FS, dir string) (bool, error) {
	names, err := vfs.OrDefault(fsys).List(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return len(names) > 0, nil
}

// check checks db's marker. A database without keys gets it when write is
// set.
func check(db *simpledb.DB, m Marker, write bool) error {
	v, err := db.Get(m.Key)
	if err == nil {
		if len(v) != len(m.Magic)+1 || string(v[:len(m.Magic)]) != m.Magic {
			return ErrForeign
		}
		if v[len(m.Magic)] != m.Version {
			return errs.Errorf("format %d: %w", v[len(m.Magic)], ErrVersion)
		}
		return nil
	}
	if !errors.Is(err, simpledb.ErrNotFound) {
		return err
	}
	it, err := db.NewIterator(nil, nil)
	if err != nil {
		return err
	}
	hasKeys := it.First()
	err = it.Err()
	it.Close()
	if err != nil {
		return err
	}
	if hasKeys {
		return ErrForeign
	}
	if !write {
		return nil
	}
	b := db.NewBatch()
	b.Put(m.Key, append([]byte(m.Magic), m.Version))
	return db.Write(b, simpledb.Sync)
}
