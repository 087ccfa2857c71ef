// SPDX-License-Identifier: Apache-2.0

package e2ebench

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
)

// FloorBinary is the bench-binary of the floor scenario: the harness's own
// do-nothing OTLP server (cmd/otlpfloor) rather than a Collector.
const FloorBinary = "floor"

// AnchorBinary is the bench-binary of a scenario run by the anchor
// Collector: upstream v0.161 with contrib's load_balancing exporter
// (benchmarks/anchors/tailsampling), the competitor otelcol-sdp is compared
// with.
const AnchorBinary = "anchor"

// Target is a goal a scenario's figures are held to: its median total CPU
// per item (Measure "cpu"), its Collector's peak RSS (Measure "rss") or its
// Collector's peak anonymous resident memory (Measure "anon") at most Max
// times the reference scenario's, in every signal and protocol.
type Target struct {
	Scenario  string
	Reference string
	Measure   string // "cpu", "rss" or "anon"
	Max       float64
}

// DefaultTargets are the goals of issue 17, against the plain Collector
// (baseline) and the floor: pre-decode divert within 1.5x of the floor, tee
// within 1.2x of plain, wirecount pre-decode within 1.03x of plain, and the
// peak RSS of divert and tee not above plain's. The peak anonymous memory of
// divert and tee against plain's follows the RSS: the RSS includes the code
// pages of otelcol-sdp's larger binary, the anonymous memory does not, so the
// two together tell the binary's size from memory the pre-decode stage uses.
func DefaultTargets(baseline, floor string) []Target {
	return []Target{
		{Scenario: "predecode-divert", Reference: floor, Measure: "cpu", Max: 1.5},
		{Scenario: "predecode-tee", Reference: baseline, Measure: "cpu", Max: 1.2},
		{Scenario: "predecode-wirecount", Reference: baseline, Measure: "cpu", Max: 1.03},
		{Scenario: "predecode-divert", Reference: baseline, Measure: "rss", Max: 1},
		{Scenario: "predecode-tee", Reference: baseline, Measure: "rss", Max: 1},
		{Scenario: "predecode-divert", Reference: baseline, Measure: "anon", Max: 1},
		{Scenario: "predecode-tee", Reference: baseline, Measure: "anon", Max: 1},
	}
}

// WriteTargets writes one line per target, signal and protocol measured:
// the median ratio, the range of the paired rounds, and whether the median
// holds. Targets whose scenario or reference was not measured are left out;
// an "anon" target on a system that cannot sample it (no /proc) is listed as
// unknown.
func WriteTargets(w io.Writer, rows []Row, targets []Target) error {
	var b strings.Builder
	b.WriteString("| target | signal | proto | median (min–max) | goal | holds |\n|---|---|---|--:|--:|---|\n")
	for _, t := range targets {
		if t.Reference == "" {
			continue
		}
		for _, r := range rows {
			if r.Scenario != t.Scenario {
				continue
			}
			i := slices.IndexFunc(rows, func(x Row) bool {
				return x.Scenario == t.Reference && x.Signal == r.Signal && x.Protocol == r.Protocol
			})
			if i < 0 {
				continue
			}
			var ratio, lo, hi float64
			switch t.Measure {
			case "cpu":
				ratio, lo, hi = ratioTo(rows, r, t.Reference)
			case "rss":
				if rows[i].PeakRSSMB > 0 {
					ratio = r.PeakRSSMB / rows[i].PeakRSSMB
					lo, hi = ratio, ratio
				}
			case "anon":
				if rows[i].PeakAnonMB <= 0 || r.PeakAnonMB <= 0 {
					fmt.Fprintf(&b, "| %s %s vs %s | %s | %s | – | ≤ %.2fx | unknown |\n",
						t.Scenario, t.Measure, t.Reference, r.Signal, r.Protocol, t.Max)
					continue
				}
				ratio = r.PeakAnonMB / rows[i].PeakAnonMB
				lo, hi = ratio, ratio
			default:
				return fmt.Errorf("target %s: unknown measure %q", t.Scenario, t.Measure)
			}
			if ratio <= 0 {
				continue
			}
			holds := "yes"
			if ratio > t.Max {
				holds = "**no**"
			}
			fmt.Fprintf(&b, "| %s %s vs %s | %s | %s | %.2fx (%.2f–%.2f) | ≤ %.2fx | %s |\n",
				t.Scenario, t.Measure, t.Reference, r.Signal, r.Protocol, ratio, lo, hi, t.Max, holds)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// LoadAverage returns the machine's 1, 5 and 15 minute load averages as
// text: /proc/loadavg on Linux, sysctl on macOS, "unknown" elsewhere.
func LoadAverage() string {
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			return strings.Join(f[:3], " ")
		}
	}
	if out, err := exec.Command("sysctl", "-n", "vm.loadavg").Output(); err == nil {
		// "{ 1.52 1.61 1.70 }"
		if f := strings.Fields(strings.Trim(strings.TrimSpace(string(out)), "{}")); len(f) >= 3 {
			return strings.Join(f[:3], " ")
		}
	}
	return "unknown"
}
