package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// cell names one entry of the tables.
type cell struct {
	config, workload, engine string
}

// stat summarises one cell's repeats.
type stat struct {
	n                int
	median, min, max float64
	p50, p99         float64 // medians of the mixed workload's read latencies, µs
	abortsPerCommit  float64 // median of the transaction workloads' aborts over commits
	rss              float64 // median peak RSS, MiB
	written, size    float64 // medians of the disk written and the database's size, MiB
	stall            float64 // median stall time, seconds
	stalled          bool    // the engine reported its stalls
	unsupported      string
}

// summarize groups results by cell and takes each cell's median and range.
func summarize(results []result) map[cell]stat {
	rates := map[cell][]float64{}
	p50s := map[cell][]float64{}
	p99s := map[cell][]float64{}
	rss := map[cell][]float64{}
	written := map[cell][]float64{}
	size := map[cell][]float64{}
	stall := map[cell][]float64{}
	aborts := map[cell][]float64{}
	out := map[cell]stat{}
	for _, r := range results {
		c := cell{r.Config, r.Workload, r.Engine}
		if r.Unsupported != "" {
			out[c] = stat{unsupported: r.Unsupported}
			continue
		}
		rates[c] = append(rates[c], r.Rate)
		if r.PeakRSS > 0 {
			rss[c] = append(rss[c], r.PeakRSS)
		}
		if r.DiskWrittenMiB > 0 {
			written[c] = append(written[c], r.DiskWrittenMiB)
		}
		if r.DBSizeMiB > 0 {
			size[c] = append(size[c], r.DBSizeMiB)
		}
		if r.StallSeconds != nil {
			stall[c] = append(stall[c], *r.StallSeconds)
		}
		if r.Ops > 0 {
			aborts[c] = append(aborts[c], float64(r.Aborts)/float64(r.Ops))
		}
		if r.ReadP50 > 0 {
			p50s[c] = append(p50s[c], r.ReadP50)
			p99s[c] = append(p99s[c], r.ReadP99)
		}
	}
	for c, rs := range rates {
		slices.Sort(rs)
		out[c] = stat{n: len(rs), median: median(rs), min: rs[0], max: rs[len(rs)-1],
			p50: median(p50s[c]), p99: median(p99s[c]), rss: median(rss[c]), abortsPerCommit: median(aborts[c]),
			written: median(written[c]), size: median(size[c]), stall: median(stall[c]), stalled: len(stall[c]) > 0}
	}
	return out
}

// median returns the median of xs (the mean of the middle two for an even
// count), 0 for none. It sorts xs.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	m := len(xs) / 2
	if len(xs)%2 == 0 {
		return (xs[m-1] + xs[m]) / 2
	}
	return xs[m]
}

// human writes v with three significant digits and a K or M suffix.
func human(v float64) string {
	switch {
	case v >= 1e6:
		return trimFloat(v/1e6) + "M"
	case v >= 1e3:
		return trimFloat(v/1e3) + "K"
	default:
		return trimFloat(v)
	}
}

