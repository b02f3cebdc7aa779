package simpledb

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stratadb/strata/internal/testseed"
	"github.com/stretchr/testify/require"
)

// Operations on a key: the model of each key is a register, absent or
// holding a value.
type lzInput struct {
	op    byte // 'g'et, 'p'ut, 'd'elete
	key   string
	value string
}

type lzOutput struct {
	value string
	found bool
}

type lzState struct {
	value string
	found bool
}

var kvModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		for _, op := range history {
			k := op.Input.(lzInput).key
			byKey[k] = append(byKey[k], op)
		}
		var out [][]porcupine.Operation
		for _, ops := range byKey {
			out = append(out, ops)
		}
		return out
	},
	Init: func() any { return lzState{} },
	Step: func(state, input, output any) (bool, any) {
		s, in, out := state.(lzState), input.(lzInput), output.(lzOutput)
		switch in.op {
		case 'g':
			return out.found == s.found && out.value == s.value, s
		case 'p':
			return true, lzState{value: in.value, found: true}
		default:
			return true, lzState{}
		}
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(lzInput), output.(lzOutput)
		return fmt.Sprintf("%c %s %s -> %v %s", in.op, in.key, in.value, out.found, out.value)
	},
}

// Histories of concurrent Get, Put and Delete, recorded while flushes and
// compactions run, are linearizable: there is an order of the operations,
// consistent with their real-time order, in which every Get returns the
// latest write.
func TestLinearizability(t *testing.T) {
	histories := 6
	if *long {
		histories = 100
	}
	seed := testseed.Seed(t)
	total := 0
	for h := range histories {
		ops := recordHistory(t, seed+uint64(h))
		total += len(ops)
		res := porcupine.CheckOperationsTimeout(kvModel, ops, time.Minute)
		require.Equal(t, porcupine.Ok, res, "seed %d history %d is not linearizable (or the check timed out)", seed, h)
	}
	t.Logf("%d histories, %d operations, linearizable", histories, total)
}

func recordHistory(t *testing.T, seed uint64) []porcupine.Operation {
	opts := smallOptions()
	opts.MemstoreSize = MinMemstoreSize
	opts.Logger = quietLogger
	db, err := Open(t.TempDir(), opts)
	require.NoError(t, err)
	defer db.Close()

	const clients, perClient, keys = 8, 150, 6
	start := time.Now()
	now := func() int64 { return int64(time.Since(start)) }
	var mu sync.Mutex
	var history []porcupine.Operation
	var stop atomic.Bool
	var bg sync.WaitGroup
	bg.Go(func() {
		for !stop.Load() {
			if err := db.Flush(); err != nil {
				t.Errorf("flush: %v", err)
				return
			}
			if err := db.Compact(); err != nil {
				t.Errorf("compact: %v", err)
				return
			}
			time.Sleep(time.Millisecond)
		}
	})
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(c)))
			for i := range perClient {
				in := lzInput{key: fmt.Sprintf("k%d", rng.IntN(keys))}
				var out lzOutput
				call := now()
				var err error
				switch r := rng.IntN(10); {
				case r < 5:
					in.op = 'g'
					var v []byte
					if v, err = db.Get([]byte(in.key)); err == nil {
						out = lzOutput{value: string(v), found: true}
					} else if errors.Is(err, ErrNotFound) {
						err = nil
					}
				case r < 8:
					in.op, in.value = 'p', fmt.Sprintf("c%d-%d-%s", c, i, make([]byte, rng.IntN(3000)))
					err = db.WriteWithOptions(batchOf([]byte(in.key), []byte(in.value)), &WriteOptions{Sync: rng.IntN(2) == 0})
				default:
					in.op = 'd'
					err = db.Delete([]byte(in.key))
				}
				ret := now()
				if err != nil {
					t.Errorf("client %d: %c %s: %v", c, in.op, in.key, err)
					return
				}
				mu.Lock()
				history = append(history, porcupine.Operation{ClientId: c, Input: in, Call: call, Output: out, Return: ret})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	stop.Store(true)
	bg.Wait()
	return history
}
