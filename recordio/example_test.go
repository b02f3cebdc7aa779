package recordio_test

import (
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/stratadb/strata/recordio"
)

func Example() {
	dir, err := os.MkdirTemp("", "recordio-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "events.rio")

	w, err := recordio.Create(path, &recordio.WriterOptions{Compression: recordio.SnappyCompression})
	if err != nil {
		log.Fatal(err)
	}
	for _, event := range []string{"created", "updated", "deleted"} {
		if _, err := w.Write([]byte(event)); err != nil {
			log.Fatal(err)
		}
	}
	if err := w.Close(); err != nil { // Close flushes and syncs.
		log.Fatal(err)
	}

	r, err := recordio.Open(path, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%d: %s\n", r.Offset(), rec)
	}
	// Output:
	// 8: created
	// 29: updated
	// 50: deleted
}

func ExampleRandomReader() {
	dir, err := os.MkdirTemp("", "recordio-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "blobs.rio")

	w, err := recordio.Create(path, &recordio.WriterOptions{Compression: recordio.ZstdCompression})
	if err != nil {
		log.Fatal(err)
	}
	offsets := map[string]int64{}
	for _, name := range []string{"alpha", "beta", "gamma"} {
		off, err := w.WriteSync([]byte("blob " + name)) // durable on return
		if err != nil {
			log.Fatal(err)
		}
		offsets[name] = off
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	rr, err := recordio.OpenRandom(path, nil) // safe for concurrent use
	if err != nil {
		log.Fatal(err)
	}
	defer rr.Close()
	rec, err := rr.RecordAt(offsets["beta"], nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(rec))
	// Output: blob beta
}

func ExampleReader_Resync() {
	dir, err := os.MkdirTemp("", "recordio-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "log.rio")

	w, err := recordio.Create(path, nil)
	if err != nil {
		log.Fatal(err)
	}
	var offsets []int64
	for _, s := range []string{"one", "two", "three"} {
		off, err := w.Write([]byte(s))
		if err != nil {
			log.Fatal(err)
		}
		offsets = append(offsets, off)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	// Damage the second record's payload.
	data, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	data[offsets[2]-1] ^= 0xFF
	if err := os.WriteFile(path, data, 0o644); err != nil {
		log.Fatal(err)
	}

	r, err := recordio.Open(path, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, recordio.ErrCorruption) {
			fmt.Println("damaged:", errors.Is(err, recordio.ErrPayloadChecksum))
			if _, err := r.Resync(); errors.Is(err, io.EOF) {
				break
			}
			continue
		}
		fmt.Println("record:", string(rec))
	}
	// Output:
	// record: one
	// damaged: true
	// record: three
}
