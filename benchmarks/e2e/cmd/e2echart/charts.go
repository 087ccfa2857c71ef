// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"

	e2ebench "github.com/otelcol-sdp/otelcol-sdp/benchmarks/e2e"
	"github.com/otelcol-sdp/otelcol-sdp/benchmarks/internal/chart"
)

// A metric is what a chart plots of each case: a value and its range over
// the rounds, or ok false when the case has none.
type metric struct {
	name   string // in file names
	title  string
	yLabel string
	value  func(c *e2ebench.CaseResults) (y, lo, hi float64, ok bool)
}

// metrics are the two charts of every panel. Total CPU per item is the
// cost; the ratio to the floor is the one to compare across the runs of a
// sweep, which are sequential: each run measured its own floor in the same
// rounds, so a machine busier during one run inflates its costs but much
// less their ratio to that run's floor.
var metrics = []metric{
	{
		name: "cpu", title: "CPU s per M items, collector + sidecars", yLabel: "CPU S/M ITEMS",
		value: func(c *e2ebench.CaseResults) (float64, float64, float64, bool) {
			return c.Median.CPUTotal, c.CPUTotalMin, c.CPUTotalMax, c.Median.CPUTotal > 0
		},
	},
	{
		name: "vs-floor", title: "CPU over the floor in the same run", yLabel: "X FLOOR",
		value: func(c *e2ebench.CaseResults) (float64, float64, float64, bool) {
			if c.VsFloor == nil {
				return 0, 0, 0, false
			}
			return c.VsFloor.Median, c.VsFloor.Min, c.VsFloor.Max, true
		},
	},
}

// A namedChart is a chart and the file it goes to.
type namedChart struct {
	file  string
	chart chart.Chart
}

// dodge is how far apart, in pixels, the series' points and range bars are
// drawn at one x, so that the bars of neighbouring scenarios stay visible.
const dodge = 6

// buildCharts makes one chart per panel of the sweep and metric: x the swept
// value, one line per scenario with its range over the rounds.
func buildCharts(s sweep) []namedChart {
	ticks := map[float64]string{}
	for _, r := range s.runs {
		ticks[s.x(r)] = xLabel(s.key, r.res.Load)
	}
	axis := "concurrent clients (log scale); "
	if s.key == keyResources {
		axis = "request shape: resources x items (log scale); "
	}
	axis += fixed(s.key, s.runs[0].res.Load)
	var out []namedChart
	for _, p := range s.panels() {
		for _, m := range metrics {
			c := chart.Chart{
				Title:  fmt.Sprintf("%s %s: %s", p.signal, p.protocol, m.title),
				XLabel: axis, YLabel: m.yLabel, Dodge: dodge,
				XTick: func(x float64) string { return ticks[x] },
			}
			for _, scenario := range p.scenarios {
				series := chart.Series{Label: scenario}
				for i, r := range s.runs {
					cr := p.cases[scenario][i]
					if cr == nil {
						continue
					}
					if y, lo, hi, ok := m.value(cr); ok {
						series.Points = append(series.Points, chart.Point{X: s.x(r), Y: y, Lo: lo, Hi: hi})
					}
				}
				c.Series = append(c.Series, series)
			}
			out = append(out, namedChart{file: fmt.Sprintf("%s_%s-%s_%s.png", s.key, p.signal, p.protocol, m.name), chart: c})
		}
	}
	return out
}
