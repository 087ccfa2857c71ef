// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/otelcol-sdp/otelcol-sdp/benchmarks/internal/chart"
)

// A namedChart is a sweep chart with its file name and the sweep's rows.
type namedChart struct {
	file  string
	key   string
	xKey  string
	chart chart.Chart
	// rows by x value, then series label: the median result.
	xs    []float64
	cells map[float64]map[string]result
}

// sweepKey returns the first x key present in bn, or "".
func sweepKey(bn benchName, xKeys []string) string {
	for _, k := range bn.keys {
		if slices.Contains(xKeys, k) {
			return k
		}
	}
	return ""
}

func buildCharts(results []result, o options) []*namedChart {
	var charts []*namedChart
	byKey := map[string]*namedChart{}
	for _, r := range results {
		bn := splitName(r.name)
		xk := sweepKey(bn, o.xKeys)
		if xk == "" {
			continue
		}
		x, err := strconv.ParseFloat(bn.vals[xk], 64)
		if err != nil || x <= 0 {
			continue
		}
		rest := bn.without(append([]string{xk}, o.series...)...)
		key := strings.TrimPrefix(bn.top, "Benchmark") + " " + rest
		nc, ok := byKey[key]
		if !ok {
			file := strings.TrimPrefix(bn.top, "Benchmark")
			if rest != "" {
				file += "_" + strings.NewReplacer("=", "-", "/", "_").Replace(rest)
			}
			nc = &namedChart{file: file + ".png", key: key, xKey: xk, cells: map[float64]map[string]result{},
				chart: chart.Chart{Title: key + ": ns per KiB", XLabel: xk + " (log scale)", YLabel: "ns/KiB"}}
			byKey[key] = nc
			charts = append(charts, nc)
		}
		var label []string
		for _, k := range o.series {
			if v, ok := bn.vals[k]; ok {
				label = append(label, v)
			}
		}
		lbl := strings.Join(label, " ")
		i := slices.IndexFunc(nc.chart.Series, func(s chart.Series) bool { return s.Label == lbl })
		if i < 0 {
			nc.chart.Series = append(nc.chart.Series, chart.Series{Label: lbl})
			i = len(nc.chart.Series) - 1
		}
		nc.chart.Series[i].Points = append(nc.chart.Series[i].Points, chart.Point{X: x, Y: r.nsPerKB()})
		if nc.cells[x] == nil {
			nc.cells[x] = map[string]result{}
			nc.xs = append(nc.xs, x)
		}
		nc.cells[x][lbl] = r
	}
	for _, nc := range charts {
		slices.Sort(nc.xs)
	}
	return charts
}

// writeTables writes the ratio tables of the non-sweep benchmarks, then one
// ns-per-KiB table per sweep chart.
func writeTables(w io.Writer, results []result, charts []*namedChart, o options) error {
	type row struct {
		key   string
		cells map[string]result
	}
	var tops []string
	rows := map[string][]*row{}
	impls := map[string][]string{}
	for _, r := range results {
		bn := splitName(r.name)
		impl, ok := bn.vals[o.implKey]
		if !ok || sweepKey(bn, o.xKeys) != "" {
			continue
		}
		if _, seen := rows[bn.top]; !seen {
			tops = append(tops, bn.top)
		}
		rk := bn.without(o.implKey)
		i := slices.IndexFunc(rows[bn.top], func(r *row) bool { return r.key == rk })
		if i < 0 {
			rows[bn.top] = append(rows[bn.top], &row{key: rk, cells: map[string]result{}})
			i = len(rows[bn.top]) - 1
		}
		rows[bn.top][i].cells[impl] = r
		if !slices.Contains(impls[bn.top], impl) {
			impls[bn.top] = append(impls[bn.top], impl)
		}
	}
	var b strings.Builder
	for _, top := range tops {
		others := slices.DeleteFunc(slices.Clone(impls[top]), func(s string) bool { return s == o.base })
		fmt.Fprintf(&b, "#### %s (median time per request)\n\n| configuration | %s |", strings.TrimPrefix(top, "Benchmark"), o.base)
		for _, im := range others {
			if slices.Contains(o.inverse, im) {
				fmt.Fprintf(&b, " %s | %s ÷ %s |", im, im, o.base)
			} else {
				fmt.Fprintf(&b, " %s | %s ÷ %s |", im, o.base, im)
			}
		}
		b.WriteString("\n|---|---:|")
		for range others {
			b.WriteString("---:|---:|")
		}
		b.WriteString("\n")
		for _, r := range rows[top] {
			base, ok := r.cells[o.base]
			fmt.Fprintf(&b, "| %s | %s |", r.key, cell(base, ok))
			for _, im := range others {
				c, cok := r.cells[im]
				ratio := "–"
				if ok && cok && c.metrics["ns/op"] > 0 && base.metrics["ns/op"] > 0 {
					q := base.metrics["ns/op"] / c.metrics["ns/op"]
					if slices.Contains(o.inverse, im) {
						q = 1 / q
					}
					ratio = fmt.Sprintf("%.3gx", q)
				}
				fmt.Fprintf(&b, " %s | %s |", cell(c, cok), ratio)
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	for _, nc := range charts {
		fmt.Fprintf(&b, "#### %s: ns per KiB (median)\n\n| %s |", nc.key, nc.xKey)
		for _, s := range nc.chart.Series {
			fmt.Fprintf(&b, " %s |", s.Label)
		}
		b.WriteString(" size | extra |\n|---:|")
		for range nc.chart.Series {
			b.WriteString("---:|")
		}
		b.WriteString("---:|---|\n")
		for _, x := range nc.xs {
			fmt.Fprintf(&b, "| %s |", chart.SizeLabel(x))
			var size float64
			var extra []string
			for _, s := range nc.chart.Series {
				r, ok := nc.cells[x][s.Label]
				if !ok {
					b.WriteString(" – |")
					continue
				}
				fmt.Fprintf(&b, " %s |", num(r.nsPerKB()))
				if size == 0 {
					size = r.metrics[bytesUnit]
				}
				for unit, v := range r.metrics {
					if !slices.Contains([]string{"ns/op", "MB/s", "B/op", "allocs/op", "ns/resource", bytesUnit}, unit) &&
						!slices.Contains(extra, fmt.Sprintf("%g %s", v, unit)) {
						extra = append(extra, fmt.Sprintf("%g %s", v, unit))
					}
				}
			}
			slices.Sort(extra)
			fmt.Fprintf(&b, " %s | %s |\n", byteSize(size), strings.Join(extra, ", "))
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// cell formats a median time with its unit and allocations.
func cell(r result, ok bool) string {
	if !ok {
		return "–"
	}
	return fmt.Sprintf("%s (%g allocs)", duration(r.metrics["ns/op"]), r.metrics["allocs/op"])
}

func duration(ns float64) string {
	switch {
	case ns >= 1e6:
		return fmt.Sprintf("%.3g ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.3g µs", ns/1e3)
	}
	return fmt.Sprintf("%.3g ns", ns)
}

func byteSize(b float64) string {
	switch {
	case b >= 1e6:
		return fmt.Sprintf("%.2f MB", b/1e6)
	case b >= 1e3:
		return fmt.Sprintf("%.1f KB", b/1e3)
	}
	return fmt.Sprintf("%.0f B", b)
}

// num writes a cost with three significant digits, without an exponent.
func num(v float64) string {
	if v >= 100 {
		p := math.Pow(10, math.Floor(math.Log10(v))-2)
		return strconv.FormatFloat(math.Round(v/p)*p, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
