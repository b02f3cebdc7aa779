// Command raftkv runs one node of a replicated key-value store: the
// hashicorp/raft consensus engine with its log and stable state in a
// raftstore.Store and its state machine in a kv.FSM, both Strata
// databases, talking to its peers over TCP and to clients over HTTP.
//
//	raftkv -id n1 -raft 127.0.0.1:7001 -http 127.0.0.1:8001 -dir data/n1 -bootstrap
//	raftkv -id n2 -raft 127.0.0.1:7002 -http 127.0.0.1:8002 -dir data/n2 -join 127.0.0.1:8001
//
// The HTTP API:
//
//	PUT    /kv/KEY        the body is the value; 204 once committed and applied
//	GET    /kv/KEY        200 and the value, 404 if none; linearizable, on the leader
//	GET    /kv/KEY?stale  the same from this node's copy, leader or not: maybe behind
//	DELETE /kv/KEY        204 once committed and applied
//	POST   /join          id=ID&raft=ADDR&http=ADDR: add a voter (on the leader)
//	GET    /status        this node's raft state, as JSON
//
// A node that does not lead answers writes, linearizable reads and joins
// with a 307 redirect to the leader's HTTP address (curl -L follows it),
// or 503 while there is no leader. Nodes learn each other's HTTP addresses
// from the replicated map itself: the leader writes each member's under
// the reserved key _raftkv/http/ID. See ../../README.md for a 3-node
// cluster that survives a kill -9 of its leader.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/stratadb/strata/raftstore/kv"
)

// httpKeyPrefix is the reserved key prefix under which each member's HTTP
// address is replicated.
const httpKeyPrefix = "_raftkv/http/"

func main() {
	var (
		id        = flag.String("id", "", "this node's raft server ID (required)")
		raftAddr  = flag.String("raft", "127.0.0.1:7001", "the TCP address raft listens on and peers reach this node at")
		httpAddr  = flag.String("http", "127.0.0.1:8001", "the HTTP address the API listens on")
		dir       = flag.String("dir", "", "the node's data directory (required)")
		bootstrap = flag.Bool("bootstrap", false, "start a new cluster with this node as its only member")
		join      = flag.String("join", "", "the HTTP address of a member to ask to add this node")
		heartbeat = flag.Duration("heartbeat", 500*time.Millisecond, "raft's heartbeat and election timeout")
		logLevel  = flag.String("log-level", "warn", "raft's log level: trace, debug, info, warn, error")
	)
	flag.Parse()
	if *id == "" || *dir == "" {
		flag.Usage()
		os.Exit(2)
	}
	logger := hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hclog.LevelFromString(*logLevel), Output: os.Stderr})

	trans, err := raft.NewTCPTransportWithLogger(*raftAddr, nil, 3, 10*time.Second, logger)
	if err != nil {
		log.Fatalf("raftkv: transport: %v", err)
	}
	conf := raft.DefaultConfig()
	conf.HeartbeatTimeout = *heartbeat
	conf.ElectionTimeout = *heartbeat
	conf.LeaderLeaseTimeout = *heartbeat / 2
	node, err := kv.NewNode(kv.Config{
		ID: raft.ServerID(*id), Dir: *dir, Transport: trans, Raft: conf, Logger: logger,
	})
	if err != nil {
		log.Fatalf("raftkv: %v", err)
	}
	last, err := node.Store().LastIndex()
	if err != nil {
		log.Fatalf("raftkv: %v", err)
	}
	fresh := last == 0
	s := &server{node: node, id: *id, httpAddr: *httpAddr}

	if *bootstrap && fresh {
		err := node.Bootstrap(raft.Server{ID: raft.ServerID(*id), Address: trans.LocalAddr()})
		if err != nil && !errors.Is(err, raft.ErrCantBootstrap) {
			log.Fatalf("raftkv: bootstrap: %v", err)
		}
		go s.registerSelf()
	}
	srv := &http.Server{Addr: *httpAddr, Handler: s.routes()}
	go func() {
		if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Fatalf("raftkv: http: %v", err)
		}
	}()
	if *join != "" && fresh {
		if err := joinCluster(*join, *id, string(trans.LocalAddr()), *httpAddr); err != nil {
			log.Fatalf("raftkv: join %s: %v", *join, err)
		}
	}
	log.Printf("raftkv: node %s: raft %s, http %s, dir %s", *id, trans.LocalAddr(), *httpAddr, *dir)

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
	if err := node.Close(); err != nil {
		log.Fatalf("raftkv: close: %v", err)
	}
}

