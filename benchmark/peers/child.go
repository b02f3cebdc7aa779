package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"
)

// childEnv, set in a process's environment, makes it a child: it runs one
// engine's workload (or one disk probe) as its flags say, prints the result
// as a JSON line and exits.
const childEnv = "STRATA_PEERS_CHILD"

// profileEnv, set in a child's environment, names a file for a CPU profile
// of its timed workload: not the fill, the reopen or the close.
const profileEnv = "STRATA_PEERS_CPUPROFILE"

// profile starts the CPU profile profileEnv asks for, if any, and returns
// what stops it.
func profile() (stop func(), err error) {
	path := os.Getenv(profileEnv)
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// task is what a child runs.
type task struct {
	engine, workload, config  string
	cacheBytes, memtableBytes int64
	dir                       string
	repeat                    int
	params
}

// args returns the child's command line for t.
func (t task) args() []string {
	return []string{
		"-engine", t.engine, "-workload", t.workload, "-config", t.config,
		"-cache-bytes", fmt.Sprint(t.cacheBytes), "-memtable-bytes", fmt.Sprint(t.memtableBytes), "-dir", t.dir, "-repeat", fmt.Sprint(t.repeat),
		"-keys", fmt.Sprint(t.keys), "-value-size", fmt.Sprint(t.valueSize), "-reads", fmt.Sprint(t.reads), "-duration", t.duration.String(),
	}
}

// parseTask reads a child's command line.
func parseTask(args []string) (task, error) {
	var t task
	fs := flag.NewFlagSet("child", flag.ContinueOnError)
	fs.StringVar(&t.engine, "engine", "", "engine, or disk for a probe")
	fs.StringVar(&t.workload, "workload", "", "workload or probe")
	fs.StringVar(&t.config, "config", "", "configuration name")
	fs.Int64Var(&t.cacheBytes, "cache-bytes", 0, "block cache size; 0 for the engine's default")
	fs.Int64Var(&t.memtableBytes, "memtable-bytes", 0, "memtable size; 0 for the engine's default")
	fs.StringVar(&t.dir, "dir", "", "fresh directory to run in")
	fs.IntVar(&t.repeat, "repeat", 0, "repeat number, for the result")
	fs.IntVar(&t.keys, "keys", 0, "keys")
	fs.IntVar(&t.valueSize, "value-size", defaultValueSize, "value length of the fill, read, scan and mixed workloads")
	fs.IntVar(&t.reads, "reads", 0, "reads")
	fs.DurationVar(&t.duration, "duration", 0, "length of timed workloads")
	if err := fs.Parse(args); err != nil {
		return t, err
	}
	if t.dir == "" {
		return t, errors.New("peers: child without -dir")
	}
	return t, checkValueSize(t.valueSize)
}

// runChild runs the task its arguments describe and writes the result to
// out.
func runChild(args []string, out io.Writer) error {
	t, err := parseTask(args)
	if err != nil {
		return err
	}
	var r result
	if t.engine == diskEngine {
		r, err = t.probe()
	} else {
		r, err = t.run()
	}
	if err != nil {
		return fmt.Errorf("%s %s %s: %w", t.engine, t.workload, t.config, err)
	}
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "%s\n", line)
	return err
}

// result returns the result of t for measure m.
func (t task) result(unit string, m measure) result {
	r := result{
		Engine: t.engine, Workload: t.workload, Config: t.config, Repeat: t.repeat, Keys: t.keys, ValueSize: t.valueSize,
		Ops: m.ops, Seconds: m.elapsed.Seconds(), Unit: unit,
	}
	if m.elapsed > 0 {
		r.Rate = float64(m.ops) / m.elapsed.Seconds()
	}
	return r
}

func (t task) probe() (result, error) {
	p, err := findProbe(t.workload)
	if err != nil {
		return result{}, err
	}
	m, err := p.run(t.dir, t.duration)
	r := t.result("ops/s", m)
	r.Config, r.ValueSize = "", 0
	return r, err
}

// run opens the engine, checks that it has what the workload needs, fills
// it first if the workload needs that (unsynced, whatever the workload's
// sync mode; then closes it and reopens it as the workload asks: reads
// then come from what the engine made of its fill, not straight from its
// write path), runs the timed workload and closes the engine. The database
// is t.dir/db; a workload's second database (the checkpoint's copy) goes in
// t.dir/spare.
func (t task) run() (result, error) {
	e, err := findEngine(t.engine)
	if err != nil {
		return result{}, err
	}
	w, err := findWorkload(t.workload)
	if err != nil {
		return result{}, err
	}
	s := settings{sync: w.sync, cacheBytes: t.cacheBytes, memtableBytes: t.memtableBytes, wholeBudget: t.config == "budget"}
	dir := filepath.Join(t.dir, "db")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return result{}, err
	}
	t.spare = filepath.Join(t.dir, "spare")
	t.open = func(dir string) (Engine, error) { return e.open(dir, s) }
	first := s // the settings of the first open: the fill's, if any
	var order *permutation
	if w.filled {
		order = fillOrder(t.keys)
		first.sync = false
	}
	start := time.Now()
	db, err := e.open(dir, first)
	if err != nil {
		return result{}, fmt.Errorf("open: %w", err)
	}
	for _, c := range w.needs {
		if !c.of(db) {
			r := t.result(w.unit, measure{})
			r.Unsupported = "no " + c.name
			return r, db.Close()
		}
	}
	var fillTime, reopenTime time.Duration
	if w.filled {
		if err := fillAndClose(db, t.keys, order, w.valueSize(t.params)); err != nil {
			return result{}, err
		}
		fillTime = time.Since(start)
		reopen := time.Now()
		if db, err = e.open(dir, s); err != nil {
			return result{}, fmt.Errorf("reopen after fill: %w", err)
		}
		reopenTime = time.Since(reopen)
	}
	stopProfile, err := profile()
	if err != nil {
		db.Close()
		return result{}, err
	}
	m, err := w.run(db, t.params)
	stopProfile()
	var stall *float64
	if s, ok := db.(staller); ok {
		seconds := s.StallTime().Seconds()
		stall = &seconds
	}
	closeTime, closeErr := timed(db.Close)
	if err != nil {
		return result{}, err
	}
	if closeErr != nil {
		return result{}, fmt.Errorf("close: %w", closeErr)
	}
	r := t.result(w.unit, m)
	r.FillSeconds = fillTime.Seconds()
	r.ReopenSeconds = reopenTime.Seconds()
	r.CloseSeconds = closeTime.Seconds()
	r.Aborts = m.aborts
	r.StallSeconds = stall
	if r.DBSizeMiB, err = dirMiB(dir); err != nil {
		return result{}, err
	}
	if m.reads != nil && m.reads.n > 0 {
		r.ReadP50 = float64(m.reads.quantile(0.50).Nanoseconds()) / 1e3
		r.ReadP99 = float64(m.reads.quantile(0.99).Nanoseconds()) / 1e3
	}
	return r, nil
}

// fillAndClose writes key order.at(i) for every i, with its value of
// valueSize bytes, unsynced, into db, then closes it.
func fillAndClose(db Engine, keys int, order *permutation, valueSize int) error {
	if err := fill(db, keys, order, valueSize); err != nil {
		db.Close()
		return fmt.Errorf("fill: %w", err)
	}
	if err := db.Close(); err != nil {
		return fmt.Errorf("close after fill: %w", err)
	}
	return nil
}

// dirMiB returns the size of the files under dir, in MiB.
func dirMiB(dir string) (float64, error) {
	var size int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			size += info.Size()
		}
		return err
	})
	return float64(size) / (1 << 20), err
}
