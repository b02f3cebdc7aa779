// Command report summarises `go test -bench` output of package bench run
// with -count N: for each benchmark case and store, the median and range
// of its figure over the repeats, as a markdown table with the ratios the
// targets are stated in, and an SVG chart of each store's speed relative to
// raft-wal.
//
//	go test -run '^$' -bench . -count 5 | tee results.txt
//	go run ./report -svg results.svg < results.txt > results.md
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

var stores = []string{"strata", "raftwal", "boltdb"}

// line matches a benchmark result: name, iterations, then value-unit pairs.
var line = regexp.MustCompile(`^(Benchmark\S+?)(-\d+)?\s+\d+\s+(.*)$`)

// metric says which figure of a benchmark is reported, and whether more is
// better.
func metric(name string) (unit string, higher bool) {
	switch {
	case strings.HasPrefix(name, "BenchmarkStoreLogs"):
		return "entries/s", true
	case strings.HasPrefix(name, "BenchmarkClusterApply"):
		return "ops/s", true
	case strings.HasPrefix(name, "BenchmarkDeleteRange"):
		return "delete-ns", false
	default:
		return "ns/op", false
	}
}

type key struct{ bench, store string }

func main() {
	svgPath := flag.String("svg", "", "write the chart to this file")
	flag.Parse()
	samples := map[key][]float64{}
	var order []string
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		name := m[1]
		i := strings.LastIndex(name, "/")
		if i < 0 {
			continue
		}
		k := key{name[:i], name[i+1:]}
		unit, _ := metric(k.bench)
		f := strings.Fields(m[3])
		for j := 0; j+1 < len(f); j += 2 {
			if f[j+1] == unit {
				v, err := strconv.ParseFloat(f[j], 64)
				if err != nil {
					log.Fatal(err)
				}
				samples[k] = append(samples[k], v)
			}
		}
		if !slices.Contains(order, k.bench) {
			order = append(order, k.bench)
		}
	}
	if err := sc.Err(); err != nil {
		log.Fatal(err)
	}
	rows := table(os.Stdout, order, samples)
	if *svgPath != "" {
		f, err := os.Create(*svgPath)
		if err != nil {
			log.Fatal(err)
		}
		chart(f, rows)
		if err := f.Close(); err != nil {
			log.Fatal(err)
		}
	}
}

type stat struct{ median, lo, hi float64 }

func summarise(v []float64) stat {
	s := slices.Clone(v)
	sort.Float64s(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return stat{med, s[0], s[n-1]}
}

type row struct {
	bench string
	speed map[string]float64 // relative to raft-wal, higher is better
}

func table(w io.Writer, order []string, samples map[key][]float64) []row {
	fmt.Fprintln(w, "| benchmark | figure | strata | raft-wal | raft-boltdb | strata / raft-wal | strata / raft-boltdb | repeats |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	var rows []row
	for _, b := range order {
		unit, higher := metric(b)
		st := map[string]stat{}
		n := 0
		for _, s := range stores {
			if v := samples[key{b, s}]; len(v) > 0 {
				st[s] = summarise(v)
				n = len(v)
			}
		}
		cells := []string{strings.TrimPrefix(b, "Benchmark"), unit}
		for _, s := range stores {
			if x, ok := st[s]; ok {
				cells = append(cells, fmt.Sprintf("%s (%s–%s)", num(x.median), num(x.lo), num(x.hi)))
			} else {
				cells = append(cells, "")
			}
		}
		r := row{bench: strings.TrimPrefix(b, "Benchmark"), speed: map[string]float64{}}
		for _, s := range stores {
			if x, ok := st[s]; ok && st["raftwal"].median > 0 {
				r.speed[s] = x.median / st["raftwal"].median
				if !higher {
					r.speed[s] = st["raftwal"].median / x.median
				}
			}
		}
		for _, peer := range []string{"raftwal", "boltdb"} {
			if st[peer].median == 0 || st["strata"].median == 0 {
				cells = append(cells, "")
				continue
			}
			ratio := st["strata"].median / st[peer].median
			if !higher {
				ratio = st[peer].median / st["strata"].median
			}
			cells = append(cells, fmt.Sprintf("%.2f×", ratio))
		}
		cells = append(cells, strconv.Itoa(n))
		fmt.Fprintln(w, "| "+strings.Join(cells, " | ")+" |")
		rows = append(rows, r)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Medians over the repeats, with their range; the ratios are of medians, as speed (above 1: strata is faster).")
	return rows
}

func num(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.1fK", v/1e3)
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	default:
		return fmt.Sprintf("%.3g", v)
	}
}

// chart draws, per benchmark, one bar per store: its speed relative to
// raft-wal on a log scale, 1 marked.
func chart(w io.Writer, rows []row) {
	const (
		left, barH, gap, width = 260, 9, 8, 460
		lo, hi                 = -3.0, 3.0 // log10 of the axis' ends: 0.001× to 1000×
	)
	colors := map[string]string{"strata": "#2b6cb0", "raftwal": "#718096", "boltdb": "#c05621"}
	height := 40 + len(rows)*(3*barH+gap) + 30
	x := func(ratio float64) float64 {
		l := math.Log10(max(ratio, 1e-3))
		return left + (min(l, hi)-lo)/(hi-lo)*width
	}
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n", left+width+20, height)
	fmt.Fprintf(w, `<text x="%d" y="16" font-size="13">Speed relative to raft-wal (log scale; right is faster)</text>`+"\n", 10)
	for i, s := range stores {
		fmt.Fprintf(w, `<rect x="%d" y="24" width="10" height="10" fill="%s"/><text x="%d" y="33">%s</text>`+"\n", left+i*110, colors[s], left+i*110+14, map[string]string{"strata": "strata", "raftwal": "raft-wal", "boltdb": "raft-boltdb"}[s])
	}
	y := 44
	for _, r := range rows {
		fmt.Fprintf(w, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", left-6, y+3*barH/2+4, r.bench)
		for j, s := range stores {
			if v, ok := r.speed[s]; ok {
				fmt.Fprintf(w, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"><title>%s %.2f×</title></rect>`+"\n", left, y+j*barH, x(v)-left, barH-1, colors[s], s, v)
			}
		}
		y += 3*barH + gap
	}
	for _, t := range []float64{0.001, 0.01, 0.1, 1, 10, 100, 1000} {
		dash := ` stroke-dasharray="2,3"`
		if t == 1 {
			dash = ""
		}
		fmt.Fprintf(w, `<line x1="%.1f" y1="40" x2="%.1f" y2="%d" stroke="#333"%s/><text x="%.1f" y="%d" text-anchor="middle">%g×</text>`+"\n", x(t), x(t), y, dash, x(t), y+14, t)
	}
	fmt.Fprintln(w, "</svg>")
}
