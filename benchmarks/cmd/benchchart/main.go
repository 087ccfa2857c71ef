// SPDX-License-Identifier: Apache-2.0

// Command benchchart turns `go test -bench` output into PNG charts and
// Markdown tables, using medians over every run of each benchmark (several
// -count runs or interleaved rounds appended to one file).
//
//	benchchart -charts DIR -md FILE [bench.txt ...]
//
// Benchmark names are read as key=value paths (BenchmarkSweepItems/op=count/
// enc=pdata/items=100/impl=otlpwire). A benchmark with one of the -x keys is a
// sweep point: each chart holds one top-level name and the remaining keys,
// with x the swept value (log scale), y the cost in ns per KiB (from the
// benchmark's MB/s) and one line per value of the -series keys. Benchmarks
// without an -x key go to ratio tables: one row per configuration, one column
// per -impl value, and the -base implementation's time over each other one's
// (the other's over the base's for the -inverse implementations).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/otelcol-sdp/otelcol-sdp/benchmarks/internal/chart"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchchart:", err)
		os.Exit(1)
	}
}

type options struct {
	chartDir, mdFile string
	xKeys, series    []string
	implKey, base    string
	inverse          []string
	width, height    int
}

func run(args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("benchchart", flag.ContinueOnError)
	var o options
	var xKeys, series, inverse string
	fs.StringVar(&o.chartDir, "charts", "", "write one PNG per sweep chart into this directory")
	fs.StringVar(&o.mdFile, "md", "", "write the Markdown tables to this file (- for standard output)")
	fs.StringVar(&xKeys, "x", "items,resources,scopes,limit", "comma-separated keys whose values are sweep positions")
	fs.StringVar(&series, "series", "enc,impl", "comma-separated keys that make the lines of a chart")
	fs.StringVar(&o.implKey, "impl", "impl", "key naming the implementation in ratio tables")
	fs.StringVar(&o.base, "base", "otlpwire", "implementation the ratios are taken against")
	fs.StringVar(&inverse, "inverse", "pdata", "comma-separated implementations whose ratio is shown as their time over the base's (a speed-up)")
	fs.IntVar(&o.width, "width", 960, "chart width in pixels")
	fs.IntVar(&o.height, "height", 540, "chart height in pixels")
	if err := fs.Parse(args); err != nil {
		return err
	}
	o.xKeys, o.series, o.inverse = strings.Split(xKeys, ","), strings.Split(series, ","), strings.Split(inverse, ",")
	if o.chartDir == "" && o.mdFile == "" {
		return fmt.Errorf("nothing to do: give -charts DIR and/or -md FILE")
	}
	if o.width < 400 || o.height < 200 {
		return fmt.Errorf("-width %d -height %d: the chart needs at least 400x200 pixels", o.width, o.height)
	}

	var runs []sample
	inputs := fs.Args()
	if len(inputs) == 0 {
		inputs = []string{"-"}
	}
	for _, in := range inputs {
		r := stdin
		if in != "-" {
			f, err := os.Open(in)
			if err != nil {
				return err
			}
			defer f.Close()
			r = f
		}
		rs, err := parse(r)
		if err != nil {
			return fmt.Errorf("%s: %w", in, err)
		}
		runs = append(runs, rs...)
	}
	if len(runs) == 0 {
		return fmt.Errorf("no benchmark results in %s", strings.Join(inputs, ", "))
	}
	results := medians(runs)
	charts := buildCharts(results, o)

	if o.chartDir != "" {
		if err := os.MkdirAll(o.chartDir, 0o755); err != nil {
			return err
		}
		for _, c := range charts {
			if err := chart.WritePNG(filepath.Join(o.chartDir, c.file), c.chart, o.width, o.height); err != nil {
				return err
			}
		}
	}
	if o.mdFile != "" {
		w := stdout
		if o.mdFile != "-" {
			f, err := os.Create(o.mdFile)
			if err != nil {
				return err
			}
			defer f.Close()
			w = f
		}
		if err := writeTables(w, results, charts, o); err != nil {
			return err
		}
	}
	return nil
}
