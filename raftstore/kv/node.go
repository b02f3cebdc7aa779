package kv

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"time"

	"github.com/stratadb/strata/internal/errs"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/stratadb/strata/raftstore"
	"github.com/stratadb/strata/vfs"
)

// Config configures a Node. ID, Dir and Transport are required; the other
// fields' zero values give the defaults.
type Config struct {
	// ID is the node's raft server ID.
	ID raft.ServerID
	// Dir holds the node's data: the log store in Dir/log, the FSM in
	// Dir/fsm, and (by default) snapshots in Dir/snapshots.
	Dir string
	// Transport carries raft's messages. Node.Close closes it.
	Transport raft.Transport
	// Raft configures raft; LocalID is set to ID. Default:
	// raft.DefaultConfig().
	Raft *raft.Config
	// FS holds the log store's and the FSM's databases (tests pass a
	// vfs.MemFS to simulate crashes). Default: the operating system's.
	FS vfs.FS
	// Log and FSM configure the two databases; their FS fields are set from
	// FS.
	Log raftstore.Options
	FSM FSMOptions
	// Snapshots stores raft's snapshots. Default: a raft.FileSnapshotStore
	// in Dir/snapshots that retains 2.
	Snapshots raft.SnapshotStore
	// Timeout bounds each write and linearizable read. Default: 5 s.
	Timeout time.Duration
	// Logger receives raft's log. Default: hclog at Warn to stderr.
	Logger hclog.Logger
}

// ReadLevel says what a read promises.
type ReadLevel int

const (
	// Linearizable reads are served by the leader after it has confirmed
	// its leadership with a quorum (VerifyLeader) and applied everything
	// committed before the read began: they see every write acknowledged
	// before they started.
	Linearizable ReadLevel = iota
	// Stale reads are served from this node's copy of the map as applied so
	// far, leader or not: fast, but possibly behind.
	Stale
)

// Node is one member of a replicated map: raft on a raftstore.Store, with
// an FSM on a second Strata database. Its methods are safe for concurrent
// use.
type Node struct {
	raft    *raft.Raft
	logs    *raftstore.Store
	fsm     *FSM
	timeout time.Duration

	// termMu guards readyTerm, the term in which this node, as leader, has
	// applied an entry of its own (see Get).
	termMu    sync.Mutex
	readyTerm uint64
}

