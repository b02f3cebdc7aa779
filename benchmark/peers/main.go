package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

func main() {
	if os.Getenv(childEnv) != "" {
		if err := runChild(os.Args[1:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if err := runMain(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// runMain runs the benchmark its arguments describe, printing the tables to
// out and progress to progress.
func runMain(args []string, out, progress io.Writer) error {
	fs := flag.NewFlagSet("peers", flag.ContinueOnError)
	fs.SetOutput(progress)
	keys := fs.Int("keys", 1_000_000, "keys in the fills, and in the database of the read, scan, mixed and uncontended transaction workloads")
	valueSize := fs.Int("value-size", defaultValueSize, fmt.Sprintf("value length of the fill, read, scan and mixed workloads, in bytes; "+
		"the synced workloads write %d-byte values, the transaction workloads %d-byte accounts and the counter workloads 8-byte counters, whatever it says",
		syncValueSize, accountSize))
	reads := fs.Int("reads", 0, "Gets of readrandom and readzipf; 0 means as many as -keys")
	repeats := fs.Int("repeats", 3, "runs of every engine and workload; the tables show the median and range")
	duration := fs.Duration("duration", 5*time.Second, "length of the synced-write, mixed, transaction and counter workloads and of each disk probe")
	cacheMiB := fs.Int64("cache-mib", 128, "block cache of every engine in the equal-cache configuration")
	memoryMiB := fs.Int64("memory-mib", 64, "block cache and memtable size of every engine in the equal-memory configuration")
	engineList := fs.String("engines", names(engines, func(e engine) string { return e.name }),
		"engines to run, comma-separated; "+names(variants, func(e engine) string { return e.name })+
			" (Strata without blob files, Pebble with them) run only when named")
	workloadList := fs.String("workloads", names(workloads, func(w workload) string { return w.name }), "workloads to run, comma-separated")
	configList := fs.String("configs", "defaults,equal-cache", "configurations to run, comma-separated: defaults, equal-cache, budget, equal-memory")
	probeDisk := fs.Bool("probes", true, "measure fdatasync of appends and overwrites in -dir")
	costs := fs.Bool("costs", false, "also tabulate each run's disk writes, database size and write stalls")
	dir := fs.String("dir", filepath.Join(os.TempDir(), "strata-peers"), "directory on the disk under test; every run gets a fresh one inside it")
	jsonPath := fs.String("json", "", "file to write the raw results to, as JSON")
	svgPath := fs.String("svg", "", "file to draw Strata's ratio to the best peer in, as SVG")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *keys <= 0 || *repeats <= 0 || *duration <= 0 {
		return errors.New("peers: -keys, -repeats and -duration must be positive")
	}
	if err := checkValueSize(*valueSize); err != nil {
		return err
	}
	if *reads <= 0 {
		*reads = *keys
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	p := plan{
		params:   params{keys: *keys, valueSize: *valueSize, reads: *reads, duration: *duration},
		repeats:  *repeats,
		probes:   *probeDisk,
		costs:    *costs,
		dir:      *dir,
		exe:      exe,
		progress: progress,
	}
	if p.engines, err = pick(*engineList, findEngine); err != nil {
		return err
	}
	if p.workloads, err = pick(*workloadList, findWorkload); err != nil {
		return err
	}
	if p.configs, err = pick(*configList, func(name string) (config, error) {
		switch name {
		case "defaults":
			return config{name: name}, nil
		case "equal-cache", "budget":
			return config{name: name, cacheBytes: *cacheMiB << 20}, nil
		case "equal-memory":
			return config{name: name, cacheBytes: *memoryMiB << 20, memtableBytes: *memoryMiB << 20}, nil
		}
		return config{}, fmt.Errorf("peers: no configuration %q", name)
	}); err != nil {
		return err
	}

	rp := report{plan: p, header: header(p, time.Now())}
	results, err := p.run()
	if err != nil {
		if *jsonPath != "" && len(results) > 0 {
			err = errors.Join(err, writeJSON(*jsonPath, results))
		}
		return err
	}
	rp.write(out, results)
	if *jsonPath != "" {
		if err := writeJSON(*jsonPath, results); err != nil {
			return err
		}
	}
	if *svgPath != "" {
		if err := os.WriteFile(*svgPath, []byte(plotSVG(rp, results)), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// pick looks up each comma-separated name in list.
func pick[T any](list string, find func(string) (T, error)) ([]T, error) {
	var out []T
	for name := range strings.SplitSeq(list, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		v, err := find(name)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("peers: nothing chosen in %q", list)
	}
	return out, nil
}

// names joins the names of xs with commas, for flag defaults.
func names[T any](xs []T, name func(T) string) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = name(x)
	}
	return strings.Join(s, ",")
}

// header describes the run: when, where, how large, and the engines'
// versions as built into this binary.
func header(p plan, now time.Time) []string {
	lines := []string{
		"## Strata and its peers",
		"",
		fmt.Sprintf("%s; %s, %s/%s, %d CPUs%s; directory %s.", now.Format("2006-01-02 15:04"),
			runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), cpuModel(), p.dir),
		fmt.Sprintf("%d keys of %d bytes, values of %d bytes (synced workloads: %d; accounts: %d), %d reads, %s per timed workload; one process and one fresh directory per run.",
			p.keys, keySize, p.valueSize, syncValueSize, accountSize, p.reads, p.duration),
		fmt.Sprintf("Repeats: %d; a figure is the median, with the range over the repeats in brackets.", p.repeats),
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		var mods []string
		for _, m := range info.Deps {
			for _, prefix := range []string{"github.com/cockroachdb/pebble", "github.com/syndtr/goleveldb", "github.com/dgraph-io/badger", "github.com/thomasjungblut/go-sstables", "go.etcd.io/bbolt"} {
				if strings.HasPrefix(m.Path, prefix) {
					mods = append(mods, m.Path+" "+m.Version)
				}
			}
		}
		if len(mods) > 0 {
			lines = append(lines, "Peers: "+strings.Join(mods, ", ")+".")
		}
	}
	return lines
}

// cpuModel returns ", " and the processor's model name on Linux, or "".
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if name, ok := strings.CutPrefix(line, "model name"); ok {
			return ", " + strings.TrimSpace(strings.TrimLeft(name, " \t:"))
		}
	}
	return ""
}
