package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSummaryTakesMedianAndRange(t *testing.T) {
	rs := []result{
		{Engine: "strata", Workload: "fillseq", Config: "defaults", Rate: 300, PeakRSS: 90},
		{Engine: "strata", Workload: "fillseq", Config: "defaults", Rate: 100, PeakRSS: 70},
		{Engine: "strata", Workload: "fillseq", Config: "defaults", Rate: 200, PeakRSS: 80},
		{Engine: "pebble", Workload: "fillseq", Config: "defaults", Rate: 400},
		{Engine: "badger", Workload: "fillseq", Config: "defaults", Rate: 500},
		{Engine: "gosstables", Workload: "scan", Config: "defaults", Unsupported: "no iterator"},
	}
	s := summarize(rs)
	require.Equal(t, stat{n: 3, median: 200, min: 100, max: 300, rss: 80}, s[cell{"defaults", "fillseq", "strata"}])
	require.Equal(t, "200 (100–300)", s[cell{"defaults", "fillseq", "strata"}].figure())
	require.Equal(t, "n/a", s[cell{"defaults", "scan", "gosstables"}].figure())

	best, peer, pebble := ratios(s, "defaults", "fillseq", engines)
	require.InDelta(t, 0.4, best, 1e-9)
	require.Equal(t, "Badger", peer)
	require.InDelta(t, 0.5, pebble, 1e-9)

	var out bytes.Buffer
	report{plan: plan{engines: engines, workloads: workloads[:1], configs: []config{{name: "defaults"}}}}.write(&out, rs)
	require.Contains(t, out.String(), "| fillseq | ops/s | 200 (100–300) | 400 |  | 500 |  |  | 0.40 (Badger) | 0.50 |")
	require.Contains(t, out.String(), "| fillseq | 80 MiB |  |  |  |  |  |")
}

func TestHumanKeepsThreeDigits(t *testing.T) {
	for v, want := range map[float64]string{
		812345: "812K", 1234567: "1.23M", 45678: "45.7K", 4567: "4.57K", 123: "123", 1.5: "1.50",
	} {
		require.Equal(t, want, human(v))
	}
}

// The transaction workloads get a table of aborts per commit: each run's
// aborts over its commits, the median over the repeats; n/a for an engine
// without transactions.
func TestReportShowsAbortsPerCommit(t *testing.T) {
	rs := []result{
		{Engine: "strata", Workload: "txnhot", Config: "defaults", Rate: 90, Ops: 100, Aborts: 10},
		{Engine: "strata", Workload: "txnhot", Config: "defaults", Rate: 80, Ops: 100, Aborts: 30},
		{Engine: "strata", Workload: "txnhot", Config: "defaults", Rate: 70, Ops: 200, Aborts: 100},
		{Engine: "badger", Workload: "txnhot", Config: "defaults", Rate: 50, Ops: 400, Aborts: 1},
		{Engine: "bbolt", Workload: "txnhot", Config: "defaults", Rate: 40, Ops: 300},
		{Engine: "pebble", Workload: "txnhot", Config: "defaults", Unsupported: "no transactions"},
		{Engine: "strata", Workload: "fillseq", Config: "defaults", Rate: 100, Ops: 100},
	}
	require.InDelta(t, 0.3, summarize(rs)[cell{"defaults", "txnhot", "strata"}].abortsPerCommit, 1e-9)

	hot, err := findWorkload("txnhot")
	require.NoError(t, err)
	var out bytes.Buffer
	es := []engine{engines[0], engines[1], engines[3], engines[4]} // Strata, Pebble, Badger, bbolt
	report{plan: plan{engines: es, workloads: []workload{workloads[0], hot}, configs: []config{{name: "defaults"}}}}.write(&out, rs)
	require.Contains(t, out.String(), "| aborts per commit (median of repeats) | Strata | Pebble | Badger | bbolt |")
	require.Contains(t, out.String(), "| "+hot.title+" | 0.3 | n/a | 0.0025 | 0 |")
	require.NotContains(t, out.String(), "| fillseq | 0 |", "fillseq runs no transactions")
}

// With -costs the report adds the disk written, the database's size and
// the stall time: medians, blank where a run did not say.
func TestReportShowsCosts(t *testing.T) {
	stall := func(s float64) *float64 { return &s }
	rs := []result{
		{Engine: "strata", Workload: "fillseq", Config: "defaults", Rate: 1, DiskWrittenMiB: 100, DBSizeMiB: 40, StallSeconds: stall(0.5)},
		{Engine: "strata", Workload: "fillseq", Config: "defaults", Rate: 1, DiskWrittenMiB: 300, DBSizeMiB: 60, StallSeconds: stall(1.5)},
		{Engine: "pebble", Workload: "fillseq", Config: "defaults", Rate: 1, DiskWrittenMiB: 200, DBSizeMiB: 50},
	}
	var out bytes.Buffer
	report{plan: plan{engines: engines, workloads: workloads[:1], configs: []config{{name: "defaults"}}, costs: true}}.write(&out, rs)
	require.Contains(t, out.String(), "| fillseq | 200 MiB | 200 MiB |  |  |  |  |")
	require.Contains(t, out.String(), "| fillseq | 50 MiB | 50 MiB |  |  |  |  |")
	require.Contains(t, out.String(), "| fillseq | 1.00 s |  |  |  |  |  |")
	out.Reset()
	report{plan: plan{engines: engines, workloads: workloads[:1], configs: []config{{name: "defaults"}}}}.write(&out, rs)
	require.NotContains(t, out.String(), "disk written", "only with -costs")
}
