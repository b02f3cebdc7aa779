package main

import (
	"math"
	"math/rand/v2"
)

// zipfian draws integers in [0, n) with a Zipfian distribution, as YCSB's
// ZipfianGenerator does (the algorithm of Gray et al., "Quickly Generating
// Billion-Record Synthetic Databases"): item i has probability proportional
// to 1/(i+1)^theta.
//
// zetan is zeta(n, theta), the sum over i = 1..n of 1/i^theta, which the
// caller supplies: summing it over YCSB's 10^10 items would take minutes.
type zipfian struct {
	rng               *rand.Rand
	n                 float64
	alpha, zetan, eta float64
	half              float64 // 1 + 0.5^theta
}

func newZipfian(rng *rand.Rand, n uint64, theta, zetan float64) *zipfian {
	z := &zipfian{rng: rng, n: float64(n), zetan: zetan}
	z.alpha = 1 / (1 - theta)
	zeta2 := 1 + math.Pow(0.5, theta)
	z.eta = (1 - math.Pow(2/z.n, 1-theta)) / (1 - zeta2/zetan)
	z.half = zeta2
	return z
}

func (z *zipfian) next() uint64 {
	u := z.rng.Float64()
	uz := u * z.zetan
	switch {
	case uz < 1:
		return 0
	case uz < z.half:
		return 1
	}
	return uint64(z.n * math.Pow(z.eta*u-z.eta+1, z.alpha))
}

// scrambledZipfian is YCSB's ScrambledZipfianGenerator: a Zipfian over a
// fixed space of 10^10 items (its zeta precomputed by YCSB for theta 0.99),
// hashed with FNV-1a 64 and reduced to [0, n), so popular items are spread
// over the key space instead of clustered at its start.
type scrambledZipfian struct {
	z *zipfian
	n uint64
}

const (
	ycsbItemCount    = 10_000_000_000
	ycsbZipfianConst = 0.99
	ycsbZetan        = 26.46902820178302
)

func newScrambledZipfian(rng *rand.Rand, n uint64) *scrambledZipfian {
	return &scrambledZipfian{z: newZipfian(rng, ycsbItemCount, ycsbZipfianConst, ycsbZetan), n: n}
}

func (s *scrambledZipfian) next() uint64 {
	return fnv64(s.z.next()) % s.n
}

// fnv64 is YCSB's fnvhash64: FNV-1a over the value's eight bytes, low byte
// first, made non-negative.
func fnv64(v uint64) uint64 {
	h := uint64(0xCBF29CE484222325)
	for range 8 {
		h ^= v & 0xff
		h *= 1099511628211
		v >>= 8
	}
	if int64(h) < 0 {
		h = uint64(-int64(h))
	}
	return h
}
