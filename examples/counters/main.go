// Command counters shows concurrent writers and readers on one database:
// eight goroutines each count events under keys of their own, every event
// a batch that adds the event and moves the writer's counter on, while a
// reader takes snapshots and checks that each writer's counter equals the
// events it sees beside it: a batch is seen whole or not at all, and a
// snapshot is one moment, however the writers, flushes and compactions
// move on underneath.
//
//	go run ./examples/counters
package main

import (
	"encoding/binary"
	"fmt"
	"log"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratadb/strata/simpledb"
)

const (
	writers = 8
	events  = 4000 // per writer
)

func main() {
	dir, err := os.MkdirTemp("", "strata-counters-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	// Unsynced, small memstores: many flushes and compactions meanwhile.
	db, err := simpledb.Open(dir, &simpledb.Options{NoSync: true, MemstoreSize: simpledb.MinMemstoreSize})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	start := time.Now()
	var wg sync.WaitGroup
	var done atomic.Bool
	for w := range writers {
		wg.Go(func() {
			for i := range events {
				b := db.NewBatch()
				b.Put(fmt.Appendf(nil, "w%d/event/%06d", w, i), fmt.Appendf(nil, "payload of event %d", i))
				b.Put(fmt.Appendf(nil, "w%d/count", w), binary.BigEndian.AppendUint64(nil, uint64(i+1)))
				if err := db.Write(b, simpledb.DefaultSync); err != nil {
					log.Fatal(err)
				}
			}
		})
	}
	checks := make(chan int)
	go func() {
		n := 0
		for !done.Load() {
			if err := check(db); err != nil {
				log.Fatal(err)
			}
			n++
		}
		checks <- n
	}()
	wg.Wait()
	done.Store(true)
	n := <-checks
	if err := check(db); err != nil {
		log.Fatal(err)
	}
	st := db.Stats()
	fmt.Printf("%d writers wrote %d events in %v; %d snapshots checked meanwhile, every counter matching its events\n",
		writers, writers*events, time.Since(start).Round(time.Millisecond), n)
	fmt.Printf("meanwhile: %d flushes, %d compactions, %d tables moved down\n", st.Flushes, st.Compactions, st.TrivialMoves)
}

// check reads one snapshot and checks that each writer's counter equals
// the number of its events, which must be 0 to counter-1 without a gap.
func check(db *simpledb.DB) error {
	it, err := db.NewIterator(nil, nil)
	if err != nil {
		return err
	}
	defer it.Close()
	for w := range writers {
		prefix := fmt.Appendf(nil, "w%d/", w)
		var count, seen uint64
		for k, v := range it.AllFrom(prefix) {
			if len(k) < len(prefix) || string(k[:len(prefix)]) != string(prefix) {
				break
			}
			if string(k) == string(prefix)+"count" {
				count = binary.BigEndian.Uint64(v)
				continue
			}
			if want := fmt.Sprintf("%sevent/%06d", prefix, seen); string(k) != want {
				return fmt.Errorf("writer %d: %s where %s should be", w, k, want)
			}
			seen++
		}
		if count != seen {
			return fmt.Errorf("writer %d: the counter says %d, the snapshot holds %d events", w, count, seen)
		}
	}
	return it.Err()
}
