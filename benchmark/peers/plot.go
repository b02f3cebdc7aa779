package main

import (
	"fmt"
	"html"
	"strings"
)

// Layout of the chart, in pixels.
const (
	plotWidth      = 860
	plotLabelWidth = 220
	plotBarHeight  = 12
	plotTop        = 56
	plotBottom     = 36
)

// plotColors are the configurations' bar colours, in configuration order.
var plotColors = []string{"#2b6cb0", "#90cdf4", "#2c7a7b", "#9ae6b4"}

// plotSVG draws Strata's throughput over the best peer's, per workload
// (a group) and configuration (a bar in it), on a linear scale with a line
// at 1: a bar past the line is a workload where Strata leads.
func plotSVG(rp report, results []result) string {
	stats := summarize(results)
	type bar struct {
		ratio float64
		label string
	}
	groups := make([][]bar, len(rp.workloads))
	top := 1.0
	for i, wl := range rp.workloads {
		for _, c := range rp.configs {
			r, peer, _ := ratios(stats, c.name, wl.name, rp.engines)
			label := "no figure"
			if r > 0 {
				label = fmt.Sprintf("%.2f × %s", r, peer)
			}
			groups[i] = append(groups[i], bar{r, label})
			top = max(top, r)
		}
	}
	top *= 1.15
	groupHeight := plotBarHeight*len(rp.configs) + 14
	height := plotTop + groupHeight*len(groups) + plotBottom
	scale := func(r float64) float64 { return r / top * float64(plotWidth-plotLabelWidth-150) }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", plotWidth, height)
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	fmt.Fprintf(&b, `<text x="10" y="20" font-weight="bold">Strata's throughput over the best peer's (%s keys; medians of %d runs each)</text>`+"\n",
		human(float64(rp.keys)), rp.repeats)
	for j, c := range rp.configs {
		x := plotLabelWidth + j*170
		fmt.Fprintf(&b, `<rect x="%d" y="32" width="10" height="10" fill="%s"/><text x="%d" y="41">%s</text>`+"\n",
			x, plotColors[j%len(plotColors)], x+14, html.EscapeString(c.name))
	}
	y := plotTop
	for i, wl := range rp.workloads {
		fmt.Fprintf(&b, `<text x="10" y="%d">%s</text>`+"\n", y+groupHeight/2, html.EscapeString(wl.title))
		for j, br := range groups[i] {
			by := y + j*plotBarHeight
			w := scale(br.ratio)
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>`, plotLabelWidth, by, w, plotBarHeight-2, plotColors[j%len(plotColors)])
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="10">%s</text>`+"\n", float64(plotLabelWidth)+w+4, by+plotBarHeight-3, html.EscapeString(br.label))
		}
		y += groupHeight
	}
	one := float64(plotLabelWidth) + scale(1)
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#c53030" stroke-dasharray="4 3"/>`+"\n", one, plotTop-4, one, y)
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" fill="#c53030" text-anchor="middle">1.0 = best peer</text>`+"\n", one, y+16)
	b.WriteString("</svg>\n")
	return b.String()
}
