// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	e2ebench "github.com/otelcol-sdp/otelcol-sdp/benchmarks/e2e"
)

// writeTables writes, per sweep, its runs and then per signal and protocol
// the points of its charts: for each scenario and swept value the median
// total CPU per million items and the ratio to the floor, with their ranges
// over the rounds, and how the ratio to the floor moved from the first to
// the last value.
func writeTables(w io.Writer, sweeps []sweep) error {
	var b strings.Builder
	for _, s := range sweeps {
		first, last := s.runs[0].res.Load, s.runs[len(s.runs)-1].res.Load
		fmt.Fprintf(&b, "### %s sweep: %s\n\n", s.key, fixed(s.key, first))
		b.WriteString("The runs are sequential; each measured its own floor and plain in its own interleaved rounds, so compare the ratios to the floor across runs rather than absolute CPU.\n\n")
		fmt.Fprintf(&b, "| %s | file | started (UTC) | rounds | items per case | load average before; after |\n|---|---|---|--:|--:|---|\n", s.key)
		for _, r := range s.runs {
			fmt.Fprintf(&b, "| %s | %s | %s | %d | %d | %s; %s |\n", xLabel(s.key, r.res.Load), filepath.Base(r.file),
				r.res.Started.UTC().Format("2006-01-02 15:04"), r.res.Load.Rounds, r.res.Load.Items, r.res.LoadBefore, r.res.LoadAfter)
		}
		b.WriteString("\n")
		for _, p := range s.panels() {
			fmt.Fprintf(&b, "#### %s %s, %s sweep: CPU s per M items, collector + sidecars (min–max); × floor (min–max)\n\n| scenario |", p.signal, p.protocol, s.key)
			for _, r := range s.runs {
				x := xLabel(s.key, r.res.Load)
				fmt.Fprintf(&b, " %s: CPU | %s: × floor |", x, x)
			}
			fmt.Fprintf(&b, " × floor, %s ÷ %s |\n|---|", xLabel(s.key, last), xLabel(s.key, first))
			b.WriteString(strings.Repeat("--:|--:|", len(s.runs)) + "--:|\n")
			for _, scenario := range p.scenarios {
				fmt.Fprintf(&b, "| %s |", scenario)
				cases := p.cases[scenario]
				for i, c := range cases {
					fmt.Fprintf(&b, " %s | %s |", cpuCell(c, s.runs[i].res.Load.Rounds), floorCell(c))
				}
				fmt.Fprintf(&b, " %s |\n", growth(cases[0], cases[len(cases)-1]))
			}
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// cpuCell is a case's median total CPU with its range, and how many rounds
// it has when a failure cut it short of the run's.
func cpuCell(c *e2ebench.CaseResults, rounds int) string {
	if c == nil {
		return "–"
	}
	s := fmt.Sprintf("%.2f (%.2f–%.2f)", c.Median.CPUTotal, c.CPUTotalMin, c.CPUTotalMax)
	if len(c.Rounds) < rounds {
		s += fmt.Sprintf(", %d of %d rounds", len(c.Rounds), rounds)
	}
	return s
}

func floorCell(c *e2ebench.CaseResults) string {
	if c == nil || c.VsFloor == nil {
		return "–"
	}
	return fmt.Sprintf("%.2fx (%.2f–%.2f)", c.VsFloor.Median, c.VsFloor.Min, c.VsFloor.Max)
}

// growth is the ratio to the floor at the last swept value over that at the
// first: above 1 when the cost per item grew, relative to the floor, as the
// sweep went on.
func growth(first, last *e2ebench.CaseResults) string {
	if first == nil || last == nil || first.VsFloor == nil || last.VsFloor == nil || first.VsFloor.Median <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", last.VsFloor.Median/first.VsFloor.Median)
}
