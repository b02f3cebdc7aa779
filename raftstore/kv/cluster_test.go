package kv_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/stratadb/strata/raftstore/kv"
	"github.com/stratadb/strata/vfs"
	"github.com/stretchr/testify/require"
)

// cluster is an in-process cluster on raft's in-memory transport. Each
// node's databases live in a vfs.MemFS of its own, so that a crash is a
// CrashClone of it; its snapshots are files in a directory of its own.
type cluster struct {
	t     *testing.T
	rng   *rand.Rand
	nodes []*testNode
	conf  func() *raft.Config
	// cut[i][j] says that messages from node i to node j are dropped.
	mu  sync.Mutex
	cut map[[2]int]bool
}

type testNode struct {
	id      raft.ServerID
	addr    raft.ServerAddress
	fs      *vfs.MemFS
	snaps   string
	trans   *raft.InmemTransport
	node    *kv.Node
	stopped bool
}

// fastConfig is raft's configuration for in-process clusters: timeouts
// short enough for tests, long enough for a 2-core machine under -race.
func fastConfig() *raft.Config {
	c := raft.DefaultConfig()
	c.HeartbeatTimeout = 100 * time.Millisecond
	c.ElectionTimeout = 100 * time.Millisecond
	c.LeaderLeaseTimeout = 100 * time.Millisecond
	c.CommitTimeout = 5 * time.Millisecond
	c.SnapshotInterval = time.Hour // tests take snapshots by hand
	c.Logger = hclog.New(&hclog.LoggerOptions{Level: hclog.Error, Output: hclogOutput{}})
	return c
}

// hclogOutput drops raft's log lines: tests report what they check.
type hclogOutput struct{}

func (hclogOutput) Write(p []byte) (int, error) { return len(p), nil }

func newCluster(t *testing.T, n int, rng *rand.Rand, conf func() *raft.Config) *cluster {
	if conf == nil {
		conf = fastConfig
	}
	c := &cluster{t: t, rng: rng, conf: conf, cut: map[[2]int]bool{}}
	var servers []raft.Server
	for i := range n {
		tn := &testNode{
			id:      raft.ServerID(fmt.Sprintf("node%d", i)),
			addr:    raft.ServerAddress(fmt.Sprintf("addr%d", i)),
			fs:      vfs.NewMem(),
			snaps:   t.TempDir(),
			stopped: true,
		}
		c.nodes = append(c.nodes, tn)
		servers = append(servers, raft.Server{ID: tn.id, Address: tn.addr})
	}
	for i := range c.nodes {
		c.start(i)
	}
	require.NoError(t, c.nodes[0].node.Bootstrap(servers...))
	t.Cleanup(c.close)
	return c
}

// start opens node i on its filesystem with a new transport, and connects
// it with the others as the cuts allow.
func (c *cluster) start(i int) {
	tn := c.nodes[i]
	_, tn.trans = raft.NewInmemTransport(tn.addr)
	snaps, err := raft.NewFileSnapshotStoreWithLogger(tn.snaps, 2, hclog.NewNullLogger())
	require.NoError(c.t, err)
	node, err := kv.NewNode(kv.Config{
		ID: tn.id, Dir: "node", Transport: tn.trans, Raft: c.conf(), FS: tn.fs,
		Log:       simpledbOpts(),
		FSM:       kv.FSMOptions{DB: dbOpts()},
		Snapshots: snaps, Timeout: 2 * time.Second,
	})
	require.NoError(c.t, err)
	c.mu.Lock()
	tn.node, tn.stopped = node, false
	c.mu.Unlock()
	c.connect()
}

// node returns node i, and whether it runs.
func (c *cluster) node(i int) (*kv.Node, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nodes[i].node, !c.nodes[i].stopped
}

// connect (re)connects every running pair of nodes that is not cut.
func (c *cluster) connect() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, a := range c.nodes {
		for j, b := range c.nodes {
			if i == j || a.stopped || b.stopped {
				continue
			}
			if c.cut[[2]int{i, j}] {
				a.trans.Disconnect(b.addr)
			} else {
				a.trans.Connect(b.addr, b.trans)
			}
		}
	}
}

// partition cuts the nodes in group off from the others, both ways; heal
// undoes every cut.
func (c *cluster) partition(group ...int) {
	in := map[int]bool{}
	for _, i := range group {
		in[i] = true
	}
	c.mu.Lock()
	for i := range c.nodes {
		for j := range c.nodes {
			if in[i] != in[j] {
				c.cut[[2]int{i, j}] = true
			}
		}
	}
	c.mu.Unlock()
	c.connect()
}

