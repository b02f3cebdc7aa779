package benchdata

import (
	"math"
	"math/rand/v2"
)

// Zipfian draws integers in [0, n) with a Zipfian distribution, as YCSB's
// ZipfianGenerator does (the algorithm of Gray et al., "Quickly Generating
// Billion-Record Synthetic Databases"): item i has probability proportional
// to 1/(i+1)^theta.
//
// zetan is zeta(n, theta), the sum over i = 1..n of 1/i^theta, which the
// caller supplies: summing it over YCSB's 10^10 items would take minutes.
type Zipfian struct {
	rng               *rand.Rand
	n                 float64
	alpha, zetan, eta float64
	half              float64 // 1 + 0.5^theta
}

// NewZipfian returns a Zipfian over [0, n) with exponent theta, drawing
// from rng; zetan is zeta(n, theta).
func NewZipfian(rng *rand.Rand, n uint64, theta, zetan float64) *Zipfian {
	z := &Zipfian{rng: rng, n: float64(n), zetan: zetan}
	z.alpha = 1 / (1 - theta)
	zeta2 := 1 + math.Pow(0.5, theta)
	z.eta = (1 - math.Pow(2/z.n, 1-theta)) / (1 - zeta2/zetan)
	z.half = zeta2
	return z
}

// Next returns the next draw.
func (z *Zipfian) Next() uint64 {
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

// ScrambledZipfian is YCSB's ScrambledZipfianGenerator: a Zipfian over a
// fixed space of 10^10 items (its zeta precomputed by YCSB for theta 0.99),
// hashed with FNV-1a 64 and reduced to [0, n), so popular items are spread
// over the key space instead of clustered at its start.
type ScrambledZipfian struct {
	z *Zipfian
	n uint64
}

const (
	ycsbItemCount    = 10_000_000_000
	ycsbZipfianConst = 0.99
	ycsbZetan        = 26.46902820178302
)

// NewScrambledZipfian returns YCSB's scrambled Zipfian over [0, n),
// drawing from rng.
func NewScrambledZipfian(rng *rand.Rand, n uint64) *ScrambledZipfian {
	return &ScrambledZipfian{z: NewZipfian(rng, ycsbItemCount, ycsbZipfianConst, ycsbZetan), n: n}
}

// Next returns the next draw.
func (s *ScrambledZipfian) Next() uint64 {
	return fnv64(s.z.Next()) % s.n
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
