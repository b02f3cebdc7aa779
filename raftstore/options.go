package raftstore

import "github.com/stratadb/strata/simpledb"

// Options configure a Store. The zero value (or nil) gives the defaults.
type Options struct {
	// DB configures the Strata database under the store, passed to
	// simpledb.Open as it is: its zero value gives simpledb's defaults, each
	// documented on its field. Writes follow DB.NoSync: synced by default,
	// as raft needs (an entry raft has appended must survive a crash before
	// it votes or acknowledges). DB.Comparator must be nil or bytewise
	// (otherwise ErrKeyOrder). With DB.ReadOnly the store reads and every
	// write returns simpledb.ErrReadOnly.
	DB simpledb.Options
}
