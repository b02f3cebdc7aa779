// Command skiplist shows the skiplist package at work: an ordered map that
// one goroutine writes while others read it without locks. It exits with a
// non-zero status if anything it checks does not hold.
package main

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"github.com/stratadb/strata/skiplist"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "skiplist example:", err)
		os.Exit(1)
	}
}

func run() error {
	// An ordered map of fruit to stock.
	m := skiplist.NewOrdered[string, int](nil)
	for _, f := range []string{"pear", "apple", "fig", "kiwi", "banana"} {
		m.Insert(f, len(f))
	}
	m.Upsert("fig", 12)
	fmt.Printf("inserted %d fruits; in order:\n", m.Len())
	for k, v := range m.All() {
		fmt.Printf("  %-6s %2d\n", k, v)
	}
	if v, ok := m.Get("fig"); !ok || v != 12 {
		return fmt.Errorf("Get(fig) = %d, %v; want 12, true", v, ok)
	}
	fmt.Print("fruits in [b, k): ")
	for k := range m.Range("b", "k") {
		fmt.Print(k, " ")
	}
	fmt.Println()

	// One writer, three lock-free readers: each reader scans while keys
	// are being inserted and checks the scan is sorted and complete.
	const n = 50_000
	nums := skiplist.NewOrdered[int, int](&skiplist.Options{Seed: 1})
	var written atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				done := written.Load() // inserts completed before the scan
				prev, count := -1, 0
				for k := range nums.All() {
					if k <= prev {
						errs <- fmt.Errorf("scan out of order: %d after %d", k, prev)
						return
					}
					prev, count = k, count+1
				}
				if int64(count) < done {
					errs <- fmt.Errorf("scan saw %d keys, %d were written", count, done)
					return
				}
				if done == n {
					return
				}
			}
		}()
	}
	for i := range n {
		// Insert in a scrambled order: i*7919 mod n visits each key once.
		nums.Insert(i*7919%n, i)
		written.Store(int64(i + 1))
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	fmt.Printf("1 writer inserted %d keys while 3 readers scanned without locks: every scan sorted and complete\n", nums.Len())
	return nil
}
