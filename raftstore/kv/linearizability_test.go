package kv_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/hashicorp/raft"
	"github.com/stratadb/strata/internal/kvmodel"
	"github.com/stratadb/strata/internal/testseed"
	"github.com/stratadb/strata/raftstore/kv"
	"github.com/stretchr/testify/require"
)

// TestLinearizability runs clients against a 3-node cluster while a
// nemesis partitions nodes (the leader among them) with the in-memory
// transport, crashes them (their databases as a power loss leaves them)
// and restarts them, cleanly too; then checks that the history of
// linearizable reads and writes is linearizable. A write whose outcome is
// unknown (an error other than ErrNotLeader) may take effect at any time
// after its call, so it returns at the end of time; failed reads are left
// out.
func TestLinearizability(t *testing.T) {
	rng := seeded(t)
	duration := 6 * time.Second
	if testseed.Long() {
		duration = 60 * time.Second
	}
	c := newCluster(t, 3, rng, nil)
	c.leader()

	var (
		mu      sync.Mutex
		history []porcupine.Operation
		start   = time.Now()
		stop    = make(chan struct{})
		wg      sync.WaitGroup
		counts  = map[string]int{}
	)
	now := func() int64 { return int64(time.Since(start)) }
	keys := []string{"a", "b", "c", "d"}
	for client := range 6 {
		wg.Add(1)
		r := rand.New(rand.NewPCG(uint64(client), rng.Uint64()))
		go func() {
			defer wg.Done()
			target := 0
			for seq := 0; ; seq++ {
				select {
				case <-stop:
					return
				default:
				}
				n, ok := c.node(target)
				if !ok {
					target = r.IntN(len(c.nodes))
					continue
				}
				in := kvmodel.Input{Key: keys[r.IntN(len(keys))]}
				switch x := r.IntN(10); {
				case x < 5:
					in.Op = kvmodel.Get
				case x < 9:
					in.Op, in.Value = kvmodel.Put, fmt.Sprintf("c%d-%d", client, seq)
				default:
					in.Op = kvmodel.Delete
				}
				call := now()
				var out kvmodel.Output
				var err error
				switch in.Op {
				case 'g':
					var v []byte
					v, err = n.Get([]byte(in.Key), kv.Linearizable)
					if errors.Is(err, kv.ErrNotFound) {
						err = nil
					} else if err == nil {
						out = kvmodel.Output{Value: string(v), Found: true}
					}
				case 'p':
					err = n.Put([]byte(in.Key), []byte(in.Value))
				case 'd':
					err = n.Delete([]byte(in.Key))
				}
				ret := now()
				mu.Lock()
				switch {
				case err == nil:
					counts["ok"]++
					history = append(history, porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret})
				case errors.Is(err, raft.ErrNotLeader) || in.Op == kvmodel.Get:
					counts["refused"]++ // not applied, or a read: no effect
				default:
					counts["unknown"]++
					history = append(history, porcupine.Operation{ClientId: client, Input: in, Call: call, Output: kvmodel.Output{Unknown: true}, Return: math.MaxInt64})
				}
				mu.Unlock()
				if err != nil {
					target = r.IntN(len(c.nodes))
					if _, id := n.Leader(); id != "" {
						for i, tn := range c.nodes {
							if tn.id == id {
								target = i
							}
						}
					}
					time.Sleep(time.Millisecond)
				}
			}
		}()
	}

	// The nemesis: one fault at a time, so that a majority can make
	// progress between them.
	faults := map[string]int{}
	for time.Since(start) < duration {
		time.Sleep(time.Duration(100+rng.IntN(300)) * time.Millisecond)
		victim := rng.IntN(len(c.nodes))
		if rng.IntN(2) == 0 {
			if l, err := c.findLeader(); err == nil {
				victim = l
			}
		}
		switch f := rng.IntN(3); f {
		case 0:
			faults["partition"]++
			c.partition(victim)
			time.Sleep(time.Duration(200+rng.IntN(600)) * time.Millisecond)
			c.heal()
		case 1:
			faults["crash"]++
			c.crash(victim)
			time.Sleep(time.Duration(100+rng.IntN(400)) * time.Millisecond)
			c.start(victim)
		case 2:
			faults["restart"]++
			c.stop(victim)
			c.start(victim)
		}
	}
	close(stop)
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d operations in the history (%v), faults %v", len(history), counts, faults)
	require.Greater(t, counts["ok"], 100, "too few operations succeeded to check anything")
	// A write of unknown outcome may take effect at any point after its
	// call, so each widens the search; a minute of run leaves a hundred.
	budget := time.Minute
	if testseed.Long() {
		budget = 15 * time.Minute
	}
	res, info := porcupine.CheckOperationsVerbose(kvmodel.Model, history, budget)
	if res == porcupine.Illegal {
		path := t.TempDir() + "/history.html"
		porcupine.VisualizePath(kvmodel.Model, info, path)
		t.Fatalf("history not linearizable; visualisation in %s", path)
	}
	require.Equal(t, porcupine.Ok, res, "the check did not finish")
}
