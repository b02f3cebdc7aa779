package simpledb

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stratadb/strata/vfs"
	"github.com/stratadb/strata/vfs/errorfs"
	"github.com/stretchr/testify/require"
)

// slowSync is an errorfs.Injector that makes every log fsync take d, as a
// disk does, so that writers pile up behind it.
type slowSync time.Duration

func (s slowSync) MaybeError(op errorfs.Op, path string) error {
	if op == errorfs.OpSync && errorfs.Suffix(".log")(path) {
		time.Sleep(time.Duration(s))
	}
	return nil
}

// Writers that write again as soon as they are acknowledged share one
// fsync per round, not one per half of them: without the gather, the
// fsyncs run back to back and each serves the writers that came back
// during the one before, about two fsyncs per round.
func TestSyncGatherServesEveryReturningWriter(t *testing.T) {
	const writers, rounds = 8, 40
	for _, tc := range []struct {
		name     string
		wait     time.Duration
		maxSyncs int64
		minSyncs int64
	}{
		// The first writer's first write syncs alone; a few more for the
		// writers' start and end: writers that finish early do not come
		// back, and a wait in vain turns gathering off for the next 8
		// fsyncs, so the more a loaded machine (-race, 2 cores, other
		// tests) spreads the writers out, the more. The wait is long, so
		// that a writer the scheduler holds back is still waited for. At
		// most fewer than back to back ever takes.
		{name: "gathered", wait: time.Second, minSyncs: rounds, maxSyncs: rounds*3/2 - 1},
		{name: "back to back", wait: 0, minSyncs: rounds * 3 / 2, maxSyncs: writers * rounds},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := smallOptions()
			opts.FS = errorfs.Wrap(vfs.NewMem(), slowSync(2*time.Millisecond))
			db, err := Open("/db", opts)
			require.NoError(t, err)
			db.commits.gather.minWait, db.commits.gather.maxWait = tc.wait, tc.wait
			before := db.Stats().LogSyncs
			var wg sync.WaitGroup
			for w := range writers {
				wg.Go(func() {
					for r := range rounds {
						if err := db.Put(fmt.Appendf(nil, "w%d-%d", w, r), []byte("v"), DefaultSync); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			syncs := db.Stats().LogSyncs - before
			t.Logf("%d writers × %d writes took %d fsyncs", writers, rounds, syncs)
			require.GreaterOrEqual(t, syncs, tc.minSyncs)
			require.LessOrEqual(t, syncs, tc.maxSyncs, "%d writers × %d writes took %d fsyncs", writers, rounds, syncs)
			require.NoError(t, db.Close())
		})
	}
}

// A writer that does not come back holds up one fsync, by maxWait at
// most; the next gatherBackoff fsyncs do not wait.
func TestSyncGatherBacksOffAfterAWaitInVain(t *testing.T) {
	var mu sync.Mutex
	var g syncGather
	g.init(sync.NewCond(&mu))
	defer g.stop()
	g.minWait, g.maxWait = time.Hour, time.Hour
	two := []*commitWaiter{{batch: new(Batch), sync: true}, {batch: new(Batch), sync: true}}

	g.released(two)
	g.appended(1)
	require.True(t, g.wait(), "one released writer is still to come")
	g.appended(1)
	require.False(t, g.wait(), "every released writer is back")
	g.claimed()

	g.released(two)
	g.appended(1)
	g.until.Store(time.Now().UnixNano()) // the wait ran out
	require.False(t, g.wait())
	g.claimed()
	for range gatherBackoff {
		g.released(two)
		require.False(t, g.wait(), "backing off")
		g.claimed()
	}
	g.released(two)
	require.True(t, g.wait(), "the backoff is over")

	g.appended(2)
	g.claimed()
	require.Zero(t, g.skip)
	g.released([]*commitWaiter{{batch: new(Batch)}, {sync: true}})
	require.False(t, g.wait(), "unsynced writes and flush requests are not awaited")
}

// A wait lasts as long as the last fsync took, within its bounds.
func TestSyncGatherWaitsAsLongAsAnFsync(t *testing.T) {
	var mu sync.Mutex
	var g syncGather
	g.init(sync.NewCond(&mu))
	defer g.stop()
	one := []*commitWaiter{{batch: new(Batch), sync: true}}
	for _, tc := range []struct {
		lastSync, min, max time.Duration
		wait               bool
	}{
		{lastSync: time.Hour, max: 2 * time.Hour, wait: true},
		{lastSync: 0, max: time.Hour, wait: false},
		{lastSync: 0, min: time.Hour, max: time.Hour, wait: true},
		{lastSync: time.Hour, max: 0, wait: false},
	} {
		g.minWait, g.maxWait = tc.min, tc.max
		g.synced(tc.lastSync)
		g.released(one)
		require.Equal(t, tc.wait, g.wait(), "%+v", tc)
		g.appended(1)
		g.claimed()
	}
}
