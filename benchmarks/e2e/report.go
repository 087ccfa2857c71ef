// SPDX-License-Identifier: Apache-2.0

package e2ebench

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/otelcol-sdp/otelcol-sdp/benchmarks/internal/procstat"
)

// Row is one line of the report: the medians over the rounds of one case.
type Row struct {
	Scenario string
	Signal   string
	Protocol string
	Rounds   int
	// ItemsPerSec is end to end: items measured over the time from the first
	// measured request until the last item reached its destinations.
	ItemsPerSec float64
	// CPU seconds per million items: the Collector, the sidecars, and their
	// sum (the median of the per-round sums, not the sum of the medians).
	CPUCollector float64
	CPUSidecars  float64
	CPUTotal     float64
	// CPUTotalMin and CPUTotalMax are the range of the per-round sums.
	CPUTotalMin, CPUTotalMax float64
	// Ratio is CPUTotal over the baseline's CPUTotal for the same signal and
	// protocol; 0 when there is no baseline figure. RatioMin and RatioMax
	// pair the rounds: round i of this case over round i of the baseline.
	Ratio, RatioMin, RatioMax float64
	// FloorRatio is CPUTotal over the floor's CPUTotal for the same signal
	// and protocol (0 without a floor figure), with its paired range.
	FloorRatio, FloorRatioMin, FloorRatioMax float64
	// PeakRSSMB is the Collector's peak resident set, in MiB; SidecarsRSSMB
	// the sum of its sidecars' peaks.
	PeakRSSMB     float64
	SidecarsRSSMB float64
	// PeakAnonMB is the Collector's peak anonymous resident memory, in MiB,
	// and SidecarsAnonMB the sum of its sidecars'
	// (procstat.Usage.PeakAnon): 0 when unknown.
	PeakAnonMB     float64
	SidecarsAnonMB float64
	// LatencyP50Ms and LatencyP99Ms are the medians over the rounds of each
	// round's request latency percentiles, in milliseconds; LatencyP99MaxMs
	// is the largest round's 99th percentile.
	LatencyP50Ms, LatencyP99Ms, LatencyP99MaxMs float64
	// Kernel is the field-by-field median of the rounds' system calls and
	// context switches per request; nil when they were not counted.
	Kernel *KernelFigures
	// totals are the per-round sums, in round order, for the paired ratios.
	totals []float64
	// StartupExcluded is false when the CPU time of startup and warm-up
	// could not be subtracted (see procstat.CPUTime).
	StartupExcluded bool
}

// Unavailable is a scenario that was not measured, and why: its binary is
// missing or rejects its configuration (a component it needs is not built
// in yet). It is not a failure.
type Unavailable struct {
	Scenario string `json:"scenario"`
	Reason   string `json:"reason"`
}

// Failure is a case that ran and went wrong: an error from a process, the
// load generator, or counts that do not match what was sent.
type Failure struct {
	Case  string
	Round int
	Err   error
}

// Median returns the median of xs (the mean of the middle two for an even
// count); 0 for none. xs is not modified.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// perMillion is CPU seconds per million items.
func perMillion(u procstat.Usage, items int64) float64 {
	if items == 0 {
		return 0
	}
	return u.CPU.Seconds() * 1e6 / float64(items)
}

