package sstables_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/stratadb/strata/sstables"
)

func Example() {
	dir, err := os.MkdirTemp("", "sstables-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "fruit.sst")

	w, err := sstables.NewWriter(path, &sstables.WriterOptions{BloomBitsPerKey: 10})
	if err != nil {
		log.Fatal(err)
	}
	for _, kv := range [][2]string{{"apple", "red"}, {"banana", "yellow"}, {"cherry", "dark red"}, {"grape", "green"}} {
		if err := w.Add([]byte(kv[0]), []byte(kv[1])); err != nil {
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
	v, err := r.Get([]byte("cherry"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("cherry: %s\n", v)
	_, err = r.Get([]byte("kiwi"))
	fmt.Println("kiwi:", err)

	it := r.NewIterator(&sstables.IterOptions{LowerBound: []byte("b"), UpperBound: []byte("d")})
	defer it.Close()
	for k, v := range it.All() {
		fmt.Printf("%s=%s\n", k, v)
	}
	if err := it.Err(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// cherry: dark red
	// kiwi: strata: not found
	// banana=yellow
	// cherry=dark red
}

func ExampleNewMergingIterator() {
	dir, err := os.MkdirTemp("", "sstables-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	// An older table and a newer one that updates b and deletes c.
	write := func(name string, seq uint64, entries [][2]string) *sstables.Reader {
		path := filepath.Join(dir, name)
		w, err := sstables.NewWriter(path, nil)
		if err != nil {
			log.Fatal(err)
		}
		for _, e := range entries {
			kind := sstables.KindSet
			if e[1] == "" {
				kind = sstables.KindDelete
			}
			if err := w.AddEntry([]byte(e[0]), seq, kind, []byte(e[1])); err != nil {
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
		return r
	}
	older := write("1.sst", 1, [][2]string{{"a", "1"}, {"b", "2"}, {"c", "3"}})
	newer := write("2.sst", 2, [][2]string{{"b", "20"}, {"c", ""}})
	defer older.Close()
	defer newer.Close()

	m := sstables.NewMergingIterator(&sstables.MergeOptions{DropTombstones: true},
		newer.NewIterator(nil), older.NewIterator(nil))
	defer m.Close()
	for k, v := range m.All() {
		fmt.Printf("%s=%s\n", k, v)
	}
	// Backward, the same view: each key's newest entry, deleted keys hidden.
	for k, v := range m.Backward() {
		fmt.Printf("backward %s=%s\n", k, v)
	}
	if err := m.Err(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// a=1
	// b=20
	// backward b=20
	// backward a=1
}
