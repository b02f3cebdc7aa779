package benchmark

import (
	"flag"
	"os"
	"testing"

	"github.com/stratadb/strata/benchmark/internal/benchdata"
)

// large enables go-sstables' full sizes (files and tables beyond 1 GB).
var large = flag.Bool("large", false, "also run go-sstables' largest sizes (2 GB and up)")

// checkValue fails the benchmark unless v is benchdata's value i of n
// bytes.
func checkValue(b *testing.B, v []byte, i uint64, n int) {
	if !benchdata.IsValue(v, i, n) {
		b.Fatalf("key %d: wrong value", i)
	}
}

// sharedDir holds files that several benchmarks reuse (tables built once
// per process); TestMain removes it.
var sharedDir string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp(os.Getenv("STRATA_BENCH_DIR"), "strata-bench-shared")
	if err != nil {
		panic(err)
	}
	sharedDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// benchDir returns a directory for benchmark files, removed afterwards. It
// honours STRATA_BENCH_DIR so that runs can target a particular disk.
func benchDir(b *testing.B) string {
	dir, err := os.MkdirTemp(os.Getenv("STRATA_BENCH_DIR"), "strata-bench")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// sizeCase is a named size, as go-sstables names its sub-benchmarks.
type sizeCase struct {
	name  string
	bytes int64
}

// fileSizes are go-sstables' RecordIORead and SSTable sizes: 32 MB to 1 GB,
// and with -large up to 8 GB.
func fileSizes() []sizeCase {
	sizes := []sizeCase{
		{"32mb", 32 << 20}, {"64mb", 64 << 20}, {"128mb", 128 << 20},
		{"256mb", 256 << 20}, {"512mb", 512 << 20}, {"1024mb", 1024 << 20},
	}
	if *large {
		sizes = append(sizes, sizeCase{"2048mb", 2048 << 20}, sizeCase{"4096mb", 4096 << 20}, sizeCase{"8192mb", 8192 << 20})
	}
	return sizes
}
