// Package benchdata builds the seeded data that Strata's benchmarks write and
// read: the benchmark tables (package benchmark) and the scale command share
// it, so both store the same values.
//
// Everything is drawn from ChaCha8 with a fixed seed: incompressible, and the
// same in every run and on every platform.
package benchdata

import (
	"encoding/binary"
	"math/rand/v2"
)

// NewSource returns a ChaCha8 generator keyed by seed.
func NewSource(seed uint64) *rand.ChaCha8 {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], seed)
	return rand.NewChaCha8(key)
}

// Bytes returns n bytes from the generator keyed by seed.
func Bytes(n int, seed uint64) []byte {
	b := make([]byte, n)
	NewSource(seed).Read(b) // never fails
	return b
}

// PoolSize is the size of the pool that values are cut from, and so the
// largest value AppendValue can make.
const PoolSize = 1 << 20

var pool = Bytes(PoolSize, 42)

// AppendValue appends value i, n bytes long (8 <= n <= PoolSize), to dst:
// i as a big-endian uint64, so that a read can be checked cheaply with
// IsValue, then pool bytes at an offset that depends on i, so that values
// differ and none compresses.
func AppendValue(dst []byte, i uint64, n int) []byte {
	off := int(i * 7919 % uint64(PoolSize-n+1))
	dst = binary.BigEndian.AppendUint64(dst, i)
	return append(dst, pool[off:off+n-8]...)
}

// IsValue reports whether v has value i's length n and starts with i: enough
// to catch a read of the wrong key or a truncated value without comparing
// every byte.
func IsValue(v []byte, i uint64, n int) bool {
	return len(v) == n && binary.BigEndian.Uint64(v) == i
}
