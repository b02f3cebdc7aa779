package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMain lets the test binary serve as the runner's child, as the
// command's binary does.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		if err := runChild(os.Args[1:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The smoke run: every engine, workload, configuration and probe once, at
// tiny sizes, each in its own child, every value checked.
func TestSmokeRunsEveryEngineOnce(t *testing.T) {
	dir := t.TempDir()
	jsonPath, svgPath := filepath.Join(dir, "results.json"), filepath.Join(dir, "ratios.svg")
	var out, progress bytes.Buffer
	err := runMain([]string{"-keys", "2000", "-repeats", "1", "-duration", "100ms",
		"-dir", filepath.Join(dir, "runs"), "-json", jsonPath, "-svg", svgPath}, &out, &progress)
	require.NoError(t, err, progress.String())

	b, err := os.ReadFile(jsonPath)
	require.NoError(t, err)
	var results []result
	require.NoError(t, json.Unmarshal(b, &results))
	require.Len(t, results, len(probes)+2*len(workloads)*len(engines))
	noTxn := []string{"pebble", "goleveldb", "gosstables"}
	unsupported := map[string][]string{ // workload: the engines without it
		"scan":         {"gosstables"},
		"scanreverse":  {"gosstables"},
		"checkpoint":   {"goleveldb", "badger", "gosstables"},
		"deleterange":  {"goleveldb", "badger", "bbolt", "gosstables"},
		"txn1":         noTxn,
		"txn8":         noTxn,
		"txn1sync":     noTxn,
		"txn8sync":     noTxn,
		"txnhot":       noTxn,
		"txnhotsync":   noTxn,
		"countertxn":   noTxn,
		"countermerge": {"goleveldb", "badger", "bbolt", "gosstables"},
	}
	for _, r := range results {
		if slices.Contains(unsupported[r.Workload], r.Engine) {
			require.NotEmpty(t, r.Unsupported, "%+v", r)
			continue
		}
		require.Empty(t, r.Unsupported, "%+v", r)
		require.Positive(t, r.Rate, "%+v", r)
		switch r.Workload {
		case "fillseq", "fillrandom", "readrandom", "readzipf", "scan", "scanreverse":
			require.EqualValues(t, 2000, r.Ops, "%+v", r)
		case "checkpoint", "deleterange":
			require.EqualValues(t, 1, r.Ops, "%+v", r)
		}
		if r.Engine == "bbolt" {
			require.Zero(t, r.Aborts, "bbolt's writers take turns: %+v", r)
		}
	}

	tables := out.String()
	for _, e := range engines {
		require.Contains(t, tables, e.title)
	}
	for _, w := range workloads {
		require.Contains(t, tables, "| "+w.title+" |")
	}
	svg, err := os.ReadFile(svgPath)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(svg), "<svg"))
	entries, err := os.ReadDir(filepath.Join(dir, "runs"))
	require.NoError(t, err)
	require.Empty(t, entries, "every run's directory is removed")
}

// A child that fails (here: an unknown engine) fails the whole run.
func TestFailingChildFailsTheRun(t *testing.T) {
	p := plan{params: params{keys: 10, valueSize: defaultValueSize, reads: 10, duration: 1}, repeats: 1,
		engines: []engine{{name: "nosuch", title: "none"}}, workloads: workloads[:1],
		configs: []config{{name: "defaults"}}, dir: t.TempDir(), progress: &bytes.Buffer{}}
	var err error
	p.exe, err = os.Executable()
	require.NoError(t, err)
	_, err = p.run()
	require.ErrorContains(t, err, "nosuch")
}

