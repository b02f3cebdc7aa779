package raftstore_test

import (
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/stratadb/strata/raftstore"
)

// Example runs a one-node raft cluster whose log and stable state are a
// Store, and applies a command through it.
func Example() {
	dir, err := os.MkdirTemp("", "raftstore-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	store, err := raftstore.Open(dir, nil) // log entries and stable state, one database
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	conf := raft.DefaultConfig()
	conf.LocalID = "n1"
	conf.Logger = hclog.NewNullLogger()
	conf.HeartbeatTimeout, conf.ElectionTimeout, conf.LeaderLeaseTimeout = 100*time.Millisecond, 100*time.Millisecond, 100*time.Millisecond
	addr, trans := raft.NewInmemTransport("n1")
	fsm := &lastCommand{}
	r, err := raft.NewRaft(conf, fsm, store, store, raft.NewInmemSnapshotStore(), trans)
	if err != nil {
		log.Fatal(err)
	}
	defer func() { r.Shutdown().Error() }()
	if err := r.BootstrapCluster(raft.Configuration{Servers: []raft.Server{{ID: "n1", Address: addr}}}).Error(); err != nil {
		log.Fatal(err)
	}
	for r.State() != raft.Leader {
		time.Sleep(10 * time.Millisecond)
	}
	if err := r.Apply([]byte("hello"), time.Second).Error(); err != nil {
		log.Fatal(err)
	}
	last, _ := store.LastIndex()
	var entry raft.Log
	if err := store.GetLog(last, &entry); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("applied %q; the log's last entry: %s %q\n", fsm.last, entry.Type, entry.Data)
	// Output: applied "hello"; the log's last entry: LogCommand "hello"
}

// lastCommand is a state machine that remembers the last command.
type lastCommand struct{ last string }

func (f *lastCommand) Apply(l *raft.Log) interface{}       { f.last = string(l.Data); return nil }
func (f *lastCommand) Snapshot() (raft.FSMSnapshot, error) { return nil, fmt.Errorf("no snapshots") }
func (f *lastCommand) Restore(rc io.ReadCloser) error      { return rc.Close() }
