package kv_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/stratadb/strata/internal/testseed"
	"github.com/stretchr/testify/require"
)

func seeded(t *testing.T) *rand.Rand {
	return rand.New(rand.NewPCG(testseed.Seed(t), 0))
}

// Three nodes elect one leader, which every node names.
func TestClusterElection(t *testing.T) {
	c := newCluster(t, 3, seeded(t), nil)
	lead := c.leader()
	for i, tn := range c.nodes {
		require.Equal(t, i == lead, tn.node.IsLeader())
	}
	cfg := c.nodes[lead].node.Raft().GetConfiguration()
	require.NoError(t, cfg.Error())
	require.Len(t, cfg.Configuration().Servers, 3)
}

// 10,000 applies from concurrent clients agree on every node, and every
// node's log store holds the same entries.
func TestClusterApplies(t *testing.T) {
	c := newCluster(t, 3, seeded(t), nil)
	want := map[string]string{}
	c.putMany("k", 10000, 32, want)
	c.converge(want)
	lead := c.leader()
	last, err := c.nodes[lead].node.Store().LastIndex()
	require.NoError(t, err)
	require.Greater(t, last, uint64(10000))
	for i, tn := range c.nodes {
		var a, b raft.Log
		require.NoError(t, c.nodes[lead].node.Store().GetLog(last-100, &a))
		require.Eventually(t, func() bool { return tn.node.Store().GetLog(last-100, &b) == nil }, 10*time.Second, 10*time.Millisecond, "node %d", i)
		require.Equal(t, a.Term, b.Term)
		require.Equal(t, a.Data, b.Data)
	}
}

// The leader crashes (its databases are what a power loss leaves), a new
// leader takes over, and the old one comes back from its crash image,
// rejoins and catches up; nothing acknowledged is lost.
func TestClusterLeaderCrash(t *testing.T) {
	c := newCluster(t, 3, seeded(t), nil)
	want := map[string]string{}
	c.putMany("a", 500, 8, want)
	old := c.leader()
	c.crash(old)
	lead := c.leader()
	require.NotEqual(t, old, lead)
	c.putMany("b", 500, 8, want)
	c.start(old)
	c.putMany("c", 200, 8, want)
	c.converge(want)
}

// A follower cut off while the others write catches up: by log replay
// when the leader still holds what it missed, by a snapshot install when
// the leader has truncated its log past it.
func TestClusterFollowerCatchUp(t *testing.T) {
	cases := []struct {
		name     string
		snapshot bool
	}{
		{"LogReplay", false},
		{"SnapshotInstall", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			conf := func() *raft.Config {
				c := fastConfig()
				c.TrailingLogs = 50
				c.SnapshotThreshold = 100
				return c
			}
			c := newCluster(t, 3, seeded(t), conf)
			want := map[string]string{}
			c.putMany("a", 200, 8, want)
			c.converge(want)
			lead := c.leader()
			f := (lead + 1) % 3
			c.partition(f)
			c.putMany("b", 1000, 8, want)
			lead = c.leader()
			require.NotEqual(t, f, lead)
			ls := c.nodes[lead].node.Store()
			fLast, err := c.nodes[f].node.Store().LastIndex()
			require.NoError(t, err)
			if tc.snapshot {
				require.NoError(t, c.nodes[lead].node.Raft().Snapshot().Error())
				first, err := ls.FirstIndex()
				require.NoError(t, err)
				require.Greater(t, first, fLast+1, "the leader's log must be truncated past the follower's")
			} else {
				first, err := ls.FirstIndex()
				require.NoError(t, err)
				require.LessOrEqual(t, first, fLast+1)
			}
			c.heal()
			c.converge(want)
			stats := c.nodes[f].node.Raft().Stats()
			if tc.snapshot {
				require.NotEqual(t, "0", stats["last_snapshot_index"], "the follower installed no snapshot")
			} else {
				require.Equal(t, "0", stats["last_snapshot_index"], "the follower installed a snapshot")
			}
			c.putMany("c", 50, 4, want)
			c.converge(want)
		})
	}
}

// Every node stopped, then every node restarted: they recover the same
// state, elect a leader and go on.
func TestClusterRestartAll(t *testing.T) {
	for _, crash := range []bool{false, true} {
		t.Run(fmt.Sprintf("crash=%v", crash), func(t *testing.T) {
			conf := func() *raft.Config {
				c := fastConfig()
				c.TrailingLogs = 100
				c.SnapshotThreshold = 300
				return c
			}
			c := newCluster(t, 3, seeded(t), conf)
			want := map[string]string{}
			c.putMany("a", 400, 8, want)
			require.NoError(t, c.nodes[c.leader()].node.Raft().Snapshot().Error())
			c.putMany("b", 200, 8, want)
			c.converge(want)
			for i := range c.nodes {
				if crash {
					c.crash(i)
				} else {
					c.stop(i)
				}
			}
			for i := range c.nodes {
				c.start(i)
			}
			c.leader()
			c.converge(want)
			c.putMany("c", 100, 4, want)
			c.converge(want)
		})
	}
}
