// Command simpledb opens a database, writes, batches, reads and scans,
// deletes a range, closes it, and shows that everything is there after
// reopening; then it checkpoints the database and opens the checkpoint
// read-only.
package main

import (
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/stratadb/strata/simpledb"
)

func main() {
	dir, err := os.MkdirTemp("", "strata-simpledb-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	db, err := simpledb.Open(dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("writing 10,000 orders, synced, in batches of 100")
	for i := 0; i < 10000; i += 100 {
		b := db.NewBatch()
		for j := i; j < i+100; j++ {
			if err := b.Put(fmt.Appendf(nil, "order:%05d", j), fmt.Appendf(nil, `{"qty":%d}`, j%9+1)); err != nil {
				log.Fatal(err)
			}
		}
		if err := db.Write(b); err != nil {
			log.Fatal(err)
		}
	}
	if err := db.Delete([]byte("order:00042")); err != nil {
		log.Fatal(err)
	}
	v, err := db.Get([]byte("order:04242"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("get order:04242 = %s\n", v)
	if _, err := db.Get([]byte("order:00042")); !errors.Is(err, simpledb.ErrNotFound) {
		log.Fatalf("deleted key: %v", err)
	}
	fmt.Println("get order:00042: deleted")

	if err := db.Flush(); err != nil {
		log.Fatal(err)
	}
	it, err := db.NewIterator([]byte("order:00040"), []byte("order:00045"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("scan [order:00040, order:00045):")
	for k, v := range it.All() {
		fmt.Printf("  %s = %s\n", k, v)
	}
	fmt.Print("the same keys backward:")
	for k := range it.Backward() {
		fmt.Printf(" %s", k)
	}
	fmt.Println()
	if err := it.Err(); err != nil {
		log.Fatal(err)
	}
	it.Close()

	// One write deletes every order from 09000 on, however many there are.
	if err := db.DeleteRange([]byte("order:09000"), nil); err != nil {
		log.Fatal(err)
	}
	if ok, err := db.Has([]byte("order:09500")); err != nil || ok {
		log.Fatalf("order:09500 after DeleteRange: %v, %v", ok, err)
	}
	fmt.Println("delete range [order:09000, end): order:09500 is gone")
	st := db.Stats()
	fmt.Printf("stats: %d writes, %d log syncs, %d flushes, L0 tables %d\n", st.Writes, st.LogSyncs, st.Flushes, st.Levels[0].Tables)
	if err := db.Close(); err != nil {
		log.Fatal(err)
	}

	db, err = simpledb.Open(dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	n := 0
	it, err = db.NewIterator(nil, nil)
	if err != nil {
		log.Fatal(err)
	}
	for range it.All() {
		n++
	}
	if err := it.Err(); err != nil {
		log.Fatal(err)
	}
	it.Close()
	fmt.Printf("after reopening: %d orders\n", n)
	if n != 8999 {
		log.Fatalf("want 8999 orders, found %d", n)
	}

	// A checkpoint is a database of its own, its tables hard-linked; a
	// tool can open it read-only, and nothing in it changes.
	ckpt := dir + "-checkpoint"
	defer os.RemoveAll(ckpt)
	if err := db.Checkpoint(ckpt); err != nil {
		log.Fatal(err)
	}
	ro, err := simpledb.Open(ckpt, &simpledb.Options{ReadOnly: true})
	if err != nil {
		log.Fatal(err)
	}
	defer ro.Close()
	v, err = ro.Get([]byte("order:04242"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("checkpoint, read-only: order:04242 = %s; a write: %v\n", v, ro.Put([]byte("k"), []byte("v")))
}
