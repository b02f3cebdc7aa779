// Command blobgc measures the space a database of large values takes once
// they are overwritten, with nothing but the background work to reclaim
// it: it fills -keys keys with -value-size values in random order,
// overwrites every key -rounds times in random order, and waits until the
// background compactions settle. It prints the directory's size against
// the live data, the blob files and their garbage, and each phase's time:
//
//	go run ./benchmark/blobgc                        # 250,000 keys of 4 KiB: 1 GB, overwritten 3 times
//	go run ./benchmark/blobgc -value-size 1024 -keys 1000000
//
// Writes are unsynced Puts. The background work has settled when no
// memstore awaits its flush and three polls, 200 ms apart, see the same
// count of compactions.
package main

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/stratadb/strata/benchmark/internal/benchdata"
	"github.com/stratadb/strata/internal/units"
	"github.com/stratadb/strata/simpledb"
)

func main() {
	keys := flag.Int("keys", 250_000, "keys")
	valueSize := flag.Int("value-size", 4096, "value length, 8 to 1 MiB")
	rounds := flag.Int("rounds", 3, "overwrites of every key after the fill")
	dir := flag.String("dir", filepath.Join(os.TempDir(), "strata-blobgc"), "directory for the database, removed first and after")
	flag.Parse()
	if err := run(*dir, *keys, *valueSize, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "blobgc:", err)
		os.Exit(1)
	}
}

func run(dir string, keys, valueSize, rounds int) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	db, err := simpledb.Open(dir, &simpledb.Options{NoSync: true})
	if err != nil {
		return err
	}
	defer db.Close()
	live := int64(keys) * int64(8+valueSize)
	fmt.Printf("%d keys of 8 bytes, values of %d bytes: %s live; the fill and %d overwrites, each in random order\n",
		keys, valueSize, units.Bytes(live), rounds)
	rng := rand.New(rand.NewPCG(1, 2))
	key, value := make([]byte, 8), make([]byte, 0, valueSize)
	for round := range rounds + 1 {
		start := time.Now()
		for _, i := range rng.Perm(keys) {
			binary.BigEndian.PutUint64(key, uint64(i))
			value = benchdata.AppendValue(value[:0], uint64(round*keys+i), valueSize)
			if err := db.Put(key, value, simpledb.DefaultSync); err != nil {
				return err
			}
		}
		took := time.Since(start)
		size, err := dirSize(dir)
		if err != nil {
			return err
		}
		fmt.Printf("round %d: %s/s; directory %s (%.2fx the live data)\n", round,
			units.Bytes(int64(float64(keys)*float64(8+valueSize)/took.Seconds())), units.Bytes(size), float64(size)/float64(live))
	}
	start := time.Now()
	if err := settle(db); err != nil {
		return err
	}
	size, err := dirSize(dir)
	if err != nil {
		return err
	}
	m := db.Metrics()
	fmt.Printf("settled in %s: directory %s, %.2fx the live data\n", units.Duration(time.Since(start)), units.Bytes(size), float64(size)/float64(live))
	fmt.Printf("blob files %d, %s; values %s, of which garbage %s (%.1f%%)\n", m.Blobs.Files, units.Bytes(m.Blobs.Bytes),
		units.Bytes(m.Blobs.ValueBytes), units.Bytes(m.Blobs.GarbageBytes), 100*float64(m.Blobs.GarbageBytes)/float64(max(m.Blobs.ValueBytes, 1)))
	fmt.Printf("tables %s; write amplification %.2f; compactions %d\n", units.Bytes(tableBytes(m)), m.WriteAmplification, m.Compactions)
	return nil
}

// settle flushes, then waits until no memstore awaits its flush and the
// count of compactions holds still over three polls.
func settle(db *simpledb.DB) error {
	if err := db.Flush(); err != nil {
		return err
	}
	last, still := int64(-1), 0
	for still < 3 {
		time.Sleep(200 * time.Millisecond)
		m := db.Metrics()
		if m.ImmutableMemstores == 0 && m.Compactions == last {
			still++
		} else {
			still = 0
		}
		last = m.Compactions
	}
	return nil
}

func tableBytes(m simpledb.Metrics) int64 {
	var n int64
	for _, l := range m.Levels {
		n += l.Bytes
	}
	return n
}

// dirSize returns the bytes of the files in dir.
func dirSize(dir string) (int64, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, e := range entries {
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted since: a table or log the background work is done with
		}
		if err != nil {
			return 0, err
		}
		n += info.Size()
	}
	return n, nil
}
