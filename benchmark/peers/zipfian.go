package main

import (
	"math"
	"math/rand/v2"
)

// scrambledZipfian draws key indexes in [0, n) as YCSB's
// ScrambledZipfianGenerator does: a Zipfian draw (theta 0.99, by the method
// of Gray et al., "Quickly Generating Billion-Record Synthetic Databases")
// over a fixed space of 10^10 items, hashed with FNV-1a 64 and reduced to
// [0, n). A few keys are hot, and the hot keys are spread over the key space
// rather than bunched at its start.
type scrambledZipfian struct {
	rng                 *rand.Rand
	n                   uint64
	alpha, eta, zeta2th float64
}

const (
	zipfItems = 10_000_000_000
	zipfTheta = 0.99
	// zipfZetaN is zeta(zipfItems, zipfTheta), the sum over i = 1..10^10 of
	// 1/i^0.99, as YCSB precomputes it: summing it here would take minutes.
	zipfZetaN = 26.46902820178302
)

func newScrambledZipfian(rng *rand.Rand, n uint64) *scrambledZipfian {
	zeta2 := 1 + math.Pow(0.5, zipfTheta)
	return &scrambledZipfian{
		rng:     rng,
		n:       n,
		alpha:   1 / (1 - zipfTheta),
		eta:     (1 - math.Pow(2.0/zipfItems, 1-zipfTheta)) / (1 - zeta2/zipfZetaN),
		zeta2th: zeta2,
	}
}

// next returns the next key index.
func (z *scrambledZipfian) next() uint64 {
	u := z.rng.Float64()
	var item uint64
	switch uz := u * zipfZetaN; {
	case uz < 1:
		item = 0
	case uz < z.zeta2th:
		item = 1
	default:
		item = uint64(zipfItems * math.Pow(z.eta*u-z.eta+1, z.alpha))
	}
	return fnv1a64(item) % z.n
}

// fnv1a64 is YCSB's fnvhash64: FNV-1a over v's eight bytes, least
// significant first, made non-negative as a signed integer.
func fnv1a64(v uint64) uint64 {
	const (
		offset = 0xCBF29CE484222325
		prime  = 1099511628211
	)
	h := uint64(offset)
	for range 8 {
		h = (h ^ v&0xff) * prime
		v >>= 8
	}
	if int64(h) < 0 {
		h = uint64(-int64(h))
	}
	return h
}
