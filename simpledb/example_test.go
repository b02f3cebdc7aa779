package simpledb_test

import (
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/stratadb/strata/simpledb"
)

func Example() {
	dir, err := os.MkdirTemp("", "simpledb-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	db, err := simpledb.Open(dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	if err := db.Put([]byte("user:1"), []byte("ada")); err != nil {
		log.Fatal(err)
	}
	b := db.NewBatch()
	b.Put([]byte("user:2"), []byte("grace"))
	b.Put([]byte("user:3"), []byte("edsger"))
	b.Delete([]byte("user:1"))
	if err := db.Write(b); err != nil { // all three, or none
		log.Fatal(err)
	}

	if _, err := db.Get([]byte("user:1")); errors.Is(err, simpledb.ErrNotFound) {
		fmt.Println("user:1 deleted")
	}
	it, err := db.NewIterator([]byte("user:"), []byte("user;"))
	if err != nil {
		log.Fatal(err)
	}
	defer it.Close()
	for k, v := range it.All() {
		fmt.Printf("%s=%s\n", k, v)
	}
	if err := it.Err(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// user:1 deleted
	// user:2=grace
	// user:3=edsger
}

func ExampleDB_NewSnapshot() {
	dir, err := os.MkdirTemp("", "simpledb-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := simpledb.Open(dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	db.Put([]byte("balance"), []byte("100"))
	snap := db.NewSnapshot()
	defer snap.Release()
	db.Put([]byte("balance"), []byte("40"))

	then, _ := snap.Get([]byte("balance"))
	now, _ := db.Get([]byte("balance"))
	fmt.Printf("then %s, now %s\n", then, now)
	// Output: then 100, now 40
}
