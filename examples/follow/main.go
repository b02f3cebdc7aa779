// Command follow shows a database read while another process writes it:
// a child process appends events, each a batch that adds the event and
// moves a counter on, while this process follows the database
// (simpledb.Options.Follow), without its lock, catching up every 200 ms,
// and verifies it (simpledb.Verify) as it runs. Every view is one moment
// of the writer's: the counter always equals the events beside it.
//
//	go run ./examples/follow             # the writer and the follower
//	go run ./examples/follow -write DIR  # only a writer, until killed: try the strata command on DIR
package main

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"time"

	"github.com/stratadb/strata/simpledb"
)

func main() {
	write := flag.String("write", "", "only write events into this database until killed")
	flag.Parse()
	if *write != "" {
		writeEvents(*write)
		return
	}
	dir, err := os.MkdirTemp("", "strata-follow-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	self, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	writer := exec.Command(self, "-write", dir)
	writer.Stderr = os.Stderr
	if err := writer.Start(); err != nil {
		log.Fatal(err)
	}
	defer writer.Wait()
	defer writer.Process.Kill()
	if err := follow(dir); err != nil {
		log.Fatal(err)
	}
}

// follow opens a follower once the writer has created the database, and
// checks five views of it, and a Verify.
func follow(dir string) error {
	var db *simpledb.DB
	for {
		var err error
		if db, err = simpledb.Open(dir, &simpledb.Options{Follow: true}); err == nil {
			break
		} else if !errors.Is(err, simpledb.ErrNotDB) {
			return err
		}
		time.Sleep(10 * time.Millisecond) // the writer has not created it yet
	}
	defer db.Close()
	for range 5 {
		time.Sleep(200 * time.Millisecond)
		if err := db.CatchUp(); err != nil {
			return err
		}
		events, counter, err := view(db)
		if err != nil {
			return err
		}
		if events != counter {
			return fmt.Errorf("the follower sees %d events, and a counter of %d", events, counter)
		}
		st := db.Stats()
		tables := 0
		for _, l := range st.Levels {
			tables += l.Tables
		}
		fmt.Printf("caught up: %6d events, the counter agrees; %d tables, %d memstore entries\n", events, tables, st.MemstoreEntries)
	}
	report, err := simpledb.Verify(dir, nil, nil)
	if err != nil {
		return err
	}
	fmt.Printf("verified while written: %d tables, %d logs, %d batches, %d damaged\n",
		report.Tables, report.Logs, report.Batches, len(report.Damage))
	return nil
}

// view counts the events a follower's view holds, and reads the counter.
func view(db *simpledb.DB) (events, counter uint64, err error) {
	snap := db.NewSnapshot()
	defer snap.Release()
	it, err := snap.NewPrefixIterator([]byte("event/"))
	if err != nil {
		return 0, 0, err
	}
	for range it.All() {
		events++
	}
	if err := it.Close(); err != nil {
		return 0, 0, err
	}
	v, err := snap.Get([]byte("counter"))
	if errors.Is(err, simpledb.ErrNotFound) {
		return events, 0, nil
	}
	if err != nil {
		return 0, 0, err
	}
	return events, binary.BigEndian.Uint64(v), nil
}

// writeEvents is the writer: unsynced batches of an event and the counter,
// with small memstores so that flushes and compactions run meanwhile.
func writeEvents(dir string) {
	db, err := simpledb.Open(dir, &simpledb.Options{NoSync: true, MemstoreSize: simpledb.MinMemstoreSize})
	if err != nil {
		log.Fatal(err)
	}
	events, counter := uint64(0), make([]byte, 8)
	if v, err := db.Get([]byte("counter")); err == nil {
		events = binary.BigEndian.Uint64(v)
	}
	for {
		events++
		binary.BigEndian.PutUint64(counter, events)
		b := db.NewBatch()
		b.Put(fmt.Appendf(nil, "event/%010d", events), fmt.Appendf(nil, "happened at %s", time.Now().Format(time.RFC3339Nano)))
		b.Put([]byte("counter"), counter)
		if err := db.Write(b, simpledb.DefaultSync); err != nil {
			log.Fatal(err)
		}
	}
}
