package benchmark

import (
	"flag"
	"math/rand/v2"
	"os"
	"testing"
)

// large enables go-sstables' full sizes (files and tables beyond 1 GB).
var large = flag.Bool("large", false, "also run go-sstables' largest sizes (2 GB and up)")

// seededBytes returns n random bytes from a fixed seed: incompressible, and
// the same in every run.
func seededBytes(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 0x5354))
	b := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		v := rng.Uint64()
		for j := range 8 {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	for i := n &^ 7; i < n; i++ {
		b[i] = byte(rng.Uint32())
	}
	return b
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
