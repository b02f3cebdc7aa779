package kv_test

import (
	"fmt"
	"log"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/stratadb/strata/raftstore/kv"
)

// ExampleNode runs a one-node replicated map: a write through the log, a
// linearizable read on the leader, a stale read.
func ExampleNode() {
	dir, err := os.MkdirTemp("", "kv-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	conf := raft.DefaultConfig()
	conf.HeartbeatTimeout, conf.ElectionTimeout, conf.LeaderLeaseTimeout = 100*time.Millisecond, 100*time.Millisecond, 100*time.Millisecond
	addr, trans := raft.NewInmemTransport("n1")
	n, err := kv.NewNode(kv.Config{ID: "n1", Dir: dir, Transport: trans, Raft: conf, Logger: hclog.NewNullLogger()})
	if err != nil {
		log.Fatal(err)
	}
	defer n.Close()
	if err := n.Bootstrap(raft.Server{ID: "n1", Address: addr}); err != nil {
		log.Fatal(err)
	}
	for !n.IsLeader() {
		time.Sleep(10 * time.Millisecond)
	}
	if err := n.Put([]byte("greeting"), []byte("hello")); err != nil {
		log.Fatal(err)
	}
	v, err := n.Get([]byte("greeting"), kv.Linearizable)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("linearizable: %s\n", v)
	_, err = n.Get([]byte("missing"), kv.Stale)
	fmt.Println("stale, missing key:", err)
	// Output:
	// linearizable: hello
	// stale, missing key: kv: not found
}
