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
	p := plan{params: params{keys: 10, reads: 10, duration: 1}, repeats: 1,
		engines: []engine{{name: "nosuch", title: "none"}}, workloads: workloads[:1],
		configs: []config{{name: "defaults"}}, dir: t.TempDir(), progress: &bytes.Buffer{}}
	var err error
	p.exe, err = os.Executable()
	require.NoError(t, err)
	_, err = p.run()
	require.ErrorContains(t, err, "nosuch")
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
