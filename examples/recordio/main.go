// Command recordio writes a compressed record file, reads it back in order
// and by offset, and shows what a damaged byte looks like to a reader.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/stratadb/strata/recordio"
)

func main() {
	dir, err := os.MkdirTemp("", "strata-recordio-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "orders.rio")

	fmt.Println("writing 1000 zstd-compressed records to", filepath.Base(path))
	w, err := recordio.Create(path, &recordio.WriterOptions{Compression: recordio.ZstdCompression})
	if err != nil {
		log.Fatal(err)
	}
	offsets := make([]int64, 1000)
	var raw int
	for i := range offsets {
		rec := []byte(fmt.Sprintf(`{"order":%d,"item":"widget","qty":%d,"note":"%s"}`, i, i%7, bytes.Repeat([]byte("widget "), 50+i%50)))
		raw += len(rec)
		if offsets[i], err = w.Write(rec); err != nil {
			log.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("  %d record bytes became a %d-byte file\n", raw, info.Size())

	r, err := recordio.Open(path, &recordio.ReaderOptions{ZeroCopy: true})
	if err != nil {
		log.Fatal(err)
	}
	n := 0
	for {
		_, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		n++
	}
	r.Close()
	fmt.Printf("sequential scan: %d records\n", n)
	if n != len(offsets) {
		log.Fatalf("read %d records, wrote %d", n, len(offsets))
	}

	rr, err := recordio.OpenRandom(path, nil)
	if err != nil {
		log.Fatal(err)
	}
	rec, err := rr.RecordAt(offsets[421], nil)
	if err != nil {
		log.Fatal(err)
	}
	rr.Close()
	fmt.Printf("record at offset %d: %.60s...\n", offsets[421], rec)

	// Flip one byte inside record 500 and read again.
	data, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	data[offsets[500]+40] ^= 0x01
	if err := os.WriteFile(path, data, 0o644); err != nil {
		log.Fatal(err)
	}
	r, err = recordio.Open(path, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	for {
		_, err := r.Next()
		if errors.Is(err, recordio.ErrCorruption) {
			fmt.Println("after flipping one bit:", err)
			next, err := r.Resync()
			if err != nil {
				log.Fatal(err)
			}
			fmt.Printf("resynchronised at offset %d (record 501 starts at %d)\n", next, offsets[501])
			if next != offsets[501] {
				log.Fatal("resync landed in the wrong place")
			}
			return
		}
		if err != nil {
			log.Fatal(err)
		}
	}
}