func trimFloat(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// figure is a cell as the tables show it: median, then the range over the
// repeats when there were several.
func (s stat) figure() string {
	switch {
	case s.unsupported != "":
		return "n/a"
	case s.n == 0:
		return ""
	case s.n == 1:
		return human(s.median)
	}
	return fmt.Sprintf("%s (%s–%s)", human(s.median), human(s.min), human(s.max))
}

// ratios returns Strata's median over the best peer's, the best peer's
// title, and Strata's median over Pebble's; a ratio is 0 when either side
// has no figure. Strata's other configurations are not peers.
func ratios(stats map[cell]stat, config, workload string, es []engine) (best float64, bestPeer string, pebble float64) {
	strata := stats[cell{config, workload, "strata"}].median
	var top float64
	for _, e := range es {
		if e.strata {
			continue
		}
		if m := stats[cell{config, workload, e.name}].median; m > top {
			top, bestPeer = m, e.title
		}
	}
	if strata > 0 && top > 0 {
		best = strata / top
	}
	return best, bestPeer, over(stats, cell{config, workload, "strata"}, "pebble")
}

// over returns c's median over that of engine's in the same configuration
// and workload, 0 when either has no figure.
func over(stats map[cell]stat, c cell, engine string) float64 {
	a, b := stats[c].median, stats[cell{c.config, c.workload, engine}].median
	if a == 0 || b == 0 {
		return 0
	}
	return a / b
}

func ratioText(r float64) string {
	if r == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", r)
}

// report is what the tables describe besides the results.
type report struct {
	plan
	header []string // lines printed above the tables: machine, date, sizes
}

// write prints the markdown tables: the disk probes, then per
// configuration one row per workload and one column per engine, and the
// mixed workload's read latencies.
func (rp report) write(w io.Writer, results []result) {
	stats := summarize(results)
	for _, line := range rp.header {
		fmt.Fprintln(w, line)
	}
	fmt.Fprintln(w)
	if rp.probes {
		rp.writeProbes(w, stats)
	}
	for _, c := range rp.configs {
		rp.writeConfig(w, stats, c)
	}
}

func (rp report) writeProbes(w io.Writer, stats map[cell]stat) {
	fmt.Fprintf(w, "### Disk: fdatasync in %s\n\n", rp.dir)
	fmt.Fprintln(w, "| probe | ops/s | µs per op |")
	fmt.Fprintln(w, "|---|---|---|")
	for _, p := range probes {
		s := stats[cell{"", p.name, diskEngine}]
		us := "–"
		if s.median > 0 {
			us = fmt.Sprintf("%.0f", 1e6/s.median)
		}
		fmt.Fprintf(w, "| %s | %s | %s |\n", p.title, s.figure(), us)
	}
	fmt.Fprintln(w)
}

func (rp report) writeConfig(w io.Writer, stats map[cell]stat, c config) {
	switch {
	case c.cacheBytes == 0:
		fmt.Fprintf(w, "### Configuration %s: every engine at its defaults\n\n", c.name)
	case c.name == "budget":
		fmt.Fprintf(w, "### Configuration %s: every engine with a %d MiB block cache; Strata's MemoryBudget, its memstores in it "+
			"(go-sstables and bbolt have none)\n\n", c.name, c.cacheBytes>>20)
	case c.memtableBytes > 0:
		fmt.Fprintf(w, "### Configuration %s: every engine with a %d MiB block cache and %d MiB memtables "+
			"(Strata's MemoryBudget and MemstoreSize; go-sstables and bbolt have neither)\n\n",
			c.name, c.cacheBytes>>20, c.memtableBytes>>20)
	default:
		fmt.Fprintf(w, "### Configuration %s: every engine with a %d MiB block cache (go-sstables and bbolt have none)\n\n",
			c.name, c.cacheBytes>>20)
	}
	cols := []string{"workload", "unit"}
	for _, e := range rp.engines {
		cols = append(cols, e.title)
	}
	cols = append(cols, "Strata / best peer", "Strata / Pebble")
	// The variants in the run (Strata without blob files, Pebble with
	// them), each set against Strata in a column of its own.
	var others []engine
	for _, e := range rp.engines {
		if slices.ContainsFunc(variants, func(v engine) bool { return v.name == e.name }) {
			others = append(others, e)
			cols = append(cols, "Strata / "+e.title)
		}
	}
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(cols, " | "), strings.Repeat("---|", len(cols)))
	for _, wl := range rp.workloads {
		row := []string{wl.title, wl.unit}
		for _, e := range rp.engines {
			row = append(row, stats[cell{c.name, wl.name, e.name}].figure())
		}
		best, peer, pebble := ratios(stats, c.name, wl.name, rp.engines)
		bestText := ratioText(best)
		if best > 0 {
			bestText += " (" + peer + ")"
		}
		row = append(row, bestText, ratioText(pebble))
		for _, e := range others {
			row = append(row, ratioText(over(stats, cell{c.name, wl.name, "strata"}, e.name)))
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}
	fmt.Fprintln(w)
	rp.writeMedians(w, stats, c, "peak RSS (median of repeats)", func(_ workload, s stat) string { return mib(s.rss) })
	if rp.costs {
		rp.writeCosts(w, stats, c)
	}
	rp.writeAborts(w, stats, c)
	if !slices.ContainsFunc(rp.workloads, func(wl workload) bool { return wl.name == "mixed" }) {
		return
	}
	cols = []string{"mixed: read latency (median of repeats)"}
	for _, e := range rp.engines {
		cols = append(cols, e.title)
	}
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(cols, " | "), strings.Repeat("---|", len(cols)))
	for _, q := range []struct {
		name string
		get  func(stat) float64
	}{{"p50", func(s stat) float64 { return s.p50 }}, {"p99", func(s stat) float64 { return s.p99 }}} {
		row := []string{q.name}
		for _, e := range rp.engines {
			v := q.get(stats[cell{c.name, "mixed", e.name}])
			if v == 0 {
				row = append(row, "")
			} else {
				row = append(row, fmt.Sprintf("%.1f µs", v))
			}
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}
	fmt.Fprintln(w)
}

// writeCosts writes the -costs tables: each run's disk writes and its
// database's size after close, the two over the bytes of keys and values
// the database holds (bytes written per user byte, only where the run
// wrote nothing else; space amplification), and its write stalls.
func (rp report) writeCosts(w io.Writer, stats map[cell]stat, c config) {
	rp.writeMedians(w, stats, c, "disk written, fill included (median of repeats)", func(_ workload, s stat) string { return mib(s.written) })
	rp.writeMedians(w, stats, c, "database size after close (median of repeats)", func(_ workload, s stat) string { return mib(s.size) })
	rp.writeMedians(w, stats, c, "bytes written per user byte, fill included (median of repeats)", func(wl workload, s stat) string {
		live, onlyWrites := wl.userBytes(rp.params)
		if !onlyWrites {
			return ""
		}
		return perByte(s.written, live)
	})
	rp.writeMedians(w, stats, c, "space amplification: database size over user bytes (median of repeats)", func(wl workload, s stat) string {
		live, _ := wl.userBytes(rp.params)
		return perByte(s.size, live)
	})
	rp.writeMedians(w, stats, c, "writes stalled, timed part (median of repeats)", func(_ workload, s stat) string {
		if !s.stalled {
			return ""
		}
		return fmt.Sprintf("%.2f s", s.stall)
	})
}

// perByte shows a size in MiB over a count of bytes, "" where either is
// missing.
func perByte(sizeMiB, bytes float64) string {
	if sizeMiB == 0 || bytes == 0 {
		return ""
	}
	return fmt.Sprintf("%.2f", sizeMiB*(1<<20)/bytes)
}

// mib shows a size in MiB, "" for none.
func mib(v float64) string {
	if v == 0 {
		return ""
	}
	return fmt.Sprintf("%.0f MiB", v)
}

// writeMedians writes a table of one figure per workload and engine, as
// show gives it ("" where there is none), with the rows that have one.
func (rp report) writeMedians(w io.Writer, stats map[cell]stat, c config, title string, show func(workload, stat) string) {
	var rows []string
	for _, wl := range rp.workloads {
		row := []string{wl.title}
		seen := false
		for _, e := range rp.engines {
			v := show(wl, stats[cell{c.name, wl.name, e.name}])
			seen = seen || v != ""
			row = append(row, v)
		}
		if seen {
			rows = append(rows, "| "+strings.Join(row, " | ")+" |")
		}
	}
	if len(rows) == 0 {
		return
	}
	cols := []string{title}
	for _, e := range rp.engines {
		cols = append(cols, e.title)
	}
	fmt.Fprintf(w, "| %s |\n|%s\n%s\n\n", strings.Join(cols, " | "), strings.Repeat("---|", len(cols)), strings.Join(rows, "\n"))
}

// writeAborts writes, for the workloads that run transactions, each
// engine's aborts per commit: the median over the repeats of each run's
// aborts (conflicts retried) over its commits.
func (rp report) writeAborts(w io.Writer, stats map[cell]stat, c config) {
	var rows []string
	for _, wl := range rp.workloads {
		if !slices.ContainsFunc(wl.needs, func(cp capability) bool { return cp.name == canTransact.name }) {
			continue
		}
		row := []string{wl.title}
		for _, e := range rp.engines {
			s := stats[cell{c.name, wl.name, e.name}]
			switch {
			case s.unsupported != "":
				row = append(row, "n/a")
			case s.n == 0:
				row = append(row, "")
			default:
				row = append(row, strconv.FormatFloat(s.abortsPerCommit, 'g', 3, 64))
			}
		}
		rows = append(rows, "| "+strings.Join(row, " | ")+" |")
	}
	if len(rows) == 0 {
		return
	}
	cols := []string{"aborts per commit (median of repeats)"}
	for _, e := range rp.engines {
		cols = append(cols, e.title)
	}
	fmt.Fprintf(w, "| %s |\n|%s\n%s\n\n", strings.Join(cols, " | "), strings.Repeat("---|", len(cols)), strings.Join(rows, "\n"))
}
