package simpledb

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/testseed"
	"github.com/stretchr/testify/require"
)

// killCycles sets how many times TestProcessKill kills its child: a few in
// `make test`, 200 under `make crash`.
var killCycles = flag.Int("kill-cycles", 4, "kill-and-recover cycles of TestProcessKill")

// killBatch is batch i of the kill workload, the same in parent and child.
func killBatch(i int) workloadOp {
	rng := rand.New(rand.NewPCG(uint64(i), 0x6b696c6c))
	op := workloadOp{puts: map[string]string{}}
	for j := range 1 + rng.IntN(8) {
		k := fmt.Sprintf("key-%03d", rng.IntN(500))
		if rng.IntN(5) == 0 {
			op.deletes = append(op.deletes, k)
			delete(op.puts, k)
		} else {
			op.puts[k] = fmt.Sprintf("b%d.%d-%s", i, j, strings.Repeat("x", rng.IntN(300)))
			op.deletes = slices.DeleteFunc(op.deletes, func(d string) bool { return d == k })
		}
	}
	return op
}

func killOptions() *Options {
	o := smallOptions()
	o.MemstoreSize = MinMemstoreSize
	o.Logger = quietLogger
	return o
}

// TestKillChild is the child of TestProcessKill: it writes batches from
// STRATA_KILL_START on, synced unless STRATA_KILL_UNSYNCED is set, printing
// "ack N" after each one returns, until it is killed.
func TestKillChild(t *testing.T) {
	dir := os.Getenv("STRATA_KILL_DIR")
	if dir == "" {
		t.Skip("run by TestProcessKill")
	}
	start, err := strconv.Atoi(os.Getenv("STRATA_KILL_START"))
	require.NoError(t, err)
	db, err := Open(dir, killOptions())
	if err != nil {
		fmt.Printf("open failed: %v\n", err)
		os.Exit(2)
	}
	sync := os.Getenv("STRATA_KILL_UNSYNCED") == ""
	for i := start; ; i++ {
		op := killBatch(i)
		b := db.NewBatch()
		op.write(b)
		if err := db.Write(b, syncIf(sync)); err != nil {
			fmt.Printf("write failed: %v\n", err)
			os.Exit(2)
		}
		fmt.Printf("ack %d\n", i)
	}
}

// TestProcessKill starts a child process that writes batches and kills it
// with SIGKILL at a random moment (mid-write, mid-flush, mid-compaction),
// then reopens the database and checks it holds exactly every acknowledged
// batch and at most the one in flight, whole or not at all. The next child
// goes on writing to the same database. Unsynced writes too must survive:
// the process died, not the machine.
func TestProcessKill(t *testing.T) {
	t.Parallel()
	if os.Getenv("STRATA_KILL_DIR") != "" {
		t.Skip("in the child")
	}
	t.Run("synced", func(t *testing.T) { processKill(t, true) })
	t.Run("unsynced", func(t *testing.T) { processKill(t, false) })
}

