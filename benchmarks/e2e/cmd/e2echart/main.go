// SPDX-License-Identifier: Apache-2.0

// Command e2echart charts sweeps of the end-to-end harness: it reads several
// `benche2e -json` files, finds the runs that differ only in the number of
// clients or only in the shape of the requests (resources x items per
// resource), and writes for each signal and protocol two PNG charts, the
// total CPU per million items (Collector + sidecars) and its ratio to the
// floor, against the swept value, one line per scenario with its min–max
// range over the rounds; and a Markdown table of the same points. A run
// that measured scenarios at several numbers of members (benche2e's
// NAME@N) is a members sweep of its own: the same two charts against the
// members, with the baseline and the floor of the same rounds drawn flat,
// and a table with each point's ratio to the fewest members and its p99
// latency.
//
//	e2echart -charts DIR -md FILE [-x clients,resources] run.json ...
//
// It is a command of its own rather than a flag of benche2e: it only reads
// files, needs none of the binaries a run needs, and charts runs made at
// different times (`make bench-e2e-sweep` runs them one after another).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	e2ebench "github.com/otelcol-sdp/otelcol-sdp/benchmarks/e2e"
	"github.com/otelcol-sdp/otelcol-sdp/benchmarks/internal/chart"
)

func main() {
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return
	case err != nil:
		fmt.Fprintln(os.Stderr, "e2echart:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("e2echart", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		chartDir = fs.String("charts", "", "write the PNG charts into this directory")
		mdFile   = fs.String("md", "", "write the Markdown tables to this file (- for standard output)")
		keys     = fs.String("x", strings.Join(append(slices.Clone(sweepKeys), keyMembers), ","), "comma-separated sweep dimensions to chart: clients, resources (across runs), members (within a run)")
		width    = fs.Int("width", 960, "chart width in pixels")
		height   = fs.Int("height", 540, "chart height in pixels")
	)
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case *chartDir == "" && *mdFile == "":
		return errors.New("nothing to do: give -charts DIR and/or -md FILE")
	case *width < 400 || *height < 200:
		return fmt.Errorf("-width %d -height %d: the chart needs at least 400x200 pixels", *width, *height)
	case fs.NArg() == 0:
		return errors.New("give benche2e -json files: two or more for a clients or shape sweep, or a run of NAME@N scenarios")
	}
	var runs []benchRun
	for _, path := range fs.Args() {
		r, err := readRun(path)
		if err != nil {
			return err
		}
		runs = append(runs, r)
	}
	across := strings.Split(*keys, ",")
	var fleets []fleetSweep
	if slices.Contains(across, keyMembers) {
		across = slices.DeleteFunc(across, func(k string) bool { return k == keyMembers })
		fleets = findFleetSweeps(runs)
	}
	sweeps, err := findSweeps(runs, across)
	if err != nil {
		return err
	}
	if len(sweeps) == 0 && len(fleets) == 0 {
		return fmt.Errorf("no sweep in %s: no two runs differ in only the clients or only the request shape, and no run has a scenario at two numbers of members", strings.Join(fs.Args(), ", "))
	}
	if *chartDir != "" {
		if err := os.MkdirAll(*chartDir, 0o755); err != nil {
			return err
		}
		var charts []namedChart
		for _, s := range sweeps {
			charts = append(charts, buildCharts(s)...)
		}
		for _, s := range fleets {
			charts = append(charts, buildFleetCharts(s)...)
		}
		for _, c := range charts {
			if err := chart.WritePNG(filepath.Join(*chartDir, c.file), c.chart, *width, *height); err != nil {
				return err
			}
		}
	}
	if *mdFile != "" {
		w := stdout
		if *mdFile != "-" {
			f, err := os.Create(*mdFile)
			if err != nil {
				return err
			}
			defer f.Close()
			w = f
		}
		if err := writeTables(w, sweeps); err != nil {
			return err
		}
		if err := writeFleetTables(w, fleets); err != nil {
			return err
		}
	}
	return nil
}

func readRun(path string) (benchRun, error) {
	f, err := os.Open(path)
	if err != nil {
		return benchRun{}, err
	}
	defer f.Close()
	res, err := e2ebench.ReadResults(f)
	if err != nil {
		return benchRun{}, fmt.Errorf("%s: %w", path, err)
	}
	return benchRun{file: path, res: res}, nil
}