// NewNode opens the node's stores and starts raft. A new cluster needs one
// node to Bootstrap it; the others are joined by the leader (Join).
func NewNode(cfg Config) (*Node, error) {
	if cfg.ID == "" || cfg.Dir == "" || cfg.Transport == nil {
		return nil, errors.New("kv: node needs an ID, a Dir and a Transport")
	}
	rc := raft.DefaultConfig()
	if cfg.Raft != nil {
		c := *cfg.Raft
		rc = &c
	}
	rc.LocalID = cfg.ID
	if cfg.Logger != nil {
		rc.Logger = cfg.Logger
	} else if rc.Logger == nil {
		rc.Logger = hclog.New(&hclog.LoggerOptions{Name: "raft-" + string(cfg.ID), Level: hclog.Warn})
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	cfg.Log.DB.FS = cfg.FS
	cfg.FSM.DB.FS = cfg.FS

	logs, err := raftstore.Open(filepath.Join(cfg.Dir, "log"), &cfg.Log)
	if err != nil {
		return nil, err
	}
	fsm, err := OpenFSM(filepath.Join(cfg.Dir, "fsm"), &cfg.FSM)
	if err != nil {
		logs.Close()
		return nil, err
	}
	snaps := cfg.Snapshots
	if snaps == nil {
		snaps, err = raft.NewFileSnapshotStoreWithLogger(filepath.Join(cfg.Dir, "snapshots"), 2, rc.Logger)
		if err != nil {
			logs.Close()
			fsm.Close()
			return nil, errs.Errorf("kv: snapshots: %w", err)
		}
	}
	r, err := raft.NewRaft(rc, fsm, logs, logs, snaps, cfg.Transport)
	if err != nil {
		logs.Close()
		fsm.Close()
		return nil, errs.Errorf("kv: raft: %w", err)
	}
	return &Node{raft: r, logs: logs, fsm: fsm, timeout: cfg.Timeout}, nil
}

// Bootstrap makes servers the first configuration of a new cluster. Call
// it on one node only; on a node that has state already it returns
// raft.ErrCantBootstrap.
func (n *Node) Bootstrap(servers ...raft.Server) error {
	return n.raft.BootstrapCluster(raft.Configuration{Servers: servers}).Error()
}

// Raft returns the node's raft, for its state, stats and membership.
func (n *Node) Raft() *raft.Raft { return n.raft }

// Store returns the node's log store.
func (n *Node) Store() *raftstore.Store { return n.logs }

// FSM returns the node's state machine.
func (n *Node) FSM() *FSM { return n.fsm }

// Leader returns the address and ID of the leader this node knows of,
// empty if none.
func (n *Node) Leader() (raft.ServerAddress, raft.ServerID) { return n.raft.LeaderWithID() }

// IsLeader reports whether this node believes it leads.
func (n *Node) IsLeader() bool { return n.raft.State() == raft.Leader }

// Put sets key to value through the log; it returns once the write is
// committed and applied here, the leader. On another node it returns
// ErrNotLeader.
func (n *Node) Put(key, value []byte) error {
	return n.apply(Command{Op: OpPut, Key: key, Value: value})
}

// Delete deletes key through the log, as Put.
func (n *Node) Delete(key []byte) error {
	return n.apply(Command{Op: OpDelete, Key: key})
}

func (n *Node) apply(c Command) error {
	if (c.Op == OpPut || c.Op == OpDelete) && len(c.Key) == 0 {
		return errs.Errorf("kv: empty key: %w", ErrBadCommand)
	}
	ctx, cancel := context.WithTimeout(context.Background(), n.timeout)
	defer cancel()
	f := n.raft.Apply(c.Encode(), n.timeout)
	if err := wait(ctx, f); err != nil {
		return err
	}
	if err, ok := f.Response().(error); ok {
		return err
	}
	return nil
}

// Get reads key at the given level. A linearizable read on a node that is
// not the leader returns ErrNotLeader; a key without a value ErrNotFound.
//
// A linearizable read follows the read-index scheme of the Raft
// dissertation (§6.4): once per term the leader applies a command of its
// own (OpNoop), so that its commit index covers every entry committed
// before its term; then each read notes the commit index, confirms with a
// quorum that the node still leads (VerifyLeader) in the same term, and
// waits until the FSM has applied up to the noted index before it reads.
// It costs a round of heartbeats, no write to the log. (Raft also commits
// entries the FSM never sees, barriers and noops of its own; after the
// term's OpNoop a leader appends none of them, so every index up to the
// noted one reaches the FSM. Calling Raft().Barrier on a Node could break
// that, and make reads wait out their timeout.)
func (n *Node) Get(key []byte, level ReadLevel) ([]byte, error) {
	if level == Stale {
		return n.fsm.Get(key)
	}
	ctx, cancel := context.WithTimeout(context.Background(), n.timeout)
	defer cancel()
	term, err := n.readyForReads()
	if err != nil {
		return nil, err
	}
	readIndex := n.raft.CommitIndex()
	if err := wait(ctx, n.raft.VerifyLeader()); err != nil {
		return nil, err
	}
	if n.raft.CurrentTerm() != term {
		return nil, raft.ErrLeadershipLost
	}
	if err := n.fsm.WaitApplied(ctx, readIndex); err != nil {
		return nil, err
	}
	return n.fsm.Get(key)
}

// wait waits for f, or until ctx is done. Raft's futures may never
// complete: a VerifyLeader queued just before raft shuts down stays in a
// buffered channel that no one reads again (raft v1.8.0), and its Error
// blocks forever. wait then leaves one goroutine behind, blocked on it.
func wait(ctx context.Context, f raft.Future) error {
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return errs.Errorf("kv: %w", ctx.Err())
	}
}

// readyForReads makes sure this node, as leader, has applied a command of
// its current term, and returns the term.
func (n *Node) readyForReads() (uint64, error) {
	n.termMu.Lock()
	defer n.termMu.Unlock()
	term := n.raft.CurrentTerm()
	if n.readyTerm == term {
		return term, nil
	}
	if n.raft.State() != raft.Leader {
		return 0, ErrNotLeader
	}
	if err := n.apply(Command{Op: OpNoop}); err != nil {
		return 0, err
	}
	if n.raft.CurrentTerm() != term {
		return 0, raft.ErrLeadershipLost
	}
	n.readyTerm = term
	return term, nil
}

// Join adds a voter to the cluster; call it on the leader.
func (n *Node) Join(id raft.ServerID, addr raft.ServerAddress) error {
	return n.raft.AddVoter(id, addr, 0, n.timeout).Error()
}

// Close shuts raft down (closing its transport) and closes both
// databases.
func (n *Node) Close() error {
	err := n.raft.Shutdown().Error()
	return errors.Join(err, n.logs.Close(), n.fsm.Close())
}

// Shutdown stops raft and closes the transport but leaves the databases
// open, as a process that is killed would: for tests, which take the
// databases' crash image before they call CloseStores.
func (n *Node) Shutdown() error { return n.raft.Shutdown().Error() }

// CloseStores closes the databases after Shutdown.
func (n *Node) CloseStores() error { return errors.Join(n.logs.Close(), n.fsm.Close()) }
