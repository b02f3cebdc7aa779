package kv

import (
	"errors"

	"github.com/hashicorp/raft"
)

var (
	// ErrNotFound: the key has no value.
	ErrNotFound = errors.New("kv: not found")
	// ErrBadCommand: a log entry's command does not decode. Every node
	// refuses it alike, and it changes nothing.
	ErrBadCommand = errors.New("kv: bad command")
	// ErrNotLeader is raft.ErrNotLeader: a write or a linearizable read was
	// sent to a node that is not the leader. Node.Leader says which is.
	ErrNotLeader = raft.ErrNotLeader
	// ErrNotFSM: the FSM's directory holds a Strata database that is not a
	// kv FSM, or one of an unknown format. OpenFSM wrote nothing.
	ErrNotFSM = errors.New("kv: database is not a kv state machine")
	// ErrBadSnapshot: a snapshot stream does not decode, or its count or
	// checksum does not match what it holds.
	ErrBadSnapshot = errors.New("kv: bad snapshot")
	// ErrFailed: the FSM could not write an applied batch; it refuses
	// applies and reads until it is reopened, and then catches up from the
	// raft log or a snapshot, since the index it records as applied moves
	// only with what it wrote.
	ErrFailed = errors.New("kv: state machine failed")
)
