package bench

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// countFSM counts what it applies: the cluster benchmark measures the log
// stores, so its state machine costs next to nothing.
type countFSM struct{ n atomic.Uint64 }

func (f *countFSM) Apply(*raft.Log) interface{}         { f.n.Add(1); return nil }
func (f *countFSM) Snapshot() (raft.FSMSnapshot, error) { return countSnapshot{}, nil }
func (f *countFSM) Restore(rc io.ReadCloser) error      { return rc.Close() }

type countSnapshot struct{}

func (countSnapshot) Persist(sink raft.SnapshotSink) error { return sink.Close() }
func (countSnapshot) Release()                             {}

// BenchmarkClusterApply runs a 3-node cluster on raft's in-memory
// transport, every node's log and stable store of one kind, on disk, and
// 64 clients applying 128-byte commands on the leader; ops/s is
// committed-and-applied commands per second. Raft's default timeouts (1 s)
// keep the leadership in place under a loaded disk; should it move all the
// same, clients follow it, and retries counts their commands sent again.
func BenchmarkClusterApply(b *testing.B) {
	const clients = 64
	for _, k := range kinds {
		b.Run(k.name, func(b *testing.B) {
			rafts := startCluster(b, k)
			var leader atomic.Pointer[raft.Raft]
			findLeader := func() error {
				deadline := time.Now().Add(10 * time.Second)
				for time.Now().Before(deadline) {
					for _, r := range rafts {
						if r.State() == raft.Leader {
							leader.Store(r)
							return nil
						}
					}
					time.Sleep(10 * time.Millisecond)
				}
				return errors.New("no leader within 10 s")
			}
			if err := findLeader(); err != nil {
				b.Fatal(err)
			}
			var elections atomic.Int64
			cmd := make([]byte, 128)
			b.ReportAllocs()
			b.ResetTimer()
			var next atomic.Int64
			var wg sync.WaitGroup
			var failed atomic.Pointer[error]
			for range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for next.Add(1) <= int64(b.N) {
						err := leader.Load().Apply(cmd, 10*time.Second).Error()
						for errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipLost) {
							// The leadership moved (the outcome of a lost
							// one is unknown; it is applied again).
							elections.Add(1)
							if err = findLeader(); err == nil {
								err = leader.Load().Apply(cmd, 10*time.Second).Error()
							}
						}
						if err != nil {
							failed.Store(&err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			if errp := failed.Load(); errp != nil {
				b.Fatal(*errp)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
			b.ReportMetric(float64(elections.Load()), "retries")
		})
	}
}

func startCluster(b *testing.B, k kind) []*raft.Raft {
	dir := benchDir(b)
	var trans []*raft.InmemTransport
	var servers []raft.Server
	for i := range 3 {
		addr, t := raft.NewInmemTransport(raft.ServerAddress(fmt.Sprintf("n%d", i)))
		trans = append(trans, t)
		servers = append(servers, raft.Server{ID: raft.ServerID(addr), Address: addr})
	}
	for _, a := range trans {
		for _, c := range trans {
			if a != c {
				a.Connect(c.LocalAddr(), c)
			}
		}
	}
	var rafts []*raft.Raft
	for i := range 3 {
		s, err := k.open(filepath.Join(dir, fmt.Sprintf("node%d", i)))
		if err != nil {
			b.Fatal(err)
		}
		conf := raft.DefaultConfig()
		conf.LocalID = servers[i].ID
		conf.Logger = hclog.NewNullLogger()
		if i == 0 {
			if err := raft.BootstrapCluster(conf, s, s, raft.NewInmemSnapshotStore(), trans[i], raft.Configuration{Servers: servers}); err != nil {
				b.Fatal(err)
			}
		}
		r, err := raft.NewRaft(conf, &countFSM{}, s, s, raft.NewInmemSnapshotStore(), trans[i])
		if err != nil {
			b.Fatal(err)
		}
		rafts = append(rafts, r)
		b.Cleanup(func() {
			r.Shutdown().Error()
			s.Close()
		})
	}
	return rafts
}