func (c *cluster) heal() {
	c.mu.Lock()
	c.cut = map[[2]int]bool{}
	c.mu.Unlock()
	c.connect()
}

// crash stops node i as a kill would: raft stops, and its databases are
// what a power loss at that moment leaves (synced data, a random torn
// tail of the rest). restart brings it back.
func (c *cluster) crash(i int) {
	tn := c.nodes[i]
	c.mu.Lock()
	tn.stopped = true
	c.mu.Unlock()
	c.connect()
	require.NoError(c.t, tn.node.Shutdown())
	clone := tn.fs.CrashClone(vfs.CrashOptions{Rand: rand.New(rand.NewPCG(c.rng.Uint64(), 0))})
	require.NoError(c.t, tn.node.CloseStores())
	tn.fs = clone
}

// stop shuts node i down cleanly.
func (c *cluster) stop(i int) {
	tn := c.nodes[i]
	c.mu.Lock()
	tn.stopped = true
	c.mu.Unlock()
	c.connect()
	require.NoError(c.t, tn.node.Close())
}

func (c *cluster) close() {
	for _, tn := range c.nodes {
		if !tn.stopped {
			tn.node.Close()
			tn.stopped = true
		}
	}
}

// leader waits for a leader that a majority of the cluster (itself
// included) names, and returns its index. A node cut off from it may
// not know it.
func (c *cluster) leader() int {
	c.t.Helper()
	i, err := c.findLeader()
	if err != nil {
		c.t.Fatal(err)
	}
	return i
}

// findLeader is leader for any goroutine: it returns an error where leader
// fails the test.
func (c *cluster) findLeader() (int, error) {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for i, tn := range c.nodes {
			n, ok := c.node(i)
			if !ok || !n.IsLeader() {
				continue
			}
			votes := 0
			for j := range c.nodes {
				other, ok := c.node(j)
				if !ok {
					continue
				}
				if _, id := other.Leader(); id == tn.id {
					votes++
				}
			}
			if votes > len(c.nodes)/2 {
				return i, nil
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return -1, errors.New("no leader named by a majority within 20 s")
}

// put writes through whichever node leads, retrying while leadership
// moves.
func (c *cluster) put(key, value string) {
	c.t.Helper()
	if err := c.tryPut(key, value); err != nil {
		c.t.Fatal(err)
	}
}

func (c *cluster) tryPut(key, value string) error {
	deadline := time.Now().Add(20 * time.Second)
	for {
		lead, err := c.findLeader()
		if err != nil {
			return err
		}
		n, ok := c.node(lead)
		if !ok {
			continue
		}
		err = n.Put([]byte(key), []byte(value))
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || !retryable(err) {
			return fmt.Errorf("put %s: %w", key, err)
		}
	}
}

func retryable(err error) bool {
	return errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipLost) ||
		errors.Is(err, raft.ErrEnqueueTimeout) || errors.Is(err, raft.ErrLeadershipTransferInProgress) ||
		errors.Is(err, raft.ErrRaftShutdown)
}

// contents returns node i's map.
func (c *cluster) contents(i int) map[string]string {
	c.t.Helper()
	it, err := c.nodes[i].node.FSM().DB().NewIterator([]byte("d"), []byte("e"))
	require.NoError(c.t, err)
	defer it.Close()
	m := map[string]string{}
	for k, v := range it.All() {
		m[string(k[1:])] = string(v)
	}
	require.NoError(c.t, it.Err())
	return m
}

// converge waits until every running node holds want.
func (c *cluster) converge(want map[string]string) {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok := true
		for i, tn := range c.nodes {
			if tn.stopped {
				continue
			}
			got := c.contents(i)
			if len(got) != len(want) {
				ok = false
				break
			}
			for k, v := range want {
				if got[k] != v {
					ok = false
					break
				}
			}
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			for i, tn := range c.nodes {
				if !tn.stopped {
					c.t.Logf("node %d holds %d keys, applied %d", i, len(c.contents(i)), tn.node.FSM().AppliedIndex())
				}
			}
			c.t.Fatalf("nodes did not converge on %d keys within 30 s", len(want))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// putMany writes keys prefix0..prefix(n-1) from workers writers, recording
// each in want.
func (c *cluster) putMany(prefix string, n, workers int, want map[string]string) {
	c.t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				k, v := fmt.Sprintf("%s%05d", prefix, i), fmt.Sprintf("v%d-%s", i, prefix)
				if err := c.tryPut(k, v); err != nil {
					c.t.Error(err)
					return
				}
				mu.Lock()
				want[k] = v
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if c.t.Failed() {
		c.t.FailNow()
	}
}
