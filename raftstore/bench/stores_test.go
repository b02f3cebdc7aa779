package bench

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	wal "github.com/hashicorp/raft-wal"
	"github.com/stratadb/strata/raftstore"
)

// store is a log and stable store under test.
type store interface {
	raft.LogStore
	raft.StableStore
	Close() error
}

// kind opens one kind of store in a directory.
type kind struct {
	name string
	open func(dir string) (store, error)
}

// kinds are the stores compared, each with its defaults: all sync every
// StoreLogs.
var kinds = []kind{
	{"strata", func(dir string) (store, error) { return raftstore.Open(dir, nil) }},
	{"boltdb", func(dir string) (store, error) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		return raftboltdb.NewBoltStore(filepath.Join(dir, "raft.db"))
	}},
	{"raftwal", func(dir string) (store, error) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		return wal.Open(dir)
	}},
}

// benchDir is where stores are created: a directory on the disk to
// measure, not a tmpfs (RAFT_BENCH_DIR, default the system's temporary
// directory).
func benchDir(b *testing.B) string {
	base := os.Getenv("RAFT_BENCH_DIR")
	if base == "" {
		return b.TempDir()
	}
	dir, err := os.MkdirTemp(base, "raftbench")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func openKind(b *testing.B, k kind) store {
	s, err := k.open(filepath.Join(benchDir(b), k.name))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}
