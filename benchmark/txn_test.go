package benchmark

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/simpledb"
)

// BenchmarkSimpleDBTxnWideReadSet commits a transaction that read much
// after many writes came since its snapshot, while another goroutine
// writes: what one commit's conflict check costs, and what it costs the
// writers queued behind it. One op is one such commit.
//
//   - iterators: the transaction opens and closes 5,000 prefix iterators,
//     over distinct prefixes, and writes one key, after 100,000 Puts of
//     keys outside them; it commits.
//   - reads: the transaction gets 20,000 keys and writes one, after 5,000
//     range deletions beside them; it commits.
//   - conflict: as iterators, with a Put inside the last prefix among
//     the 100,000; ErrConflict.
//
// One op is the whole scenario, reads and writes included, so that b.N
// stays small: the figures are the metrics. commit-ms is the longest
// Commit; put-max-ms the longest Put of the other goroutine, which writes
// from just before the Commit until it returns: a Put waits for the
// commit pipeline, and for the oracle's lock, while a commit's check holds
// them.
func BenchmarkSimpleDBTxnWideReadSet(b *testing.B) {
	const prefixes, writes, reads, rangeDels = 5000, 100_000, 20_000, 5000
	prefix := func(i int) []byte { return fmt.Appendf(nil, "p%05d/", i) }
	for _, tc := range []struct {
		name     string
		read     func(tx *simpledb.Txn) error
		write    func(db *simpledb.DB, i int) error // the writes since the snapshot
		n        int
		conflict bool
	}{
		{"iterators", func(tx *simpledb.Txn) error {
			for i := range prefixes {
				it, err := tx.NewPrefixIterator(prefix(i))
				if err != nil {
					return err
				}
				it.First()
				if err := it.Close(); err != nil {
					return err
				}
			}
			return nil
		}, func(db *simpledb.DB, i int) error {
			return db.Put(fmt.Appendf(nil, "w%07d", i), []byte("v"), simpledb.NoSync)
		}, writes, false},
		{"reads", func(tx *simpledb.Txn) error {
			for i := range reads {
				if _, err := tx.Get(fmt.Appendf(nil, "r%07d", i*2)); err != nil && !errors.Is(err, simpledb.ErrNotFound) {
					return err
				}
			}
			return nil
		}, func(db *simpledb.DB, i int) error {
			k := fmt.Appendf(nil, "r%07d", (reads+i)*2) // beside the reads, none in them
			return db.DeleteRange(k, append(k, 0), simpledb.NoSync)
		}, rangeDels, false},
		{"conflict", func(tx *simpledb.Txn) error {
			for i := range prefixes {
				it, err := tx.NewPrefixIterator(prefix(i))
				if err != nil {
					return err
				}
				if err := it.Close(); err != nil {
					return err
				}
			}
			return nil
		}, func(db *simpledb.DB, i int) error {
			k := fmt.Appendf(nil, "w%07d", i)
			if i == writes-1 {
				k = append(prefix(prefixes-1), 'x')
			}
			return db.Put(k, []byte("v"), simpledb.NoSync)
		}, writes, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			db := openDB(b, benchDir(b), &simpledb.Options{NoSync: true})
			defer closeUntimed(b, db)
			var commitTime, putMax time.Duration
			b.ResetTimer()
			for range b.N {
				tx, err := db.NewTxn(true)
				if err != nil {
					b.Fatal(err)
				}
				if err := tc.read(tx); err != nil {
					b.Fatal(err)
				}
				if err := tx.Put([]byte("txn"), []byte("v")); err != nil {
					b.Fatal(err)
				}
				for i := range tc.n {
					if err := tc.write(db, i); err != nil {
						b.Fatal(err)
					}
				}
				var stop atomic.Bool
				var wg sync.WaitGroup
				var longest time.Duration
				started := make(chan struct{})
				wg.Go(func() {
					for i := 0; !stop.Load(); i++ {
						t0 := time.Now()
						if err := db.Put(fmt.Appendf(nil, "o%07d", i), []byte("v"), simpledb.NoSync); err != nil {
							b.Error(err)
							return
						}
						longest = max(longest, time.Since(t0))
						if i == 0 {
							close(started)
						}
					}
				})
				<-started
				t0 := time.Now()
				err = tx.Commit(simpledb.NoSync)
				took := time.Since(t0)
				stop.Store(true)
				wg.Wait()
				if tc.conflict != errors.Is(err, simpledb.ErrConflict) || (!tc.conflict && err != nil) {
					b.Fatalf("commit: %v, want a conflict: %v", err, tc.conflict)
				}
				commitTime = max(commitTime, took)
				putMax = max(putMax, longest)
			}
			b.ReportMetric(float64(commitTime.Microseconds())/1e3, "commit-ms")
			b.ReportMetric(float64(putMax.Microseconds())/1e3, "put-max-ms")
		})
	}
}
