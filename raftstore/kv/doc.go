// Package kv is a replicated key-value map on hashicorp/raft and Strata:
// FSM is the raft.FSM (and raft.BatchingFSM) on one Strata database, Node
// runs raft with a raftstore.Store for its log and stable state and an FSM
// on a second database, and serves reads and writes.
//
// # Usage
//
//	n, err := kv.NewNode(kv.Config{ID: "n1", Dir: dir, Transport: trans})
//	err = n.Bootstrap(raft.Server{ID: "n1", Address: trans.LocalAddr()}) // first node only
//	err = n.Join("n2", "127.0.0.1:7002")                                  // on the leader
//	err = n.Put(key, value)                                               // leader only: ErrNotLeader
//	v, err := n.Get(key, kv.Linearizable)                                 // leader only
//	v, err = n.Get(key, kv.Stale)                                         // any node, maybe behind
//
// # Writes
//
// A write is a Command in a raft log entry (its layout is drawn on
// Command). Raft hands committed entries to ApplyBatch, which writes the
// batch's commands as one Strata batch together with the last entry's
// index, under a key of its own: the database always knows how far it has
// applied the log, in the same atomic write as what it applied. A write
// returns once the leader has applied it.
//
// Those batches are unsynced. The raft log (a raftstore.Store, synced) is
// the durable record: after a crash raft restores the FSM from its last
// snapshot and replays the log after it, and the FSM skips entries at or
// below the index it recorded, so what a crash took from it is applied
// again and nothing is applied twice. (Raft replays from the last snapshot
// on every start; an FSM that kept all it had applied would skip the whole
// replay.)
//
// # Snapshots
//
// Snapshot takes a Strata snapshot, which costs nothing, and Persist
// streams its iterator to raft's snapshot sink while applies go on.
// Restore replaces the contents: one range deletion of every key, then the
// snapshot's keys in batches, then its applied index. Until that last
// write the recorded index is 0, so an interrupted restore is restored
// again at the next start.
//
// # Reads
//
// Stale reads (Get with Stale, on any node) read the node's database as
// applied so far: fast, and possibly behind the leader, even behind a write
// the same client saw acknowledged. Linearizable reads (Get with
// Linearizable, on the leader) see every write acknowledged before they
// began: the leader applies a command of its own once per term, then for
// each read notes its commit index, confirms its leadership with a quorum
// (raft's VerifyLeader, one round of heartbeats, no log write), and waits
// until the FSM has applied up to the noted index. Node.Get says more.
//
// # Failures
//
// A command that does not decode is refused alike by every node
// (ErrBadCommand) and changes nothing. If the database cannot write an
// applied batch, the FSM fails (ErrFailed) and refuses reads and applies;
// since the applied index moves only with what was written, reopening it
// catches up from the log or a snapshot. A directory that holds anything
// but an FSM's database is refused before anything is written (ErrNotFSM,
// simpledb.ErrNotDB).
package kv
