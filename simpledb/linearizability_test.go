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
	"github.com/stratadb/strata/internal/kvmodel"
	"github.com/stratadb/strata/internal/testseed"
	"github.com/stretchr/testify/require"
)

// Histories of concurrent Get, Put and Delete, recorded while flushes and
// compactions run, are linearizable: there is an order of the operations,
// consistent with their real-time order, in which every Get returns the
// latest write.
func TestLinearizability(t *testing.T) {
	t.Parallel()
	histories := 6
	if testseed.Long() {
		histories = 100
	}
	seed := testseed.Seed(t)
	total := 0
	for h := range histories {
		ops := recordHistory(t, seed+uint64(h))
		total += len(ops)
		res := porcupine.CheckOperationsTimeout(kvmodel.Model, ops, time.Minute)
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
				in := kvmodel.Input{Key: fmt.Sprintf("k%d", rng.IntN(keys))}
				var out kvmodel.Output
				call := now()
				var err error
				switch r := rng.IntN(10); {
				case r < 5:
					in.Op = kvmodel.Get
					var v []byte
					if v, err = db.Get([]byte(in.Key)); err == nil {
						out = kvmodel.Output{Value: string(v), Found: true}
					} else if errors.Is(err, ErrNotFound) {
						err = nil
					}
				case r < 8:
					in.Op, in.Value = kvmodel.Put, fmt.Sprintf("c%d-%d-%s", c, i, make([]byte, rng.IntN(3000)))
					err = db.Put([]byte(in.Key), []byte(in.Value), syncIf(rng.IntN(2) == 0))
				default:
					in.Op = kvmodel.Delete
					err = db.Delete([]byte(in.Key), DefaultSync)
				}
				ret := now()
				if err != nil {
					t.Errorf("client %d: %c %s: %v", c, in.Op, in.Key, err)
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
