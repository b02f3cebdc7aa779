// Command recovery shows a database surviving its process being killed:
// it starts itself again as a child that writes orders, synced and not,
// printing each one acknowledged, and kills the child with SIGKILL at a
// random moment. Each time it reopens the database and checks that every
// order the child saw acknowledged is there, whole: a synced write is
// durable when it returns, and an unsynced one is in the operating system,
// which outlives the process.
//
//	go run ./examples/recovery
package main

import (
	"bufio"
	"errors"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/stratadb/strata/simpledb"
)

func main() {
	if dir := os.Getenv("RECOVERY_CHILD_DIR"); dir != "" {
		writeOrders(dir)
		return
	}
	dir, err := os.MkdirTemp("", "strata-recovery-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	self, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	next := 0 // orders [0, next) were acknowledged by some child
	for round := 1; round <= 3; round++ {
		acked, err := runAndKill(self, dir, next, time.Duration(100+rand.IntN(400))*time.Millisecond)
		if err != nil {
			log.Fatal(err)
		}
		found, err := check(dir, acked)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("round %d: the child was killed after %d acknowledged orders; reopened, all %d there (%d orders in the database)\n",
			round, acked-next, acked, found)
		next = found // the order in flight may have landed; the next child goes on after it
	}
}

// runAndKill starts a child writing orders from first on, kills it after
// wait, and returns how many orders had been acknowledged in all.
func runAndKill(self, dir string, first int, wait time.Duration) (int, error) {
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), "RECOVERY_CHILD_DIR="+dir, "RECOVERY_FIRST="+strconv.Itoa(first))
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	acked := make(chan int)
	go func() {
		last := first
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if n, ok := strings.CutPrefix(sc.Text(), "ack "); ok {
				i, _ := strconv.Atoi(n)
				last = i + 1
			}
		}
		acked <- last
	}()
	time.Sleep(wait)
	if err := cmd.Process.Kill(); err != nil {
		return 0, err
	}
	cmd.Wait()
	return <-acked, nil
}

// writeOrders is the child: it writes orders until it is killed, every
// fourth one synced, and prints "ack N" once order N is acknowledged.
func writeOrders(dir string) {
	first, err := strconv.Atoi(os.Getenv("RECOVERY_FIRST"))
	if err != nil {
		log.Fatal(err)
	}
	db, err := simpledb.Open(dir, &simpledb.Options{NoSync: true})
	if err != nil {
		log.Fatal(err)
	}
	for i := first; ; i++ {
		b := db.NewBatch()
		b.Put(orderKey(i), fmt.Appendf(nil, "order %d: 3 items", i))
		b.Put(fmt.Appendf(nil, "customer/%03d/order/%08d", i%100, i), nil)
		opts := simpledb.NoSync
		if i%4 == 0 {
			opts = simpledb.Sync
		}
		if err := db.Write(b, opts); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("ack %d\n", i)
	}
}

func orderKey(i int) []byte { return fmt.Appendf(nil, "order/%08d", i) }

// check opens the database, checks that orders [0, acked) are there with
// both their keys, and returns how many orders it holds.
func check(dir string, acked int) (int, error) {
	db, err := simpledb.Open(dir, nil)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	for i := range acked {
		v, err := db.Get(orderKey(i))
		if err != nil {
			return 0, fmt.Errorf("acknowledged order %d: %w", i, err)
		}
		if want := fmt.Sprintf("order %d: 3 items", i); string(v) != want {
			return 0, fmt.Errorf("order %d reads %q", i, v)
		}
		ok, err := db.Has(fmt.Appendf(nil, "customer/%03d/order/%08d", i%100, i))
		if err != nil || !ok {
			return 0, fmt.Errorf("order %d: half its batch is missing (%v)", i, err)
		}
	}
	it, err := db.NewIterator([]byte("order/"), []byte("order0"))
	if err != nil {
		return 0, err
	}
	defer it.Close()
	n := 0
	for range it.All() {
		n++
	}
	if err := it.Err(); err != nil {
		return 0, err
	}
	if n < acked {
		return 0, errors.New("fewer orders than acknowledged")
	}
	return n, nil
}
