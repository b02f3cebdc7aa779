// Command sstables writes a table of 100,000 entries, reads some back by
// key, scans a key range, and shows what the table's metadata records.
package main

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/stratadb/strata/sstables"
)

func main() {
	dir, err := os.MkdirTemp("", "strata-sstables-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "cities.sst")

	const n = 100000
	fmt.Printf("writing %d entries (keys in order) to %s\n", n, filepath.Base(path))
	w, err := sstables.NewWriter(path, &sstables.WriterOptions{BloomBitsPerKey: 10})
	if err != nil {
		log.Fatal(err)
	}
	for i := range n {
		key := fmt.Appendf(nil, "city-%06d", i)
		value := fmt.Appendf(nil, `{"id":%d,"population":%d}`, i, i*37%100000)
		if err := w.Add(key, value); err != nil {
			log.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	r, err := sstables.Open(path, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	m := r.Metadata()
	fmt.Printf("  %d records in %d blocks, %d-byte file, %d-byte index, %d-byte filter\n",
		m.Records, m.DataBlocks, m.FileSize, r.IndexSize(), m.FilterSize)

	for _, key := range []string{"city-004242", "city-099999", "city-100000"} {
		v, err := r.Get([]byte(key))
		switch {
		case errors.Is(err, sstables.ErrNotFound):
			fmt.Printf("get %s: not found\n", key)
		case err != nil:
			log.Fatal(err)
		default:
			fmt.Printf("get %s: %s\n", key, v)
		}
	}

	it := r.NewIterator(&sstables.IterOptions{LowerBound: []byte("city-050000"), UpperBound: []byte("city-050005")})
	defer it.Close()
	fmt.Println("scan [city-050000, city-050005):")
	count := 0
	for k, v := range it.All() {
		fmt.Printf("  %s=%s\n", k, v)
		count++
	}
	if err := it.Err(); err != nil {
		log.Fatal(err)
	}
	if count != 5 {
		log.Fatalf("scanned %d entries, want 5", count)
	}
}
