// Command memstore shows the memstore at work: multi-version writes,
// snapshot reads, a flush-style scan of every version, readers running
// alongside a writer, and the memory it accounts for. It exits with a
// non-zero status if anything it checks does not hold.
package main

import (
	"fmt"
	"os"
	"strconv"
	"sync"

	"github.com/stratadb/strata/memstore"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "memstore example:", err)
		os.Exit(1)
	}
}

func run() error {
	m := memstore.New(nil)
	put := func(k, v string) error { return m.Put([]byte(k), []byte(v)) }

	// Three versions of one key, a tombstone, and a snapshot in between.
	for _, kv := range [][2]string{{"city", "Lisbon"}, {"lang", "Go"}, {"city", "Porto"}} {
		if err := put(kv[0], kv[1]); err != nil {
			return err
		}
	}
	snapshot := m.LastSeq()
	if err := put("city", "Braga"); err != nil {
		return err
	}
	if err := m.Delete([]byte("lang")); err != nil {
		return err
	}
	fmt.Printf("wrote %d entries, last sequence number %d\n", m.Len(), m.LastSeq())

	city, res := m.Get([]byte("city"))
	fmt.Printf("city now: %s (%v); ", city, res)
	if string(city) != "Braga" {
		return fmt.Errorf("Get(city) = %q, want Braga", city)
	}
	old, _ := m.GetAt([]byte("city"), snapshot)
	fmt.Printf("city at snapshot %d: %s\n", snapshot, old)
	if string(old) != "Porto" {
		return fmt.Errorf("GetAt(city, %d) = %q, want Porto", snapshot, old)
	}
	if _, res := m.Get([]byte("lang")); res != memstore.Deleted {
		return fmt.Errorf("Get(lang) = %v, want deleted", res)
	}

	fmt.Println("every version, as a flush sees them:")
	it := m.NewEntryIterator(nil)
	for ok := it.First(); ok; ok = it.Next() {
		fmt.Printf("  %-5s seq=%d %-6v %q\n", it.Key(), it.Seq(), it.Kind(), it.Value())
	}
	if err := it.Close(); err != nil {
		return err
	}

	// Readers scan a snapshot while a writer keeps writing: each scan
	// shows its snapshot exactly, whatever lands meanwhile.
	const keys, rounds = 1000, 20
	for i := range keys {
		if err := m.Put(fmt.Appendf(nil, "n%04d", i), []byte("0")); err != nil {
			return err
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for r := 1; r <= rounds; r++ {
			for i := range keys {
				if err := m.Put(fmt.Appendf(nil, "n%04d", i), fmt.Appendf(nil, "%d", r)); err != nil {
					errs <- err
					return
				}
			}
		}
	}()
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				// At any snapshot, the n-keys hold round r for a prefix of
				// the keys and round r-1 after it: never anything else.
				it := m.NewIterator(&memstore.IterOptions{LowerBound: []byte("n"), UpperBound: []byte("o")})
				var values [][]byte
				for ok := it.First(); ok; ok = it.Next() {
					values = append(values, it.Value())
				}
				it.Close()
				if err := checkRounds(values, keys); err != nil {
					select {
					case errs <- err:
					default:
					}
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	fmt.Printf("3 readers scanned snapshots while a writer made %d more writes: every snapshot consistent\n", keys*rounds)

	var keyValueBytes int64
	for k, v := range m.All() {
		keyValueBytes += int64(len(k) + len(v))
	}
	fmt.Printf("%d entries hold %d bytes of memory (SizeBytes); the live keys and values are %d bytes\n",
		m.Len(), m.SizeBytes(), keyValueBytes)
	return nil
}

// checkRounds checks that values holds want values: a run of some round r
// followed by a run of round r-1.
func checkRounds(values [][]byte, want int) error {
	if len(values) != want {
		return fmt.Errorf("a scan saw %d keys, want %d", len(values), want)
	}
	first := string(values[0])
	r, err := strconv.Atoi(first)
	if err != nil {
		return fmt.Errorf("a scan saw value %q", first)
	}
	previous := strconv.Itoa(r - 1)
	i := 0
	for i < len(values) && string(values[i]) == first {
		i++
	}
	for _, v := range values[i:] {
		if string(v) != previous {
			return fmt.Errorf("a scan saw %q after round %s: want only round %s", v, first, previous)
		}
	}
	return nil
}
