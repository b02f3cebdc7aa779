// Command logtool is a small tool built on recordio: it writes a journal
// of text lines, each a checksummed record, lists it, and checks it,
// going on past damage to the next whole record.
//
//	logtool write FILE < lines   a journal of the lines read, made durable
//	logtool list FILE            every entry with its offset
//	logtool check FILE           every damaged record reported, the rest read
//
// Without arguments it shows itself at work on a journal in a temporary
// directory: writes, lists, flips a byte, and checks.
package main

import (
	"bufio"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/stratadb/strata/recordio"
)

func main() {
	if len(os.Args) < 2 {
		demo()
		return
	}
	if len(os.Args) < 3 {
		usage()
	}
	var err error
	switch cmd, file := os.Args[1], os.Args[2]; cmd {
	case "write":
		err = write(file, os.Stdin)
	case "list":
		err = list(file)
	case "check":
		var damaged int
		if damaged, err = check(file); err == nil && damaged > 0 {
			os.Exit(1)
		}
	default:
		usage()
	}
	if err != nil {
		log.Fatal(err)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: logtool write FILE < lines | list FILE | check FILE")
	os.Exit(2)
}

// write makes a journal at path of the lines r holds, one record each,
// and syncs it.
func write(path string, r io.Reader) error {
	w, err := recordio.Create(path, nil)
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if _, err := w.Write(sc.Bytes()); err != nil {
			w.Close()
			return err
		}
	}
	if err := sc.Err(); err != nil {
		w.Close()
		return err
	}
	return w.Close() // syncs
}

func list(path string) error {
	r, err := recordio.Open(path, nil)
	if err != nil {
		return err
	}
	defer r.Close()
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		fmt.Printf("%6d  %s\n", r.Offset(), rec)
	}
}

// check reads every record it can, reporting each damage and resyncing past
// it, and returns how many damaged records it found.
func check(path string) (int, error) {
	r, err := recordio.Open(path, nil)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	whole, damaged := 0, 0
	err = r.Scan(true, func(recordio.RecordInfo) { whole++ }, func(err error) {
		damaged++
		fmt.Printf("damage: %v\n", err)
	})
	fmt.Printf("%s: %d whole entries, %d damaged\n", filepath.Base(path), whole, damaged)
	return damaged, err
}

func demo() {
	dir, err := os.MkdirTemp("", "strata-logtool-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "journal")
	fmt.Println("$ printf 'deployed v1.2\\nrolled back\\ndeployed v1.3\\n' | logtool write journal")
	if err := write(path, strings.NewReader("deployed v1.2\nrolled back\ndeployed v1.3\n")); err != nil {
		log.Fatal(err)
	}
	fmt.Println("$ logtool list journal")
	if err := list(path); err != nil {
		log.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	data[len(data)/2] ^= 0xff // a flipped byte in the middle entry
	if err := os.WriteFile(path, data, 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Println("$ logtool check journal   # after a byte in the middle flipped")
	damaged, err := check(path)
	if err != nil {
		log.Fatal(err)
	}
	if damaged != 1 {
		log.Fatalf("found %d damaged records, want 1", damaged)
	}
}
