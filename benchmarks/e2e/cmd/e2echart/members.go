// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	e2ebench "github.com/otelcol-sdp/otelcol-sdp/benchmarks/e2e"
	"github.com/otelcol-sdp/otelcol-sdp/benchmarks/internal/chart"
)

// A fleetSweep is one run's scenarios measured at several numbers of
// members (benche2e's NAME@N), all in the same interleaved rounds: unlike
// a clients or shape sweep, which spans runs, its points share a floor.
type fleetSweep struct {
	run benchRun
	// members are the numbers of members measured, ascending.
	members []int
	// bases are the scenarios swept (NAME of NAME@N), in the run's order.
	bases []string
}

// memberOf splits a scenario name NAME@N; ok is false for other names.
func memberOf(scenario string) (base string, n int, ok bool) {
	base, num, found := strings.Cut(scenario, "@")
	if !found {
		return "", 0, false
	}
	n, err := strconv.Atoi(num)
	return base, n, err == nil
}

// findFleetSweeps finds the runs that measured a scenario at two or more
// numbers of members.
func findFleetSweeps(runs []benchRun) []fleetSweep {
	var out []fleetSweep
	for _, r := range runs {
		s := fleetSweep{run: r}
		counts := map[string]map[int]bool{}
		for _, c := range r.res.Cases {
			base, n, ok := memberOf(c.Scenario)
			if !ok {
				continue
			}
			if counts[base] == nil {
				counts[base] = map[int]bool{}
				s.bases = append(s.bases, base)
			}
			counts[base][n] = true
			if !slices.Contains(s.members, n) {
				s.members = append(s.members, n)
			}
		}
		s.bases = slices.DeleteFunc(s.bases, func(b string) bool { return len(counts[b]) < 2 })
		if len(s.bases) == 0 {
			continue
		}
		slices.Sort(s.members)
		out = append(out, s)
	}
	return out
}

// lookup is the run's case of scenario for a signal and protocol, or nil.
func (s fleetSweep) lookup(scenario, signal, protocol string) *e2ebench.CaseResults {
	for i := range s.run.res.Cases {
		c := &s.run.res.Cases[i]
		if c.Scenario == scenario && c.Signal == signal && c.Protocol == protocol {
			return c
		}
	}
	return nil
}

// panels are the signals and protocols the sweep has, in the report's order.
func (s fleetSweep) panels() [][2]string {
	var out [][2]string
	for _, signal := range e2ebench.Signals {
		for _, protocol := range e2ebench.Protocols {
			if slices.ContainsFunc(s.bases, func(b string) bool {
				return slices.ContainsFunc(s.members, func(n int) bool { return s.lookup(member(b, n), signal, protocol) != nil })
			}) {
				out = append(out, [2]string{signal, protocol})
			}
		}
	}
	return out
}

func member(base string, n int) string { return fmt.Sprintf("%s@%d", base, n) }

// references are the scenarios drawn flat across the members axis: they
// have no members to vary.
func (s fleetSweep) references() []string {
	return []string{s.run.res.Baseline, s.run.res.Floor}
}

// buildFleetCharts makes, per signal and protocol and metric, a chart of
// the metric against the number of members: a line per swept scenario with
// its range over the rounds, and the baseline and floor of the same rounds
// as flat lines.
func buildFleetCharts(s fleetSweep) []namedChart {
	ticks := map[float64]string{}
	for _, n := range s.members {
		ticks[float64(n)] = strconv.Itoa(n)
	}
	l := s.run.res.Load
	axis := fmt.Sprintf("members (log scale); %d clients, %d x %d items per request, %s payload", l.Clients, l.Resources, l.ItemsPerResource, l.Payload)
	lo, hi := float64(s.members[0]), float64(s.members[len(s.members)-1])
	var out []namedChart
	for _, p := range s.panels() {
		signal, protocol := p[0], p[1]
		for _, m := range metrics {
			c := chart.Chart{
				Title:  fmt.Sprintf("%s %s: %s", signal, protocol, m.title),
				XLabel: axis, YLabel: m.yLabel, Dodge: dodge,
				XTick: func(x float64) string { return ticks[x] },
			}
			for _, base := range s.bases {
				series := chart.Series{Label: base}
				for _, n := range s.members {
					if cr := s.lookup(member(base, n), signal, protocol); cr != nil {
						if y, ylo, yhi, ok := m.value(cr); ok {
							series.Points = append(series.Points, chart.Point{X: float64(n), Y: y, Lo: ylo, Hi: yhi})
						}
					}
				}
				c.Series = append(c.Series, series)
			}
			for _, ref := range s.references() {
				if cr := s.lookup(ref, signal, protocol); cr != nil {
					if y, _, _, ok := m.value(cr); ok {
						c.Series = append(c.Series, chart.Series{Label: ref, Points: []chart.Point{{X: lo, Y: y}, {X: hi, Y: y}}})
					}
				}
			}
			file := fmt.Sprintf("members-c%d_%s-%s_%s.png", l.Clients, signal, protocol, m.name)
			out = append(out, namedChart{file: file, chart: c})
		}
	}
	return out
}

