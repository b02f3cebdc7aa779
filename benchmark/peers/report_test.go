package main

import (
	"bytes"
	"strings"
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

// With -costs the report also sets each run's disk writes and database
// size against the bytes of keys and values its database holds, keys ×
// (16 + value size): bytes written per user byte where the run wrote
// nothing else (the fills, reads and scans), space amplification wherever
// the database holds the fill's keys (accounts, for the transaction
// workloads), neither where it holds something else.
func TestReportSetsCostsAgainstUserBytes(t *testing.T) {
	const keys = 1 << 16
	var ws []workload
	for _, name := range []string{"fillrandom", "scan", "mixed", "txn1", "sync1"} {
		w, err := findWorkload(name)
		require.NoError(t, err)
		ws = append(ws, w)
	}
	rs := []result{ // at 4080-byte values, 256 MiB of keys and values; accounts, 7.25 MiB
		{Engine: "strata", Workload: "fillrandom", Config: "defaults", Rate: 1, DiskWrittenMiB: 512, DBSizeMiB: 300},
		{Engine: "strata", Workload: "scan", Config: "defaults", Rate: 1, DiskWrittenMiB: 768, DBSizeMiB: 256},
		{Engine: "strata", Workload: "mixed", Config: "defaults", Rate: 1, DiskWrittenMiB: 1024, DBSizeMiB: 512},
		{Engine: "strata", Workload: "txn1", Config: "defaults", Rate: 1, DiskWrittenMiB: 100, DBSizeMiB: 14.5},
		{Engine: "strata", Workload: "sync1", Config: "defaults", Rate: 1, DiskWrittenMiB: 100, DBSizeMiB: 10},
	}
	var out bytes.Buffer
	report{plan: plan{params: params{keys: keys, valueSize: 4096 - keySize}, engines: engines[:1], workloads: ws,
		configs: []config{{name: "defaults"}}, costs: true}}.write(&out, rs)

	require.Equal(t, []string{"| fillrandom | 2.00 |", "| scan | 3.00 |"},
		tableRows(t, out.String(), "bytes written per user byte, fill included (median of repeats)"))
	require.Equal(t, []string{"| fillrandom | 1.17 |", "| scan | 1.00 |", "| " + ws[2].title + " | 2.00 |", "| " + ws[3].title + " | 2.00 |"},
		tableRows(t, out.String(), "space amplification: database size over user bytes (median of repeats)"))
}

// tableRows returns the rows of the markdown table with the given title
// in out.
func tableRows(t *testing.T, out, title string) []string {
	_, after, ok := strings.Cut(out, "| "+title+" |")
	require.True(t, ok, "no table %q in\n%s", title, out)
	lines := strings.Split(after, "\n")
	var rows []string
	for _, line := range lines[2:] { // the rest of the header line, the separator
		if line == "" {
			break
		}
		rows = append(rows, line)
	}
	return rows
}

// Strata's other configurations are not its peers: the best peer is
// another engine, and each variant in the run gets a ratio column of its
// own, Pebble's included.
func TestVariantsGetRatioColumns(t *testing.T) {
	inline, err := findEngine("strata-inline")
	require.NoError(t, err)
	blobs, err := findEngine("pebble-blobs")
	require.NoError(t, err)
	rs := []result{
		{Engine: "strata", Workload: "fillseq", Config: "defaults", Rate: 100},
		{Engine: "strata-inline", Workload: "fillseq", Config: "defaults", Rate: 200},
		{Engine: "pebble", Workload: "fillseq", Config: "defaults", Rate: 50},
		{Engine: "pebble-blobs", Workload: "fillseq", Config: "defaults", Rate: 80},
	}
	var out bytes.Buffer
	es := []engine{engines[0], inline, engines[1], blobs}
	report{plan: plan{engines: es, workloads: workloads[:1], configs: []config{{name: "defaults"}}}}.write(&out, rs)
	require.Contains(t, out.String(), "| workload | unit | Strata | Strata, no blob files | Pebble | Pebble, blob files | "+
		"Strata / best peer | Strata / Pebble | Strata / Strata, no blob files | Strata / Pebble, blob files |")
	require.Contains(t, out.String(), "| fillseq | ops/s | 100 | 200 | 50.0 | 80.0 | 1.25 (Pebble, blob files) | 2.00 | 0.50 | 1.25 |")
}
