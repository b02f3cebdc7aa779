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
	require.Contains(t, out.String(), "| fillseq | ops/s | 200 (100–300) | 400 |  | 500 |  | 0.40 (Badger) | 0.50 |")
	require.Contains(t, out.String(), "| fillseq | 80 MiB |  |  |  |  |")
}

func TestHumanKeepsThreeDigits(t *testing.T) {
	for v, want := range map[float64]string{
		812345: "812K", 1234567: "1.23M", 45678: "45.7K", 4567: "4.57K", 123: "123", 1.5: "1.50",
	} {
		require.Equal(t, want, human(v))
	}
}