func processKill(t *testing.T, synced bool) {
	seed := testseed.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 0))
	dir := t.TempDir()
	state := model{} // after batches [0, next)
	next, acks := 0, 0
	var acked atomic.Int64 // batches [0, acked) were acknowledged, across cycles
	var follower *killFollower
	defer func() {
		if follower != nil {
			follower.stop(t)
		}
	}()
	for cycle := range *killCycles {
		if cycle == 1 { // once the database exists
			follower = followKills(dir, &acked)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestKillChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), "STRATA_KILL_DIR="+dir, "STRATA_KILL_START="+strconv.Itoa(next))
		if !synced {
			cmd.Env = append(cmd.Env, "STRATA_KILL_UNSYNCED=1")
		}
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		var lastAck atomic.Int64
		lastAck.Store(int64(next) - 1)
		lines := make(chan string, 1)
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if n, ok := strings.CutPrefix(sc.Text(), "ack "); ok {
					i, _ := strconv.Atoi(n)
					lastAck.Store(int64(i))
					acked.Store(int64(i) + 1)
				} else {
					lines <- sc.Text()
					return
				}
			}
			close(lines)
		}()
		time.Sleep(time.Duration(20+rng.IntN(300)) * time.Millisecond)
		require.NoError(t, cmd.Process.Kill())
		// Every ack the child printed is read before Wait closes the pipe:
		// the reader ends at the pipe's end, which the kill brings.
		line, said := <-lines
		cmd.Wait()
		if said {
			t.Fatalf("cycle %d: the child said %q", cycle, line)
		}
		acked := int(lastAck.Load()) + 1 // batches [0, acked) were acknowledged
		acks += acked - next

		db, err := Open(dir, killOptions())
		require.NoError(t, err, "cycle %d: reopen after SIGKILL", cycle)
		got := readAll(t, db)
		require.NoError(t, db.Close())
		for ; next < acked; next++ {
			killBatch(next).apply(state)
		}
		if !maps.Equal(got, state) {
			// The batch in flight may have landed, whole.
			inflight := maps.Clone(state)
			killBatch(next).apply(inflight)
			require.True(t, maps.Equal(got, inflight), "seed %d cycle %d: the database after SIGKILL is not the state after batch %d or %d", seed, cycle, acked-1, acked)
			state = inflight
			next++
		}
	}
	t.Logf("%d kill cycles, %d acknowledged batches (synced: %v), none lost", *killCycles, acks, synced)
}

// killFollower follows the database TestProcessKill's children write and
// its reopens recover, as a tool would beside them: every view a catch-up
// installs is the state after a prefix of the kill batches, at least those
// acknowledged before it began and no older than the view before it, and
// neither a catch-up nor a Verify of the running database ever reports
// damage (the reopens prove there is none).
type killFollower struct {
	done                      chan struct{}
	stopped                   atomic.Bool
	views, verifies, outpaced int
	err                       error
}

func followKills(dir string, acked *atomic.Int64) *killFollower {
	f := &killFollower{done: make(chan struct{})}
	go func() {
		defer close(f.done)
		f.err = f.run(dir, acked)
	}()
	return f
}

func (f *killFollower) stop(t *testing.T) {
	f.stopped.Store(true)
	<-f.done
	require.NoError(t, f.err)
	t.Logf("the follower checked %d views and %d Verify reports of the running database (%d catch-ups outpaced)", f.views, f.verifies, f.outpaced)
}

func (f *killFollower) run(dir string, acked *atomic.Int64) error {
	o := killOptions()
	o.Follow = true
	db, err := Open(dir, o)
	if err != nil {
		return fmt.Errorf("follower open: %w", err)
	}
	defer db.Close()
	view, state := 0, model{} // the last view: the state after batches [0, view)
	for i := 0; !f.stopped.Load(); i++ {
		floor := int(acked.Load())
		if err := db.CatchUp(); errors.Is(err, ErrOutpaced) {
			f.outpaced++
			continue
		} else if err != nil {
			return fmt.Errorf("catch-up %d: %w", i, err)
		}
		got, err := scanAll(db)
		if err != nil {
			return fmt.Errorf("catch-up %d: scan: %w", i, err)
		}
		limit := int(acked.Load()) + 10000 // the children write ahead of the acks read
		for !maps.Equal(got, state) && view < limit {
			killBatch(view).apply(state)
			view++
		}
		if !maps.Equal(got, state) {
			return fmt.Errorf("catch-up %d: the view is no state after %d batches or more", i, floor)
		}
		// A batch that changes nothing (deletes of absent keys) leaves the
		// same state: the view may be after it too.
		for view < floor {
			after := maps.Clone(state)
			killBatch(view).apply(after)
			if !maps.Equal(after, state) {
				break
			}
			view++
		}
		if view < floor {
			return fmt.Errorf("catch-up %d: the view holds %d batches, %d were acknowledged before it", i, view, floor)
		}
		f.views++
		if i%4 == 0 {
			report, err := Verify(dir, o, nil)
			switch {
			case errors.Is(err, ErrOutpaced):
				f.outpaced++
			case err != nil:
				return fmt.Errorf("verify: %w", err)
			case len(report.Damage) > 0:
				return fmt.Errorf("verify of the running database: %v", report.Damage)
			default:
				f.verifies++
			}
		}
	}
	return nil
}
