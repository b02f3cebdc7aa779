// Command fixturegen writes the fixture of log format 7 and table format 3
// with the code of commit 5a168bb: values of 100 bytes and more in blob
// files (a threshold below the default, 1 KiB then, so that most values of the
// workload go there), besides range deletions and merges with
// simpledb.Uint64AddMerger as in format 6.
//
//	go run ./cmd/fixturegen OUT
package main

import (
	"fmt"
	"os"

	"github.com/stratadb/strata/simpledb"
	"github.com/stratadb/strata/vfs"
)

// plainFS hides vfs.Default's mapped files, so that each log is a plain
// file of the bytes written, not 1 MiB chunks with zeros after them.
type plainFS struct{ vfs.FS }

// db is the store of this commit's simpledb.
type db struct{ *simpledb.DB }

func (d db) write(ops []op) error {
	if len(ops) == 1 {
		switch o := ops[0]; o.kind {
		case set:
			return d.Put(o.key, o.value, simpledb.Sync)
		case del:
			return d.Delete(o.key, simpledb.Sync)
		case delRange:
			return d.DeleteRange(o.key, o.value, simpledb.Sync)
		case merge:
			return d.Merge(o.key, o.value, simpledb.Sync)
		}
	}
	b := d.NewBatch()
	for _, o := range ops {
		var err error
		switch o.kind {
		case set:
			err = b.Put(o.key, o.value)
		case del:
			err = b.Delete(o.key)
		case delRange:
			err = b.DeleteRange(o.key, o.value)
		case merge:
			err = b.Merge(o.key, o.value)
		default:
			err = fmt.Errorf("op kind %d: not in this format", o.kind)
		}
		if err != nil {
			return err
		}
	}
	return d.Write(b, simpledb.Sync)
}

func (d db) flush() error   { return d.Flush() }
func (d db) compact() error { return d.Compact() }

func open(dir string) (store, error) {
	d, err := simpledb.Open(dir, &simpledb.Options{
		FS:                    plainFS{vfs.Default},
		TargetTableSize:       32 << 10,
		BlockSize:             1 << 10,
		DisableAutoCompaction: true,
		Merger:                simpledb.Uint64AddMerger,
		BlobThreshold:         100,
	})
	return db{d}, err
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: fixturegen OUT")
		os.Exit(2)
	}
	if err := generate(os.Args[1], format{LogFormat: 7, TableFormat: 3, Merger: simpledb.Uint64AddMerger.Name}, open); err != nil {
		fmt.Fprintln(os.Stderr, "fixturegen:", err)
		os.Exit(1)
	}
	// Without Close: the last writes are only in the log, for Open to
	// replay.
	os.Exit(0)
}
