package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"

	"github.com/stratadb/strata/benchmark/internal/benchdata"
)

const (
	// keySize is the length of every key: its index in decimal, zero-padded.
	keySize = 16
	// valueSize is the value length of the fill, read, scan and mixed
	// workloads.
	valueSize = 100
	// syncValueSize is the value length of the synced-write workloads.
	syncValueSize = 1024
)

// Seeds of the random streams, fixed so that every engine, process and run
// sees the same keys in the same order.
const (
	seedFillOrder = 1 // the permutation of fillrandom and of the read fill
	seedReads     = 2 // readrandom and readzipf
	seedMixed     = 3 // the mixed workload, plus the goroutine's number
	seedTxn       = 4 // the transaction workloads, plus the goroutine's number
	seedCounters  = 5 // the counter workloads, plus the goroutine's number
)

// appendKey appends key i to dst: i in decimal, zero-padded to keySize
// digits, so that byte order is index order (0000000000000042 is key 42).
func appendKey(dst []byte, i uint64) []byte {
	var b [keySize]byte
	for j := keySize - 1; j >= 0; j-- {
		b[j] = byte('0' + i%10)
		i /= 10
	}
	return append(dst, b[:]...)
}

// appendValue appends value i, n bytes long, to dst: benchdata's seeded,
// incompressible value, the same in every process.
func appendValue(dst []byte, i uint64, n int) []byte {
	return benchdata.AppendValue(dst, i, n)
}

// checker compares values read back with the ones written. It reuses one
// buffer, so a checker belongs to one goroutine.
type checker struct {
	want []byte
}

// check returns an error unless v is value i, n bytes long, byte for byte.
func (c *checker) check(v []byte, i uint64, n int) error {
	c.want = appendValue(c.want[:0], i, n)
	if !bytes.Equal(v, c.want) {
		return fmt.Errorf("key %d: wrong value (%d bytes, want %d)", i, len(v), n)
	}
	return nil
}

// fillOrder returns the seeded random permutation of 0..n-1 that fillrandom
// writes, and that the read workloads' fill writes.
func fillOrder(n int) []uint64 {
	rng := rand.New(rand.NewPCG(seedFillOrder, seedFillOrder))
	order := make([]uint64, n)
	for i, k := range rng.Perm(n) {
		order[i] = uint64(k)
	}
	return order
}