// writeFleetTables writes, per fleet sweep and signal and protocol, each
// scenario's total CPU per million items at each number of members (with
// its range over the rounds), its ratio to the fewest members' (the
// median of the paired per-round ratios, with their range), and the p99
// latency; the baseline and floor of the same rounds below.
func writeFleetTables(w io.Writer, sweeps []fleetSweep) error {
	var b strings.Builder
	for _, s := range sweeps {
		r := s.run.res
		fmt.Fprintf(&b, "### members sweep: %d clients, %d x %d items per request, %s payload (%s)\n\n",
			r.Load.Clients, r.Load.Resources, r.Load.ItemsPerResource, r.Load.Payload, filepath.Base(s.run.file))
		fmt.Fprintf(&b, "%d interleaved rounds of %d items a case, started %s UTC, load average %s before; %s after. "+
			"Every point was measured in the same rounds.\n\n", r.Load.Rounds, r.Load.Items, r.Started.UTC().Format("2006-01-02 15:04"), r.LoadBefore, r.LoadAfter)
		first := s.members[0]
		for _, p := range s.panels() {
			signal, protocol := p[0], p[1]
			fmt.Fprintf(&b, "#### %s %s: CPU s per M items, collector + sidecars (min–max); × %d members, paired rounds (min–max); p99 ms\n\n| scenario |", signal, protocol, first)
			for _, n := range s.members {
				fmt.Fprintf(&b, " %d: CPU | × %d | p99 |", n, first)
			}
			b.WriteString("\n|---|" + strings.Repeat("--:|--:|--:|", len(s.members)) + "\n")
			for _, base := range s.bases {
				fmt.Fprintf(&b, "| %s |", base)
				ref := s.lookup(member(base, first), signal, protocol)
				for _, n := range s.members {
					c := s.lookup(member(base, n), signal, protocol)
					fmt.Fprintf(&b, " %s | %s | %s |", cpuCell(c, r.Load.Rounds), pairedRatio(c, ref), p99Cell(c))
				}
				b.WriteString("\n")
			}
			for _, ref := range s.references() {
				if c := s.lookup(ref, signal, protocol); c != nil {
					fmt.Fprintf(&b, "| %s (no members) | %s |%s\n", ref, cpuCell(c, r.Load.Rounds), strings.Repeat(" |", 3*len(s.members)-1))
				}
			}
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// pairedRatio is c's total CPU over ref's, round by round (the rounds of a
// run are interleaved, so round i of each ran side by side): the median of
// the ratios and their range.
func pairedRatio(c, ref *e2ebench.CaseResults) string {
	if c == nil || ref == nil {
		return "–"
	}
	var ratios []float64
	for _, a := range c.Rounds {
		for _, b := range ref.Rounds {
			if a.Round == b.Round && b.CPUTotal > 0 {
				ratios = append(ratios, a.CPUTotal/b.CPUTotal)
			}
		}
	}
	if len(ratios) == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2fx (%.2f–%.2f)", e2ebench.Median(ratios), slices.Min(ratios), slices.Max(ratios))
}

func p99Cell(c *e2ebench.CaseResults) string {
	if c == nil || c.Median.LatencyP99Ms == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", c.Median.LatencyP99Ms)
}
