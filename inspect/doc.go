// Package inspect reads a database's files without opening the database:
// what its manifest records, its tables, blob files and logs (ReadLayout),
// the edits the manifest is made
// of (ReadManifest), the records of a log (ReadLog). It is for tools, the
// strata command among them; an application opens the database with
// simpledb.Open, and checks one with simpledb.Verify.
//
// Nothing here takes the database's lock or writes anything. A database
// open elsewhere may change under a reader, and delete a file between two
// reads: a caller that needs one consistent view of a database being
// written opens a follower (simpledb.Options.Follow), or reads again.
//
// Errors: a directory without a database matches ErrNotDB; damage matches
// ErrCorruption and names the file and offset; both are simpledb's too.
package inspect

import (
	"errors"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/sstables"
	"github.com/stratadb/strata/vfs"
)

// Options say where and how to read. The zero value reads the operating
// system's filesystem, in bytewise key order.
type Options struct {
	// FS is the filesystem to read. Default: vfs.Default.
	FS vfs.FS
	// Comparator is the key order the database was written in; a
	// manifest that records another is refused with
	// ErrComparatorMismatch. Default: sstables.Bytewise.
	Comparator *sstables.Comparator
}

func (o *Options) withDefaults() Options {
	var r Options
	if o != nil {
		r = *o
	}
	r.FS = vfs.OrDefault(r.FS)
	if r.Comparator == nil {
		r.Comparator = sstables.Bytewise
	}
	return r
}

var (
	// ErrNotDB: the directory holds no database. It is simpledb.ErrNotDB.
	ErrNotDB = base.ErrNotDB
	// ErrCorruption is matched by every error reporting damaged files;
	// such errors name the file and offset.
	ErrCorruption = base.ErrCorruption
	// ErrComparatorMismatch: the database was written in another key
	// order than Options.Comparator.
	ErrComparatorMismatch = base.ErrComparatorMismatch
	// ErrUnknownLogFormat: ReadLog was given a log format this build does
	// not read.
	ErrUnknownLogFormat = errors.New("inspect: unknown log format")
)
