package simpledb_test

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strconv"

	"github.com/stratadb/strata/simpledb"
	"github.com/stratadb/strata/sstables"
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

	if err := db.Put([]byte("user:1"), []byte("ada"), simpledb.DefaultSync); err != nil {
		log.Fatal(err)
	}
	b := db.NewBatch()
	b.Put([]byte("user:2"), []byte("grace"))
	b.Put([]byte("user:3"), []byte("edsger"))
	b.Delete([]byte("user:1"))
	if err := db.Write(b, simpledb.DefaultSync); err != nil { // all three, or none
		log.Fatal(err)
	}

	if _, err := db.Get([]byte("user:1")); errors.Is(err, simpledb.ErrNotFound) {
		fmt.Println("user:1 deleted")
	}
	it, err := db.NewPrefixIterator([]byte("user:")) // or NewIterator(lower, upper)
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

func ExamplePrefixUpperBound() {
	for _, prefix := range []string{"user:", "a\xff", "\xff", ""} {
		if upper := simpledb.PrefixUpperBound([]byte(prefix)); upper != nil {
			fmt.Printf("%q: keys before %q\n", prefix, upper)
		} else {
			fmt.Printf("%q: nil, no upper bound\n", prefix)
		}
	}
	// Output:
	// "user:": keys before "user;"
	// "a\xff": keys before "b"
	// "\xff": nil, no upper bound
	// "": nil, no upper bound
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

	db.Put([]byte("balance"), []byte("100"), simpledb.DefaultSync)
	snap := db.NewSnapshot()
	defer snap.Release()
	db.Put([]byte("balance"), []byte("40"), simpledb.DefaultSync)

	then, _ := snap.Get([]byte("balance"))
	now, _ := db.Get([]byte("balance"))
	fmt.Printf("then %s, now %s\n", then, now)
	// Output: then 100, now 40
}

