package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/testseed"
	"github.com/stretchr/testify/require"
)

var killCycles = flag.Int("kill-cycles", 3, "SIGKILL-and-restart cycles of TestProcessKill")

// TestMain runs raftkv itself where TestProcessKill starts this binary as
// a node of its cluster (RAFTKV_MAIN set), so that the test builds
// nothing.
func TestMain(m *testing.M) {
	if os.Getenv("RAFTKV_MAIN") != "" {
		main()
		return
	}
	os.Exit(m.Run())
}

// proc is one raftkv process of the test's cluster.
type proc struct {
	id, raftAddr, httpAddr, dir string
	cmd                         *exec.Cmd
	exited                      chan struct{}
}

type procCluster struct {
	t     *testing.T
	bin   string
	procs []*proc
}

func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

// start runs p, with extra flags the first time.
func (c *procCluster) start(p *proc, extra ...string) {
	args := append([]string{"-id", p.id, "-raft", p.raftAddr, "-http", p.httpAddr, "-dir", p.dir, "-heartbeat", "300ms"}, extra...)
	p.cmd = exec.Command(c.bin, args...)
	p.cmd.Env = append(os.Environ(), "RAFTKV_MAIN=1")
	log, err := os.OpenFile(filepath.Join(filepath.Dir(p.dir), p.id+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	require.NoError(c.t, err)
	p.cmd.Stdout, p.cmd.Stderr = log, log
	require.NoError(c.t, p.cmd.Start())
	p.exited = make(chan struct{})
	go func() {
		p.cmd.Wait()
		log.Close()
		close(p.exited)
	}()
}

func (c *procCluster) kill(p *proc) {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// status returns p's /status, or nil if it does not answer.
func status(p *proc) map[string]any {
	cl := http.Client{Timeout: time.Second}
	resp, err := cl.Get("http://" + p.httpAddr + "/status")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var m map[string]any
	if json.NewDecoder(resp.Body).Decode(&m) != nil {
		return nil
	}
	return m
}

// leader waits until a process says it leads, and returns it.
func (c *procCluster) leader() *proc {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, p := range c.procs {
			if s := status(p); s != nil && s["state"] == "Leader" {
				return p
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Fatal("no leader within 30 s")
	return nil
}

var client = &http.Client{Timeout: 3 * time.Second}

func put(addr, key, value string) error {
	req, err := http.NewRequest(http.MethodPut, "http://"+addr+"/kv/"+key, bytes.NewReader([]byte(value)))
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("put %s: %s", key, resp.Status)
	}
	return nil
}

func get(addr, key string, stale bool) (string, int, error) {
	u := "http://" + addr + "/kv/" + key
	if stale {
		u += "?stale"
	}
	resp, err := client.Get(u)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), resp.StatusCode, err
}

// TestProcessKill runs a 3-node raftkv cluster of real processes on
// loopback, SIGKILLs a node (the leader half the time) at random moments
// while clients write, restarts it, and then checks every acknowledged
// write against the model of what was acknowledged: each key is written
// once, so every key a 204 answered must read back with its value, from
// the leader and, once they caught up, from every node.
func TestProcessKill(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes")
	}
	rng := rand.New(rand.NewPCG(testseed.Seed(t), 0))
	work := t.TempDir()
	c := &procCluster{t: t, bin: os.Args[0]}
	for i := range 3 {
		c.procs = append(c.procs, &proc{
			id: fmt.Sprintf("n%d", i), raftAddr: freePort(t), httpAddr: freePort(t),
			dir: filepath.Join(work, fmt.Sprintf("n%d", i), "data"),
		})
		require.NoError(t, os.MkdirAll(filepath.Dir(c.procs[i].dir), 0o755))
	}
	t.Cleanup(func() {
		for _, p := range c.procs {
			if p.cmd != nil {
				select {
				case <-p.exited:
				default:
					c.kill(p)
				}
			}
		}
		if t.Failed() {
			for _, p := range c.procs {
				b, _ := os.ReadFile(filepath.Join(filepath.Dir(p.dir), p.id+".log"))
				t.Logf("%s's log (tail):\n%s", p.id, tail(b, 3000))
			}
		}
	})
	c.start(c.procs[0], "-bootstrap")
	c.leader()
	for _, p := range c.procs[1:] {
		c.start(p, "-join", c.procs[0].httpAddr)
	}
	require.Eventually(t, func() bool {
		s := status(c.procs[0])
		return s != nil && s["commit_index"].(float64) >= 5 && status(c.procs[2]) != nil
	}, 30*time.Second, 50*time.Millisecond)

	// Writers: each key once, to a random node (a follower redirects).
	var mu sync.Mutex
	acked := map[string]string{}
	attempts, failures := 0, 0
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		r := rand.New(rand.NewPCG(uint64(w), rng.Uint64()))
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k, v := fmt.Sprintf("w%d-%06d", w, i), fmt.Sprintf("value-%d-%d", w, i)
				err := put(c.procs[r.IntN(3)].httpAddr, k, v)
				mu.Lock()
				attempts++
				if err == nil {
					acked[k] = v
				} else {
					failures++
				}
				mu.Unlock()
				if err != nil {
					time.Sleep(50 * time.Millisecond)
				}
			}
		}()
	}

	for cycle := range *killCycles {
		time.Sleep(time.Duration(300+rng.IntN(900)) * time.Millisecond)
		victim := c.procs[rng.IntN(3)]
		if rng.IntN(2) == 0 {
			victim = c.leader()
		}
		wasLeader := status(victim)
		c.kill(victim)
		t.Logf("cycle %d: killed %s (state %v)", cycle, victim.id, wasLeader["state"])
		time.Sleep(time.Duration(200+rng.IntN(800)) * time.Millisecond)
		c.start(victim)
	}
	time.Sleep(500 * time.Millisecond)
	close(stop)
	wg.Wait()

	lead := c.leader()
	t.Logf("%d writes attempted, %d acknowledged, %d failed or unknown; checking every acknowledged one", attempts, len(acked), failures)
	require.NotEmpty(t, acked)
	for k, want := range acked {
		got, code, err := get(lead.httpAddr, k, false)
		for tries := 0; err != nil || code == http.StatusServiceUnavailable; tries++ {
			require.Less(t, tries, 100, "reading %s: %v %d", k, err, code)
			time.Sleep(100 * time.Millisecond)
			lead = c.leader()
			got, code, err = get(lead.httpAddr, k, false)
		}
		require.Equal(t, http.StatusOK, code, "acknowledged key %s lost", k)
		require.Equal(t, want, got, "acknowledged key %s", k)
	}
	// Every node catches up with the leader and holds them too.
	ls := status(lead)
	require.NotNil(t, ls)
	for _, p := range c.procs {
		require.Eventually(t, func() bool {
			s := status(p)
			return s != nil && s["applied_index"].(float64) >= ls["commit_index"].(float64)
		}, 30*time.Second, 50*time.Millisecond, "%s did not catch up", p.id)
		for k, want := range acked {
			got, code, err := get(p.httpAddr, k, true)
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, code, "%s: acknowledged key %s missing", p.id, k)
			require.Equal(t, want, got)
		}
	}
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