// Aggregate turns measurements into rows, in report order: by signal, then
// protocol, then scenario in the order of scenarios. baseline and floor name
// the scenarios the ratios are taken against ("" for none).
func Aggregate(ms []Measurement, scenarios []string, baseline, floor string) []Row {
	type key struct{ scenario, signal, protocol string }
	groups := map[key][]Measurement{}
	for _, m := range ms {
		k := key{m.Scenario.Name, m.Signal, m.Protocol}
		groups[k] = append(groups[k], m)
	}
	var rows []Row
	for _, signal := range Signals {
		for _, protocol := range Protocols {
			for _, scenario := range scenarios {
				g := groups[key{scenario, signal, protocol}]
				if len(g) == 0 {
					continue
				}
				// In round order, for the paired ratios.
				slices.SortStableFunc(g, func(a, b Measurement) int { return a.Round - b.Round })
				var rate, coll, side, total, rss, sideRSS, anon, sideAnon, p50, p99 []float64
				var kernel []KernelFigures
				excluded := true
				for _, m := range g {
					f := figuresOf(m)
					if f.Kernel != nil {
						kernel = append(kernel, *f.Kernel)
					}
					rate = append(rate, f.ItemsPerSec)
					coll = append(coll, f.CPUCollector)
					side = append(side, f.CPUSidecars)
					total = append(total, f.CPUTotal)
					rss = append(rss, f.PeakRSSMB)
					sideRSS = append(sideRSS, f.SidecarsRSSMB)
					anon = append(anon, f.PeakAnonMB)
					sideAnon = append(sideAnon, f.SidecarsAnonMB)
					p50 = append(p50, f.LatencyP50Ms)
					p99 = append(p99, f.LatencyP99Ms)
					excluded = excluded && m.StartupExcluded
				}
				rows = append(rows, Row{
					Scenario: scenario, Signal: signal, Protocol: protocol, Rounds: len(g),
					ItemsPerSec: Median(rate), CPUCollector: Median(coll), CPUSidecars: Median(side),
					CPUTotal: Median(total), CPUTotalMin: slices.Min(total), CPUTotalMax: slices.Max(total),
					PeakRSSMB: Median(rss), SidecarsRSSMB: Median(sideRSS),
					PeakAnonMB: Median(anon), SidecarsAnonMB: Median(sideAnon),
					LatencyP50Ms: Median(p50), LatencyP99Ms: Median(p99), LatencyP99MaxMs: slices.Max(p99),
					StartupExcluded: excluded, totals: total, Kernel: medianKernel(kernel),
				})
			}
		}
	}
	for i := range rows {
		rows[i].Ratio, rows[i].RatioMin, rows[i].RatioMax = ratioTo(rows, rows[i], baseline)
		rows[i].FloorRatio, rows[i].FloorRatioMin, rows[i].FloorRatioMax = ratioTo(rows, rows[i], floor)
	}
	return rows
}

// ratioTo is r's total CPU over that of the reference scenario for the same
// signal and protocol: the ratio of the medians, and the range of the ratios
// of rounds paired in order (round i of r over round i of the reference,
// which ran right beside it). Zeros when there is no reference figure.
func ratioTo(rows []Row, r Row, reference string) (ratio, lo, hi float64) {
	if reference == "" {
		return 0, 0, 0
	}
	i := slices.IndexFunc(rows, func(x Row) bool {
		return x.Scenario == reference && x.Signal == r.Signal && x.Protocol == r.Protocol
	})
	if i < 0 || rows[i].CPUTotal <= 0 {
		return 0, 0, 0
	}
	ref := rows[i]
	ratio = r.CPUTotal / ref.CPUTotal
	lo, hi = ratio, ratio
	for k := range min(len(r.totals), len(ref.totals)) {
		if ref.totals[k] <= 0 {
			continue
		}
		x := r.totals[k] / ref.totals[k]
		lo, hi = min(lo, x), max(hi, x)
	}
	return ratio, lo, hi
}

