// Command plot draws the throughput of the headline benchmarks, from go
// test -bench output, as an SVG bar chart (log scale), with go-sstables'
// published figures and the reference engines' figures beside Strata's where
// the benchmark names match:
//
//	make bench > bench.txt
//	go run ./benchmark/plot -o benchmark/throughput.svg bench.txt
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"strconv"
	"strings"
)

// row is one bar pair of the chart.
type row struct {
	label     string
	benchmark string  // name without the -GOMAXPROCS suffix
	unit      string  // the metric to plot
	reference float64 // the other system's figure, 0 if none
}

type panel struct {
	title, unit, reference string
	rows                   []row
}

var panels = []panel{
	{"RecordIO and SSTables (MB/s; go-sstables' figures from its published tables)", "MB/s", "go-sstables", []row{
		{"RecordIO write, 1 KB records", "BenchmarkRecordIOWrite/RecordSize1k", "MB/s", 1004},
		{"RecordIO write, 1 MB records", "BenchmarkRecordIOWrite/RecordSize1M", "MB/s", 0},
		{"RecordIO gzip write, 1 KB", "BenchmarkRecordIOWrite/GzipRecordSize1k", "MB/s", 3.0},
		{"RecordIO gzip write, 1 MB", "BenchmarkRecordIOWrite/GzipRecordSize1M", "MB/s", 55.6},
		{"RecordIO snappy write, 1 KB", "BenchmarkRecordIOWrite/SnappyRecordSize1k", "MB/s", 461},
		{"RecordIO synced write, 1 KB", "BenchmarkRecordIOWrite/SyncRecordSize1k", "MB/s", 2.26},
		{"RecordIO read, 1 GB", "BenchmarkRecordIORead/1024mb", "MB/s", 1300},
		{"RecordIO read, 1 GB, zero-copy", "BenchmarkRecordIORead/ZeroCopy/1024mb", "MB/s", 0},
		{"SSTable full scan, 1 GB", "BenchmarkSSTableScanDefault/none/1024mb", "MB/s", 950},
		{"Memstore flush, 1 GB", "BenchmarkSSTableMemstoreFlush/none/1024mb", "MB/s", 0},
	}},
	{"SimpleDB (operations/s; reference: the best embedded engines on this machine class)", "ops/s", "reference", []row{
		{"Fill, sequential keys", "BenchmarkSimpleDBFillSeq", "ops/s", 770000},
		{"Fill, random keys", "BenchmarkSimpleDBFillRandom", "ops/s", 410000},
		{"Random point reads", "BenchmarkSimpleDBReadRandom", "ops/s", 230000},
		{"50/50 reads and updates, 4 goroutines", "BenchmarkSimpleDBMixed", "ops/s", 145000},
		{"Synced writes, 1 writer", "BenchmarkSimpleDBSyncedWrites/writers=1", "ops/s", 0},
		{"Synced writes, 64 writers (reference: 32)", "BenchmarkSimpleDBSyncedWrites/writers=64", "ops/s", 47000},
		{"Full scan (entries/s)", "BenchmarkSimpleDBScan", "entries/s", 5400000},
	}},
}

// parse reads go test -bench output into benchmark -> unit -> value.
func parse(r io.Reader) (map[string]map[string]float64, error) {
	results := map[string]map[string]float64{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") {
			continue
		}
		name := fields[0]
		if i := strings.LastIndex(name, "-"); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		metrics := map[string]float64{}
		for i := 2; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				break
			}
			metrics[fields[i+1]] = v
		}
		results[name] = metrics
	}
	return results, sc.Err()
}

func main() {
	out := flag.String("o", "throughput.svg", "the SVG to write")
	flag.Parse()
	var in io.Reader = os.Stdin
	if flag.NArg() > 0 {
		f, err := os.Open(flag.Arg(0))
		if err != nil {
			log.Fatal(err)
		}
		defer f.Close()
		in = f
	}
	results, err := parse(in)
	if err != nil {
		log.Fatal(err)
	}
	svg, missing := render(results)
	for _, m := range missing {
		log.Printf("no result for %s", m)
	}
	if err := os.WriteFile(*out, []byte(svg), 0o644); err != nil {
		log.Fatal(err)
	}
}

const (
	width      = 980
	labelWidth = 300
	barHeight  = 11
	rowHeight  = 32
	titleSpace = 48
)

// render draws every panel; bars are on a log scale per panel, since the
// figures span four orders of magnitude.
func render(results map[string]map[string]float64) (string, []string) {
	var b strings.Builder
	var missing []string
	height := 20
	for _, p := range panels {
		height += titleSpace + rowHeight*len(p.rows) + 20
	}
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	y := 20
	for _, p := range panels {
		maxV := 1.0
		for _, r := range p.rows {
			maxV = max(maxV, results[r.benchmark][r.unit], r.reference)
		}
		scale := func(v float64) float64 {
			if v <= 1 {
				return 0
			}
			return math.Log10(v) / math.Log10(maxV) * float64(width-labelWidth-120)
		}
		fmt.Fprintf(&b, `<text x="10" y="%d" font-weight="bold">%s</text>`+"\n", y+14, p.title)
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="10" height="10" fill="#2b6cb0"/><text x="%d" y="%d">Strata</text>`+"\n", labelWidth, y+24, labelWidth+14, y+33)
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="10" height="10" fill="#bbb"/><text x="%d" y="%d">%s</text>`+"\n", labelWidth+80, y+24, labelWidth+94, y+33, p.reference)
		y += titleSpace
		for _, r := range p.rows {
			v, ok := results[r.benchmark][r.unit]
			if !ok {
				missing = append(missing, r.benchmark)
			}
			fmt.Fprintf(&b, `<text x="10" y="%d">%s</text>`+"\n", y+12, r.label)
			figure := human(v, r.unit)
			if !ok {
				figure = "not measured"
			}
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="#2b6cb0"/>`, labelWidth, y+2, scale(v), barHeight)
			fmt.Fprintf(&b, `<text x="%.1f" y="%d">%s</text>`+"\n", float64(labelWidth)+scale(v)+6, y+12, figure)
			if r.reference > 0 {
				fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="#bbb"/>`, labelWidth, y+15, scale(r.reference), barHeight)
				fmt.Fprintf(&b, `<text x="%.1f" y="%d" fill="#555">%s</text>`+"\n", float64(labelWidth)+scale(r.reference)+6, y+25, human(r.reference, r.unit))
			}
			y += rowHeight
		}
		y += 20
	}
	b.WriteString("</svg>\n")
	return b.String(), missing
}

func human(v float64, unit string) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2fM %s", v/1e6, unit)
	case v >= 1e4:
		return fmt.Sprintf("%.0fK %s", v/1e3, unit)
	case v >= 100:
		return fmt.Sprintf("%.0f %s", v, unit)
	default:
		return fmt.Sprintf("%.2f %s", v, unit)
	}
}