// A task's command line gives the child the task back, value size
// included; a child run by hand without -value-size writes 100-byte
// values, and one with a size appendValue cannot make is refused.
func TestTaskArgsRoundTrip(t *testing.T) {
	for _, want := range []task{
		{engine: "strata", workload: "readrandom", config: "defaults", dir: "/tmp/run", repeat: 2,
			params: params{keys: 2000, valueSize: defaultValueSize, reads: 1000, duration: 5 * time.Second}},
		{engine: "pebble-blobs", workload: "scan", config: "equal-memory", cacheBytes: 64 << 20, memtableBytes: 64 << 20,
			dir: "/tmp/run", repeat: 1, params: params{keys: 250_000, valueSize: 4 << 10, reads: 250_000, duration: time.Second}},
		{engine: diskEngine, workload: "append1k", dir: "/tmp/probe", repeat: 3,
			params: params{valueSize: maxValueSize, duration: 200 * time.Millisecond}},
	} {
		got, err := parseTask(want.args())
		require.NoError(t, err)
		require.Equal(t, want, got)
	}

	got, err := parseTask([]string{"-engine", "strata", "-workload", "scan", "-dir", "/tmp/run"})
	require.NoError(t, err)
	require.Equal(t, defaultValueSize, got.valueSize)
	for _, n := range []string{"0", "7", fmt.Sprint(maxValueSize + 1)} {
		_, err = parseTask([]string{"-engine", "strata", "-workload", "scan", "-dir", "/tmp/run", "-value-size", n})
		require.ErrorContains(t, err, "-value-size", n)
	}
}

// The parent refuses a value size appendValue cannot make before it runs
// anything.
func TestMainRefusesBadValueSize(t *testing.T) {
	var out, progress bytes.Buffer
	err := runMain([]string{"-value-size", "4", "-dir", t.TempDir()}, &out, &progress)
	require.ErrorContains(t, err, "-value-size 4")
	require.Empty(t, out.String())
}

// The large-value configurations in one run: Strata with and without its
// blob files and Pebble with its, at 4 KiB values. Every value is checked
// at that size; each result, the JSON and the header carry it; the tables
// set Strata against its inline configuration and against Pebble's, and
// -costs sets disk writes and sizes against the keys' and values' bytes.
func TestLargeValueRun(t *testing.T) {
	dir := t.TempDir()
	jsonPath := filepath.Join(dir, "results.json")
	var out, progress bytes.Buffer
	err := runMain([]string{"-engines", "strata,strata-inline,pebble-blobs", "-workloads", "fillrandom,readrandom,scan",
		"-configs", "defaults", "-value-size", "4096", "-keys", "500", "-repeats", "1", "-probes=false", "-costs",
		"-dir", filepath.Join(dir, "runs"), "-json", jsonPath}, &out, &progress)
	require.NoError(t, err, progress.String())

	b, err := os.ReadFile(jsonPath)
	require.NoError(t, err)
	var results []result
	require.NoError(t, json.Unmarshal(b, &results))
	require.Len(t, results, 3*3)
	for _, r := range results {
		require.Empty(t, r.Unsupported, "%+v", r)
		require.Equal(t, 4096, r.ValueSize, "%+v", r)
		require.EqualValues(t, 500, r.Ops, "%+v", r)
	}
	require.Contains(t, string(b), `"value_size": 4096`)

	tables := out.String()
	require.Contains(t, tables, "values of 4096 bytes")
	require.Contains(t, tables, "| workload | unit | Strata | Strata, no blob files | Pebble, blob files | Strata / best peer | Strata / Pebble | "+
		"Strata / Strata, no blob files | Strata / Pebble, blob files |")
	require.Contains(t, tables, "| bytes written per user byte, fill included (median of repeats) |")
	require.Contains(t, tables, "| space amplification: database size over user bytes (median of repeats) |")
}

// The runs of a repeat are interleaved, and the engines' order rotates from
// one repeat to the next.
func TestTasksInterleaveAndRotate(t *testing.T) {
	p := plan{repeats: 2, engines: engines[:3], workloads: workloads[:2], configs: []config{{name: "defaults"}}}
	var got []string
	for _, tk := range p.tasks() {
		got = append(got, fmt.Sprintf("%d:%s:%s", tk.repeat, tk.workload, tk.engine))
	}
	require.Equal(t, []string{
		"1:fillseq:strata", "1:fillseq:pebble", "1:fillseq:goleveldb",
		"1:fillrandom:strata", "1:fillrandom:pebble", "1:fillrandom:goleveldb",
		"2:fillseq:pebble", "2:fillseq:goleveldb", "2:fillseq:strata",
		"2:fillrandom:pebble", "2:fillrandom:goleveldb", "2:fillrandom:strata",
	}, got)
}
