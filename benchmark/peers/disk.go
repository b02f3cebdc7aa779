package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// A probe measures what this machine's disk allows a synced log, without
// any database: records written with pwrite, each followed by fdatasync,
// for the run's duration. Appending grows the file, so every fdatasync
// also commits the new size through the filesystem's journal; overwriting
// inside a file whose blocks were written and synced beforehand commits
// data only. The synced workloads' rows can be read against these.
type probe struct {
	name, title string
	recordSize  int
	overwrite   bool
}

// probes lists the disk probes in table order.
var probes = []probe{
	{"append1k", "append 1 KB + fdatasync", 1 << 10, false},
	{"append32k", "append 32 KB + fdatasync", 32 << 10, false},
	{"overwrite1k", "overwrite 1 KB + fdatasync (preallocated)", 1 << 10, true},
	{"overwrite32k", "overwrite 32 KB + fdatasync (preallocated)", 32 << 10, true},
}

// diskEngine is the name that probes' results carry as their engine.
const diskEngine = "disk"

// preallocatedSize is the file the overwrite probes cycle through. Its
// blocks are written with zeros and synced before timing: fallocate would
// leave unwritten extents, whose first write is again a metadata change.
const preallocatedSize = 64 << 20

func findProbe(name string) (probe, error) {
	for _, p := range probes {
		if p.name == name {
			return p, nil
		}
	}
	return probe{}, fmt.Errorf("peers: no disk probe %q", name)
}

// run writes and syncs records in dir for duration.
func (p probe) run(dir string, duration time.Duration) (measure, error) {
	f, err := os.OpenFile(filepath.Join(dir, "probe"), os.O_CREATE|os.O_RDWR|os.O_EXCL, 0o644)
	if err != nil {
		return measure{}, err
	}
	defer f.Close()
	slots := int64(0) // 0: append
	if p.overwrite {
		if err := writeZeros(f, preallocatedSize); err != nil {
			return measure{}, err
		}
		slots = preallocatedSize / int64(p.recordSize)
	}
	record := appendValue(nil, 0, p.recordSize)
	var ops int64
	start := time.Now()
	for deadline := start.Add(duration); time.Now().Before(deadline); ops++ {
		off := ops * int64(p.recordSize)
		if slots > 0 {
			off = ops % slots * int64(p.recordSize)
		}
		if _, err := f.WriteAt(record, off); err != nil {
			return measure{}, err
		}
		if err := fdatasync(f); err != nil {
			return measure{}, err
		}
	}
	return measure{ops: ops, elapsed: time.Since(start)}, nil
}

// writeZeros writes size zero bytes at the start of f and syncs it, so that
// its blocks are allocated and written, and its size durable.
func writeZeros(f *os.File, size int64) error {
	zeros := make([]byte, 1<<20)
	for off := int64(0); off < size; off += int64(len(zeros)) {
		if _, err := f.WriteAt(zeros, off); err != nil {
			return err
		}
	}
	return f.Sync()
}
