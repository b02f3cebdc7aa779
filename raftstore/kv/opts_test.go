package kv_test

import (
	"log/slog"

	"github.com/stratadb/strata/raftstore"
	"github.com/stratadb/strata/simpledb"
)

// dbOpts keeps the test databases' memstores small, so that flushes and
// compactions happen within a test, and their log quiet: a crash's torn
// tail is expected here.
func dbOpts() simpledb.Options {
	return simpledb.Options{MemstoreSize: simpledb.MinMemstoreSize, Logger: slog.New(slog.DiscardHandler)}
}

func simpledbOpts() raftstore.Options { return raftstore.Options{DB: dbOpts()} }
