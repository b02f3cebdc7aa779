// Package testseed gives randomised tests a seed they print when they fail,
// so that any failure can be replayed: run the test again with -seed=N;
// and their length: a few seconds in make test, much longer with -long
// (make stress).
//
//	func TestModel(t *testing.T) {
//		rng := rand.New(rand.NewPCG(testseed.Seed(t), 0))
//		...
//	}
//
// Without -seed, each run draws a fresh seed from the clock, so repeated
// runs explore new cases.
package testseed

import (
	"flag"
	"testing"
	"time"
)

var (
	seedFlag = flag.Uint64("seed", 0, "seed for randomised tests (0: draw one from the clock)")
	longFlag = flag.Bool("long", false, "run randomised tests at stress length (make stress)")
)

// Long reports whether randomised tests run at stress length (-long).
func Long() bool { return *longFlag }

// Seed returns the seed for a randomised test: the -seed flag, or a seed
// drawn from the clock when the flag is 0. If the test fails, the seed is
// logged with the flag that replays it.
func Seed(tb testing.TB) uint64 {
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	tb.Cleanup(func() {
		if tb.Failed() {
			tb.Logf("random seed %d: replay with -seed=%d", seed, seed)
		}
	})
	return seed
}