// server serves the HTTP API of one node.
type server struct {
	node     *kv.Node
	id       string
	httpAddr string
}

func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /kv/{key...}", s.put)
	mux.HandleFunc("GET /kv/{key...}", s.get)
	mux.HandleFunc("DELETE /kv/{key...}", s.del)
	mux.HandleFunc("POST /join", s.join)
	mux.HandleFunc("GET /status", s.status)
	return mux
}

func (s *server) put(w http.ResponseWriter, r *http.Request) {
	value, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.write(w, r, s.node.Put([]byte(r.PathValue("key")), value))
}

func (s *server) del(w http.ResponseWriter, r *http.Request) {
	s.write(w, r, s.node.Delete([]byte(r.PathValue("key"))))
}

func (s *server) write(w http.ResponseWriter, r *http.Request, err error) {
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *server) get(w http.ResponseWriter, r *http.Request) {
	level := kv.Linearizable
	if r.URL.Query().Has("stale") {
		level = kv.Stale
	}
	v, err := s.node.Get([]byte(r.PathValue("key")), level)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Write(v)
}

func (s *server) join(w http.ResponseWriter, r *http.Request) {
	id, raftAddr, httpAddr := r.FormValue("id"), r.FormValue("raft"), r.FormValue("http")
	if id == "" || raftAddr == "" || httpAddr == "" {
		http.Error(w, "join needs id, raft and http", http.StatusBadRequest)
		return
	}
	if err := s.node.Join(raft.ServerID(id), raft.ServerAddress(raftAddr)); err != nil {
		s.fail(w, r, err)
		return
	}
	s.write(w, r, s.node.Put([]byte(httpKeyPrefix+id), []byte(httpAddr)))
}

func (s *server) status(w http.ResponseWriter, r *http.Request) {
	rf := s.node.Raft()
	leaderAddr, leaderID := s.node.Leader()
	last, _ := s.node.Store().LastIndex()
	first, _ := s.node.Store().FirstIndex()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": s.id, "state": rf.State().String(), "term": rf.CurrentTerm(),
		"leader": string(leaderID), "leader_raft": string(leaderAddr),
		"commit_index": rf.CommitIndex(), "applied_index": s.node.FSM().AppliedIndex(),
		"first_log_index": first, "last_log_index": last,
	})
}

// fail answers an error: a redirect to the leader if this node is not it,
// 404 for a missing key, 503 while there is no leader or the leadership
// moves, 500 otherwise.
func (s *server) fail(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, kv.ErrNotFound):
		http.Error(w, "not found", http.StatusNotFound)
	case errors.Is(err, raft.ErrNotLeader):
		_, leaderID := s.node.Leader()
		if leaderID == "" {
			http.Error(w, "no leader", http.StatusServiceUnavailable)
			return
		}
		addr, gerr := s.node.Get([]byte(httpKeyPrefix+string(leaderID)), kv.Stale)
		if gerr != nil {
			http.Error(w, fmt.Sprintf("leader %s's HTTP address unknown", leaderID), http.StatusServiceUnavailable)
			return
		}
		u := url.URL{Scheme: "http", Host: string(addr), Path: r.URL.Path, RawQuery: r.URL.RawQuery}
		http.Redirect(w, r, u.String(), http.StatusTemporaryRedirect)
	case errors.Is(err, raft.ErrLeadershipLost), errors.Is(err, raft.ErrEnqueueTimeout),
		errors.Is(err, raft.ErrLeadershipTransferInProgress), errors.Is(err, raft.ErrRaftShutdown),
		errors.Is(err, context.DeadlineExceeded):
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
	case errors.Is(err, kv.ErrBadCommand):
		http.Error(w, err.Error(), http.StatusBadRequest)
	default:
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// registerSelf writes this node's HTTP address into the map once it leads
// the cluster it bootstrapped.
func (s *server) registerSelf() {
	for {
		if s.node.IsLeader() {
			if err := s.node.Put([]byte(httpKeyPrefix+s.id), []byte(s.httpAddr)); err == nil {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// joinCluster asks the member at httpAddr (or the leader it redirects to)
// to add this node, retrying for a minute while the cluster elects.
func joinCluster(member, id, raftAddr, httpAddr string) error {
	form := url.Values{"id": {id}, "raft": {raftAddr}, "http": {httpAddr}}
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := http.Post("http://"+member+"/join", "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusNoContent {
				return nil
			}
			err = fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}