// WriteMarkdown writes the report table, then the scenarios that were not
// available and the failures. Peak anonymous memory the system could not
// sample shows as a dash.
func WriteMarkdown(w io.Writer, rows []Row, unavailable []Unavailable, failures []Failure) error {
	var b strings.Builder
	b.WriteString("| scenario | signal | proto | items/s | CPU s/M items: collector | sidecars | total (min–max) | vs plain (min–max) | vs floor (min–max) | peak RSS MB: collector | sidecars | peak anon MB: collector | sidecars | latency ms: p50 | p99 (max) |\n")
	b.WriteString("|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	footnote := false
	for _, r := range rows {
		mark := ""
		if !r.StartupExcluded {
			mark, footnote = "*", true
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %.2f%s | %.2f | %.2f (%.2f–%.2f) | %s | %s | %.0f | %.0f | %s | %s |\n",
			r.Scenario, r.Signal, r.Protocol, thousands(r.ItemsPerSec), r.CPUCollector, mark, r.CPUSidecars,
			r.CPUTotal, r.CPUTotalMin, r.CPUTotalMax, ratioCell(r.Ratio, r.RatioMin, r.RatioMax),
			ratioCell(r.FloorRatio, r.FloorRatioMin, r.FloorRatioMax), r.PeakRSSMB, r.SidecarsRSSMB, anonCells(r), latencyCells(r))
	}
	for _, u := range unavailable {
		fmt.Fprintf(&b, "| %s | all | all | not available: %s | | | | | | | | | | | |\n", u.Scenario, escapeCell(u.Reason))
	}
	for _, f := range failures {
		fmt.Fprintf(&b, "| %s | | | FAILED (round %d): %s | | | | | | | | | | | |\n", f.Case, f.Round, escapeCell(f.Err.Error()))
	}
	if footnote {
		b.WriteString("\n\\* startup and warm-up CPU included: this system offers no way to read a running process's CPU time.\n")
	}
	writeKernelTable(&b, rows)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeKernelTable writes, when the run counted them, the system calls and
// context switches per request of each case: the Collector's (or the floor
// server's) by kind, then the sidecars' summed.
func writeKernelTable(b *strings.Builder, rows []Row) {
	if !slices.ContainsFunc(rows, func(r Row) bool { return r.Kernel != nil }) {
		return
	}
	b.WriteString("\nSystem calls and context switches per request over the measured window (perf stat; medians of the rounds). " +
		"Writes are write and writev, polls epoll_pwait, scheduler futex, nanosleep and sched_yield.\n\n")
	b.WriteString("| scenario | signal | proto | collector: syscalls | context switches | reads | writes | polls | scheduler | sidecars: syscalls | context switches |\n")
	b.WriteString("|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range rows {
		if r.Kernel == nil {
			continue
		}
		c, s := r.Kernel.Collector, r.Kernel.Sidecars
		fmt.Fprintf(b, "| %s | %s | %s | %.1f | %.2f | %.2f | %.2f | %.2f | %.2f | %.1f | %.2f |\n",
			r.Scenario, r.Signal, r.Protocol, c.Syscalls, c.ContextSwitches, c.Reads, c.Writes, c.Polls, c.Scheduler, s.Syscalls, s.ContextSwitches)
	}
}

// anonCells formats the peak anonymous memory of the Collector and of the
// sidecars. Where the Collector's is unknown so is the sidecars' (both come
// from /proc), and a 0 beside a known Collector figure means no sidecars.
func anonCells(r Row) string {
	if r.PeakAnonMB <= 0 {
		return "– | –"
	}
	return fmt.Sprintf("%.0f | %.0f", r.PeakAnonMB, r.SidecarsAnonMB)
}

// latencyCells formats the request latency percentiles, or dashes where
// none was recorded.
func latencyCells(r Row) string {
	if r.LatencyP50Ms <= 0 {
		return "– | –"
	}
	return fmt.Sprintf("%.2f | %.2f (%.2f)", r.LatencyP50Ms, r.LatencyP99Ms, r.LatencyP99MaxMs)
}

// ratioCell formats a ratio with its range, or a dash without one.
func ratioCell(ratio, lo, hi float64) string {
	if ratio <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.2fx (%.2f–%.2f)", ratio, lo, hi)
}

// thousands formats a rate as an integer with comma separators.
func thousands(x float64) string {
	s := fmt.Sprintf("%.0f", x)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

// escapeCell makes text safe for one Markdown table cell: one line, no pipe,
// bounded length.
func escapeCell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	s = strings.ReplaceAll(s, "|", `\|`)
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
