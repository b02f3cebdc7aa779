package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// config is one column set of the tables: the options every engine gets
// besides a workload's sync mode.
type config struct {
	name          string
	cacheBytes    int64 // 0: each engine's default
	memtableBytes int64 // 0: each engine's default
}

// plan is a whole benchmark run.
type plan struct {
	params
	repeats   int
	engines   []engine
	workloads []workload
	configs   []config
	probes    bool   // run the disk probes too
	costs     bool   // tabulate disk writes, database sizes and stalls
	dir       string // where each task gets a fresh directory
	exe       string // the binary that runs children
	progress  io.Writer
}

// tasks lists the runs in the order they run: for each repeat, the disk
// probes, then per configuration and workload every engine in turn, the
// engines' order rotated from one repeat to the next so that none always
// runs first (or right after another's heavy fill).
func (p plan) tasks() []task {
	var ts []task
	for r := 1; r <= p.repeats; r++ {
		if p.probes {
			for _, pr := range probes {
				ts = append(ts, task{engine: diskEngine, workload: pr.name, repeat: r, params: p.params})
			}
		}
		for _, c := range p.configs {
			for _, w := range p.workloads {
				for j := range p.engines {
					e := p.engines[(j+r-1)%len(p.engines)]
					ts = append(ts, task{engine: e.name, workload: w.name, config: c.name,
						cacheBytes: c.cacheBytes, memtableBytes: c.memtableBytes, repeat: r, params: p.params})
				}
			}
		}
	}
	return ts
}

// run runs every task, each in a fresh process on a fresh directory, and
// returns their results. It stops at the first task that fails: a value
// read back wrong fails the whole run.
func (p plan) run() ([]result, error) {
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		return nil, err
	}
	ts := p.tasks()
	var results []result
	start := time.Now()
	for i, t := range ts {
		r, err := p.runTask(t)
		if err != nil {
			return results, err
		}
		results = append(results, r)
		fmt.Fprintf(p.progress, "[%d/%d %s] r%d %s %s %s: %s\n", i+1, len(ts),
			time.Since(start).Round(time.Second), t.repeat, t.config, t.workload, t.engine, progressFigure(r))
	}
	return results, nil
}

// runTask runs t in a child process on a fresh directory under p.dir, which
// it removes afterwards.
func (p plan) runTask(t task) (result, error) {
	dir, err := os.MkdirTemp(p.dir, t.engine+"-"+t.workload+"-")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(dir)
	t.dir = dir
	var out bytes.Buffer
	cmd := exec.Command(p.exe, t.args()...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return result{}, fmt.Errorf("peers: %s %s %s repeat %d: %w", t.engine, t.workload, t.config, t.repeat, err)
	}
	lines := bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n"))
	var r result
	if err := json.Unmarshal(lines[len(lines)-1], &r); err != nil {
		return result{}, fmt.Errorf("peers: %s %s: result %q: %w", t.engine, t.workload, lines[len(lines)-1], err)
	}
	r.PeakRSS = peakRSS(cmd.ProcessState)
	r.DiskWrittenMiB = diskWritten(cmd.ProcessState)
	return r, nil
}

// progressFigure is a result as the progress lines show it.
func progressFigure(r result) string {
	if r.Unsupported != "" {
		return "not supported"
	}
	s := fmt.Sprintf("%s %s (%.2f s", human(r.Rate), r.Unit, r.Seconds)
	if r.FillSeconds > 0 {
		s += fmt.Sprintf(", fill %.2f s", r.FillSeconds)
	}
	if r.Aborts > 0 {
		s += fmt.Sprintf(", %d aborts", r.Aborts)
	}
	if r.ReadP99 > 0 {
		s += fmt.Sprintf(", read p50 %.1f µs p99 %.1f µs", r.ReadP50, r.ReadP99)
	}
	return s + ")"
}

// writeJSON writes the raw results to path, indented, one object per result.
func writeJSON(path string, results []result) error {
	b, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
