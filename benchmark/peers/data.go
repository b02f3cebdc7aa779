package main

import (
	"bytes"
	"fmt"
	"math/bits"
	"math/rand/v2"

	"github.com/stratadb/strata/benchmark/internal/benchdata"
)

const (
	// keySize is the length of every key: its index in decimal, zero-padded.
	keySize = 16
	// defaultValueSize is the default of -value-size (params.valueSize),
	// the value length of the fill, read, scan and mixed workloads.
	defaultValueSize = 100
	// minValueSize and maxValueSize bound -value-size: a value starts with
	// its key's index, 8 bytes, and is cut from benchdata's pool.
	minValueSize = 8
	maxValueSize = benchdata.PoolSize
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

// checkValueSize returns an error unless appendValue can make values of n
// bytes.
func checkValueSize(n int) error {
	if n < minValueSize || n > maxValueSize {
		return fmt.Errorf("peers: -value-size %d out of [%d, %d]", n, minValueSize, maxValueSize)
	}
	return nil
}

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
// writes, and that the read workloads' fill writes. It is computed, not
// held: a table of 10M keys took 80 MB, and building it twice that, which
// the collector then let every engine's heap grow around.
func fillOrder(n int) *permutation {
	return newPermutation(uint64(n), seedFillOrder)
}

// permutation is a seeded bijection of 0..n-1 computed per index in a few
// nanoseconds. Rounds of add, multiply by an odd constant and xor-shift,
// each a bijection of the k-bit integers, mix the smallest power of two at
// least n; an index whose image falls at n or beyond is mapped again until
// it lands below n (cycle walking), which keeps the whole a bijection of
// 0..n-1 and takes under two steps on average, since 2^k < 2n.
type permutation struct {
	n, mask uint64
	shift   uint
	adds    [permutationRounds]uint64
}

const permutationRounds = 4

func newPermutation(n, seed uint64) *permutation {
	k := max(bits.Len64(n-1), 1)
	p := &permutation{n: n, mask: 1<<k - 1, shift: uint(k/2 + 1)}
	rng := rand.New(rand.NewPCG(seed, seed))
	for i := range p.adds {
		p.adds[i] = rng.Uint64()
	}
	return p
}

// at returns the image of i, for i < n.
func (p *permutation) at(i uint64) uint64 {
	for {
		for _, a := range p.adds {
			i = (i + a) & p.mask
			i = (i * 0x9e3779b97f4a7c15) & p.mask // odd: a bijection mod 2^k
			i ^= i >> p.shift
		}
		if i < p.n {
			return i
		}
	}
}