func ExampleIterator_Backward() {
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
	for _, k := range []string{"log:001", "log:002", "log:003", "log:004"} {
		if err := db.Put([]byte(k), []byte("entry "+k[4:]), simpledb.DefaultSync); err != nil {
			log.Fatal(err)
		}
	}

	// The newest two log entries: the last keys first.
	it, err := db.NewIterator([]byte("log:"), []byte("log;"))
	if err != nil {
		log.Fatal(err)
	}
	defer it.Close()
	n := 0
	for k, v := range it.Backward() {
		fmt.Printf("%s=%s\n", k, v)
		if n++; n == 2 {
			break
		}
	}
	if err := it.Err(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// log:004=entry 004
	// log:003=entry 003
}

func ExampleIterator_SeekLT() {
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
	for _, k := range []string{"a", "c", "e", "g"} {
		if err := db.Put([]byte(k), nil, simpledb.DefaultSync); err != nil {
			log.Fatal(err)
		}
	}
	it, err := db.NewIterator(nil, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer it.Close()

	// The last key before "f", then a step back, and forward again.
	it.SeekLT([]byte("f"))
	fmt.Printf("%s", it.Key())
	it.Prev()
	fmt.Printf(" %s", it.Key())
	it.Next()
	fmt.Printf(" %s\n", it.Key())

	// A range from a key in one call, either way: AllFrom(k) and
	// BackwardBefore(k) split the keys at k.
	var from, before []string
	for k := range it.AllFrom([]byte("d")) {
		from = append(from, string(k))
	}
	for k := range it.BackwardBefore([]byte("d")) {
		before = append(before, string(k))
	}
	fmt.Println(from, before)
	// Output:
	// e c e
	// [e g] [c a]
}

func ExampleWriteOptions() {
	dir, err := os.MkdirTemp("", "simpledb-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	// Unsynced by default: a bulk load that a crash may cut short.
	db, err := simpledb.Open(dir, &simpledb.Options{NoSync: true})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	if err := db.Put([]byte("order:16"), []byte("sent"), simpledb.DefaultSync); err != nil {
		log.Fatal(err)
	}
	fmt.Println("fsyncs:", db.Stats().LogSyncs)
	// This one must survive a power loss once it returns.
	if err := db.Put([]byte("order:17"), []byte("paid"), simpledb.Sync); err != nil {
		log.Fatal(err)
	}
	fmt.Println("fsyncs:", db.Stats().LogSyncs)
	// Output:
	// fsyncs: 0
	// fsyncs: 1
}

func ExampleDB_AppendValue() {
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
	db.Put([]byte("user:1"), []byte("ada"), simpledb.DefaultSync)
	db.Put([]byte("user:2"), []byte("grace"), simpledb.DefaultSync)

	// One buffer serves every read: once it has room, reads allocate nothing.
	var buf []byte
	for _, key := range []string{"user:1", "user:2"} {
		buf, err = db.AppendValue(buf[:0], []byte(key))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s=%s\n", key, buf)
	}
	ok, err := db.Has([]byte("user:3"))
	fmt.Println(ok, err)
	// Output:
	// user:1=ada
	// user:2=grace
	// false <nil>
}

func ExampleOptions_comparator() {
	dir, err := os.MkdirTemp("", "simpledb-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	// Decimal numbers by value: a shorter number is smaller. The name is
	// recorded, and the database never opens in another order.
	numeric := &sstables.Comparator{
		Name: "example.numeric",
		Compare: func(a, b []byte) int {
			if len(a) != len(b) {
				return cmp.Compare(len(a), len(b))
			}
			return bytes.Compare(a, b)
		},
	}
	db, err := simpledb.Open(dir, &simpledb.Options{Comparator: numeric})
	if err != nil {
		log.Fatal(err)
	}
	for _, k := range []string{"100", "9", "20"} {
		db.Put([]byte(k), nil, simpledb.DefaultSync)
	}
	it, _ := db.NewIterator(nil, nil)
	for k := range it.All() {
		fmt.Print(string(k), " ")
	}
	it.Close()
	db.Close()

	_, err = simpledb.Open(dir, nil)
	fmt.Println(errors.Is(err, simpledb.ErrComparatorMismatch))
	// Output: 9 20 100 true
}

func ExampleOptions_readOnly() {
	dir, err := os.MkdirTemp("", "simpledb-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := simpledb.Open(dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	db.Put([]byte("config"), []byte("v1"), simpledb.DefaultSync)
	db.Close()

	// A tool inspects the database without changing a byte of it.
	ro, err := simpledb.Open(dir, &simpledb.Options{ReadOnly: true})
	if err != nil {
		log.Fatal(err)
	}
	defer ro.Close()
	v, _ := ro.Get([]byte("config"))
	err = ro.Put([]byte("config"), []byte("v2"), simpledb.DefaultSync)
	fmt.Println(string(v), errors.Is(err, simpledb.ErrReadOnly))
	// Output: v1 true
}

func ExampleDB_Checkpoint() {
	dir, err := os.MkdirTemp("", "simpledb-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := simpledb.Open(filepath.Join(dir, "db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	db.Put([]byte("balance"), []byte("100"), simpledb.DefaultSync)

	// A backup while writes go on: tables are hard-linked, so it is cheap.
	backup := filepath.Join(dir, "backups", "monday")
	if err := db.Checkpoint(backup); err != nil {
		log.Fatal(err)
	}
	db.Put([]byte("balance"), []byte("40"), simpledb.DefaultSync)

	restored, err := simpledb.Open(backup, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer restored.Close()
	then, _ := restored.Get([]byte("balance"))
	now, _ := db.Get([]byte("balance"))
	fmt.Printf("backup %s, live %s\n", then, now)
	// Output: backup 100, live 40
}

// A database with many tables holds at most MaxOpenFiles of them open;
// reads reopen the others as they need them.
func ExampleOptions_maxOpenFiles() {
	dir, err := os.MkdirTemp("", "simpledb-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	opts := &simpledb.Options{
		MaxOpenFiles:          simpledb.MinMaxOpenFiles, // 64
		TargetTableSize:       4 << 10,                  // tiny tables, to make many
		DisableAutoCompaction: true,
	}
	db, err := simpledb.Open(dir, opts)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	b := db.NewBatch()
	for i := range 20000 {
		b.Put(fmt.Appendf(nil, "key%05d", i), fmt.Appendf(nil, "value %d of many, spelled out at length", i))
	}
	if err := db.Write(b, simpledb.DefaultSync); err != nil {
		log.Fatal(err)
	}
	if err := db.Compact(); err != nil {
		log.Fatal(err)
	}
	for i := range 20000 {
		if _, err := db.Get(fmt.Appendf(nil, "key%05d", i)); err != nil {
			log.Fatal(err)
		}
	}
	st := db.Stats()
	fmt.Println("more tables than files open:", st.Levels[1].Tables > opts.MaxOpenFiles)
	fmt.Println("files open within the bound:", st.OpenTables <= opts.MaxOpenFiles)
	// Output:
	// more tables than files open: true
	// files open within the bound: true
}

func ExampleDB_DeleteRange() {
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

	for _, k := range []string{"log:001", "log:002", "log:003", "user:1"} {
		if err := db.Put([]byte(k), []byte("..."), simpledb.DefaultSync); err != nil {
			log.Fatal(err)
		}
	}
	// One write deletes every key from "log:" up to "log;": a range
	// tombstone, whatever the number of keys it covers.
	if err := db.DeleteRange([]byte("log:"), []byte("log;"), simpledb.DefaultSync); err != nil {
		log.Fatal(err)
	}
	if _, err := db.Get([]byte("log:002")); errors.Is(err, simpledb.ErrNotFound) {
		fmt.Println("log:002 deleted")
	}
	it, err := db.NewIterator(nil, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer it.Close()
	for k := range it.All() {
		fmt.Printf("%s\n", k)
	}
	if err := it.Err(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// log:002 deleted
	// user:1
}

func ExampleDB_NewSequence() {
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

	// Ids for new orders, 100 taken from the database at a time.
	seq, err := db.NewSequence([]byte("seq/order"), 100)
	if err != nil {
		log.Fatal(err)
	}
	for range 3 {
		id, err := seq.Next()
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("order", id)
	}
	// Stores the next id, 3, for the next run: no id is skipped.
	if err := seq.Release(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// order 0
	// order 1
	// order 2
}

// An indexed batch reads its own writes over the database before it
// commits: here, a unique-name check within the batch.
func ExampleDB_NewIndexedBatch() {
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
	db.Put([]byte("user:ada"), []byte("1"), simpledb.DefaultSync)

	b := db.NewIndexedBatch()
	for _, name := range []string{"grace", "ada", "grace", "alan"} {
		key := []byte("user:" + name)
		if taken, _ := b.Has(key); taken {
			fmt.Println(name, "is taken")
			continue
		}
		b.Put(key, []byte("1"))
	}
	it, err := b.NewPrefixIterator([]byte("user:"))
	if err != nil {
		log.Fatal(err)
	}
	for k := range it.All() {
		fmt.Printf("%s ", k)
	}
	it.Close()
	fmt.Println()
	if err := db.Write(b, simpledb.DefaultSync); err != nil {
		log.Fatal(err)
	}
	// Output:
	// ada is taken
	// grace is taken
	// user:ada user:alan user:grace
}

// Update runs a read-decide-write in a serializable transaction, retried
// on ErrConflict: here, a transfer that must not overdraw.
func ExampleDB_Update() {
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
	db.Put([]byte("alice"), []byte("30"), simpledb.DefaultSync)
	db.Put([]byte("bob"), []byte("5"), simpledb.DefaultSync)

	transfer := func(from, to string, amount int) error {
		return db.Update(10, func(tx *simpledb.Txn) error {
			a, err := tx.Get([]byte(from))
			if err != nil {
				return err
			}
			b, err := tx.Get([]byte(to))
			if err != nil {
				return err
			}
			x, _ := strconv.Atoi(string(a))
			y, _ := strconv.Atoi(string(b))
			if x < amount {
				return fmt.Errorf("%s has %d, not %d", from, x, amount)
			}
			tx.Put([]byte(from), []byte(strconv.Itoa(x-amount)))
			return tx.Put([]byte(to), []byte(strconv.Itoa(y+amount)))
		})
	}
	fmt.Println(transfer("alice", "bob", 20))
	fmt.Println(transfer("alice", "bob", 20))
	db.View(func(tx *simpledb.Txn) error {
		a, _ := tx.Get([]byte("alice"))
		b, _ := tx.Get([]byte("bob"))
		fmt.Printf("alice %s, bob %s\n", a, b)
		return nil
	})
	// Output:
	// <nil>
	// alice has 10, not 20
	// alice 10, bob 25
}

// UpdateWith commits with the write options it is given: here, an
// unsynced transaction in a database whose writes are synced by default.
// Its commit survives the process's crash, not the machine's, until a
// later synced write.
func ExampleDB_UpdateWith() {
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

	visit := func(page string) error {
		return db.UpdateWith(simpledb.NoSync, 10, func(tx *simpledb.Txn) error {
			n := 0
			if v, err := tx.Get([]byte(page)); err == nil {
				n, _ = strconv.Atoi(string(v))
			} else if !errors.Is(err, simpledb.ErrNotFound) {
				return err
			}
			return tx.Put([]byte(page), []byte(strconv.Itoa(n+1)))
		})
	}
	for range 3 {
		if err := visit("/home"); err != nil {
			log.Fatal(err)
		}
	}
	v, _ := db.Get([]byte("/home"))
	fmt.Printf("/home visited %s times\n", v)

	// The transaction is UpdateWith's to commit.
	err = db.UpdateWith(simpledb.NoSync, 0, func(tx *simpledb.Txn) error {
		tx.Put([]byte("/about"), []byte("1"))
		return tx.Commit(simpledb.Sync)
	})
	fmt.Println(errors.Is(err, simpledb.ErrTxnManaged))
	// Output:
	// /home visited 3 times
	// true
}

func ExampleDB_Merge() {
	dir, err := os.MkdirTemp("", "simpledb-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := simpledb.Open(dir, &simpledb.Options{Merger: simpledb.Uint64AddMerger})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	one := simpledb.EncodeCounter(1)
	for range 3 {
		// Counts a page view without reading the count: writers never
		// conflict, and the reads fold the increments.
		if err := db.Merge([]byte("views:/home"), one, simpledb.NoSync); err != nil {
			log.Fatal(err)
		}
	}
	v, err := db.Get([]byte("views:/home"))
	if err != nil {
		log.Fatal(err)
	}
	views, err := simpledb.DecodeCounter(v)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(views)
	fmt.Println(db.Merge([]byte("views:/home"), []byte("1"), simpledb.NoSync) != nil) // not 8 bytes: refused
	// Output:
	// 3
	// true
}
