package benchmark

import (
	"runtime"
	"testing"
	"time"
)

// pair measures a candidate against its baseline in alternating turns of
// the same work, so that both see the same machine: on a shared VM the
// speed of writing to the page cache swings severalfold from one second to
// the next, and separately run benchmarks cannot resolve a 10% target.
//
// It reports the candidate's ns/op, MB/s, B/op and allocs/op in place of the
// built-in metrics (which would mix in the baseline), the baseline's MB/s,
// and their ratio as "x-baseline": 0.9 means 90% of the baseline's speed.
type pair struct {
	b          *testing.B
	bytesPerOp int64
	ours, base time.Duration
	allocs     uint64
	allocBytes uint64
	ms         runtime.MemStats
}

func newPair(b *testing.B, bytesPerOp int64) *pair {
	b.ReportAllocs()
	return &pair{b: b, bytesPerOp: bytesPerOp}
}

// candidate runs f as the candidate's turn.
func (p *pair) candidate(f func()) {
	runtime.ReadMemStats(&p.ms)
	mallocs, bytes := p.ms.Mallocs, p.ms.TotalAlloc
	start := time.Now()
	f()
	p.ours += time.Since(start)
	runtime.ReadMemStats(&p.ms)
	p.allocs += p.ms.Mallocs - mallocs
	p.allocBytes += p.ms.TotalAlloc - bytes
}

// baseline runs f as the baseline's turn.
func (p *pair) baseline(f func()) {
	start := time.Now()
	f()
	p.base += time.Since(start)
}

func (p *pair) report() {
	n := float64(p.b.N)
	mbps := func(d time.Duration) float64 { return float64(p.bytesPerOp) * n / d.Seconds() / 1e6 }
	p.b.ReportMetric(float64(p.ours.Nanoseconds())/n, "ns/op")
	p.b.ReportMetric(mbps(p.ours), "MB/s")
	p.b.ReportMetric(float64(p.allocs)/n, "allocs/op")
	p.b.ReportMetric(float64(p.allocBytes)/n, "B/op")
	p.b.ReportMetric(mbps(p.base), "baseline-MB/s")
	p.b.ReportMetric(p.base.Seconds()/p.ours.Seconds(), "x-baseline")
}

// reportRate reports, for work of count items per op, the candidate's and
// the baseline's items per second: unit and "baseline-"+unit.
func (p *pair) reportRate(count int, unit string) {
	n := float64(p.b.N) * float64(count)
	p.b.ReportMetric(n/p.ours.Seconds(), unit)
	p.b.ReportMetric(n/p.base.Seconds(), "baseline-"+unit)
}
