// SPDX-License-Identifier: Apache-2.0

package e2ebench

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/otelcol-sdp/otelcol-sdp/benchmarks/internal/procstat"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{7}, 7},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{5, 5, 1, 100, 5}, 5},
	} {
		in := append([]float64(nil), tc.in...)
		if got := Median(in); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.in, got, tc.want)
		}
		for i := range in {
			if in[i] != tc.in[i] {
				t.Fatalf("median reordered its input: %v", in)
			}
		}
	}
}

func measurement(scenario, signal, protocol string, items int64, elapsed, collector, sidecars time.Duration, rssMiB int64) Measurement {
	return Measurement{
		Case:            Case{Scenario: Scenario{Name: scenario}, Signal: signal, Protocol: protocol},
		Items:           items,
		Elapsed:         elapsed,
		Collector:       procstat.Usage{CPU: collector, PeakRSS: rssMiB << 20},
		Sidecars:        procstat.Usage{CPU: sidecars, PeakRSS: 10 << 20},
		StartupExcluded: true,
	}
}

// withAnon sets the peak anonymous memory of a measurement's Collector and
// sidecars, in MiB.
func withAnon(m Measurement, collectorMiB, sidecarsMiB int64) Measurement {
	m.Collector.PeakAnon, m.Sidecars.PeakAnon = collectorMiB<<20, sidecarsMiB<<20
	return m
}

func TestAggregate(t *testing.T) {
	const M = 1_000_000
	ms := []Measurement{
		// Three rounds of plain: CPU 4, 6, 5 s per M items: median 5.
		// Peak anon 20, 30, 25 MiB: median 25.
		withAnon(measurement("plain", "traces", "grpc", M, 4*time.Second, 4*time.Second, 0, 40), 20, 0),
		withAnon(measurement("plain", "traces", "grpc", M, 5*time.Second, 6*time.Second, 0, 60), 30, 0),
		withAnon(measurement("plain", "traces", "grpc", M, 10*time.Second, 5*time.Second, 0, 50), 25, 0),
		// divert: collector 1 or 2 s, sidecars 1 or 3 s; totals 2, 5, 3 (median 3),
		// which is not the sum of the medians (2 + 1 + ... ). Peak anon 20 MiB
		// of the Collector and 2 + 2 of two sidecars, summed by Add.
		withAnon(measurement("divert", "traces", "grpc", 2*M, 2*time.Second, 2*time.Second, 2*time.Second, 30), 20, 4),
		withAnon(measurement("divert", "traces", "grpc", 2*M, 2*time.Second, 4*time.Second, 6*time.Second, 30), 20, 4),
		withAnon(measurement("divert", "traces", "grpc", 2*M, 4*time.Second, 4*time.Second, 2*time.Second, 30), 20, 4),
		// logs over http has no baseline figure.
		measurement("divert", "logs", "http", M, time.Second, time.Second, time.Second, 20),
		// metrics over gRPC comes before logs in the report.
		measurement("plain", "metrics", "grpc", M, time.Second, time.Second, 0, 20),
		// The floor: 2, 2, 3 s per M items, median 2.
		measurement("floor", "traces", "grpc", M, time.Second, 2*time.Second, 0, 10),
		measurement("floor", "traces", "grpc", M, time.Second, 2*time.Second, 0, 10),
		measurement("floor", "traces", "grpc", M, time.Second, 3*time.Second, 0, 10),
	}
	ms[7].StartupExcluded = false
	// plain's rounds: p50 1, 3, 2 ms (median 2); p99 10, 30, 20 ms (median
	// 20, largest 30).
	for i, l := range []Latency{{time.Millisecond, 10 * time.Millisecond}, {3 * time.Millisecond, 30 * time.Millisecond}, {2 * time.Millisecond, 20 * time.Millisecond}} {
		ms[i].Latency = l
	}
	rows := Aggregate(ms, []string{"plain", "floor", "divert"}, "plain", "floor")
	if len(rows) != 5 {
		t.Fatalf("%d rows: %+v", len(rows), rows)
	}
	order := []string{"plain traces grpc", "floor traces grpc", "divert traces grpc", "plain metrics grpc", "divert logs http"}
	for i, r := range rows {
		if got := r.Scenario + " " + r.Signal + " " + r.Protocol; got != order[i] {
			t.Errorf("row %d is %q, want %q", i, got, order[i])
		}
	}
	plain, floor, divert := rows[0], rows[1], rows[2]
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	near("plain items/s", plain.ItemsPerSec, 200_000)
	near("plain CPU", plain.CPUTotal, 5)
	near("plain ratio", plain.Ratio, 1)
	near("plain RSS", plain.PeakRSSMB, 50)
	near("plain anon", plain.PeakAnonMB, 25)
	near("plain p50", plain.LatencyP50Ms, 2)
	near("plain p99", plain.LatencyP99Ms, 20)
	near("plain p99 max", plain.LatencyP99MaxMs, 30)
	near("divert anon", divert.PeakAnonMB, 20)
	near("divert sidecars anon", divert.SidecarsAnonMB, 4)
	near("divert items/s", divert.ItemsPerSec, 1_000_000)
	near("divert collector", divert.CPUCollector, 2)
	near("divert sidecars", divert.CPUSidecars, 1)
	near("divert total", divert.CPUTotal, 3)
	near("divert ratio", divert.Ratio, 0.6)
	// Rounds are paired in order: divert 2, 5, 3 over plain 4, 6, 5.
	near("divert ratio min", divert.RatioMin, 0.5)
	near("divert ratio max", divert.RatioMax, 5.0/6)
	near("divert total min", divert.CPUTotalMin, 2)
	near("divert total max", divert.CPUTotalMax, 5)
	near("divert sidecars RSS", divert.SidecarsRSSMB, 10)
	// Against the floor: medians 3 over 2; rounds 2/2, 5/2, 3/3.
	near("floor CPU", floor.CPUTotal, 2)
	near("floor vs plain", floor.Ratio, 0.4)
	near("divert vs floor", divert.FloorRatio, 1.5)
	near("divert vs floor min", divert.FloorRatioMin, 1)
	near("divert vs floor max", divert.FloorRatioMax, 2.5)
	near("plain vs floor", plain.FloorRatio, 2.5)
	if rows[4].Ratio != 0 || rows[4].FloorRatio != 0 || rows[3].FloorRatio != 0 {
		t.Errorf("rows without a reference have ratios %v, %v, %v", rows[4].Ratio, rows[4].FloorRatio, rows[3].FloorRatio)
	}
	if !plain.StartupExcluded || rows[3].StartupExcluded {
		t.Errorf("StartupExcluded: %v, %v", plain.StartupExcluded, rows[3].StartupExcluded)
	}

	var b strings.Builder
	targets := []Target{
		{Scenario: "divert", Reference: "floor", Measure: "cpu", Max: 1.5},
		{Scenario: "divert", Reference: "plain", Measure: "cpu", Max: 0.5},
		{Scenario: "divert", Reference: "plain", Measure: "rss", Max: 1},
		{Scenario: "divert", Reference: "plain", Measure: "anon", Max: 0.75},
		// Logs over http has no plain figure; metrics over gRPC no anon
		// figure, so its anon target is unknown, not a ratio of zero.
		{Scenario: "plain", Reference: "divert", Measure: "anon", Max: 1},
		{Scenario: "plain", Reference: "plain", Measure: "anon", Max: 1},
		{Scenario: "absent", Reference: "plain", Measure: "cpu", Max: 1},
	}
	if err := WriteTargets(&b, rows, targets); err != nil {
		t.Fatal(err)
	}
	wantTargets := `| target | signal | proto | median (min–max) | goal | holds |
|---|---|---|--:|--:|---|
| divert cpu vs floor | traces | grpc | 1.50x (1.00–2.50) | ≤ 1.50x | yes |
| divert cpu vs plain | traces | grpc | 0.60x (0.50–0.83) | ≤ 0.50x | **no** |
| divert rss vs plain | traces | grpc | 0.60x (0.60–0.60) | ≤ 1.00x | yes |
| divert anon vs plain | traces | grpc | 0.80x (0.80–0.80) | ≤ 0.75x | **no** |
| plain anon vs divert | traces | grpc | 1.25x (1.25–1.25) | ≤ 1.00x | **no** |
| plain anon vs plain | traces | grpc | 1.00x (1.00–1.00) | ≤ 1.00x | yes |
| plain anon vs plain | metrics | grpc | – | ≤ 1.00x | unknown |
`
	if b.String() != wantTargets {
		t.Errorf("targets: got\n%s\nwant\n%s", b.String(), wantTargets)
	}
	if err := WriteTargets(&b, rows, []Target{{Scenario: "divert", Reference: "plain", Measure: "p99"}}); err == nil {
		t.Error("unknown measure: no error")
	}
}

func TestWriteMarkdown(t *testing.T) {
	rows := []Row{
		{Scenario: "plain", Signal: "traces", Protocol: "grpc", Rounds: 3, ItemsPerSec: 1234567.4, CPUCollector: 4, CPUTotal: 4, CPUTotalMin: 3.9, CPUTotalMax: 4.2, Ratio: 1, RatioMin: 1, RatioMax: 1, FloorRatio: 2, FloorRatioMin: 1.9, FloorRatioMax: 2.1, PeakRSSMB: 48.6, PeakAnonMB: 20.4, LatencyP50Ms: 0.405, LatencyP99Ms: 1.5, LatencyP99MaxMs: 2.25, StartupExcluded: true},
		{Scenario: "pdata-divert", Signal: "traces", Protocol: "grpc", Rounds: 3, ItemsPerSec: 999.5, CPUCollector: 3.456, CPUSidecars: 1.5, CPUTotal: 4.956, CPUTotalMin: 4.5, CPUTotalMax: 5, Ratio: 1.239, RatioMin: 1.1, RatioMax: 1.3, PeakRSSMB: 52, SidecarsRSSMB: 20.4, PeakAnonMB: 22, SidecarsAnonMB: 8.6},
		{Scenario: "x", Signal: "logs", Protocol: "http", ItemsPerSec: 10, StartupExcluded: true},
	}
	var b strings.Builder
	err := WriteMarkdown(&b, rows,
		[]Unavailable{{"predecode-tee", "unknown type: \"wirestage\"\nsecond | line"}},
		[]Failure{{Case: "pdata-tee/logs/http", Round: 2, Err: errors.New("sidecars received 99 items, want exactly 100")}})
	if err != nil {
		t.Fatal(err)
	}
	want := `| scenario | signal | proto | items/s | CPU s/M items: collector | sidecars | total (min–max) | vs plain (min–max) | vs floor (min–max) | peak RSS MB: collector | sidecars | peak anon MB: collector | sidecars | latency ms: p50 | p99 (max) |
|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|
| plain | traces | grpc | 1,234,567 | 4.00 | 0.00 | 4.00 (3.90–4.20) | 1.00x (1.00–1.00) | 2.00x (1.90–2.10) | 49 | 0 | 20 | 0 | 0.41 | 1.50 (2.25) |
| pdata-divert | traces | grpc | 1,000 | 3.46* | 1.50 | 4.96 (4.50–5.00) | 1.24x (1.10–1.30) | – | 52 | 20 | 22 | 9 | – | – |
| x | logs | http | 10 | 0.00 | 0.00 | 0.00 (0.00–0.00) | – | – | 0 | 0 | – | – | – | – |
| predecode-tee | all | all | not available: unknown type: "wirestage" second \| line | | | | | | | | | | | |
| pdata-tee/logs/http | | | FAILED (round 2): sidecars received 99 items, want exactly 100 | | | | | | | | | | | |

\* startup and warm-up CPU included: this system offers no way to read a running process's CPU time.
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestThousands(t *testing.T) {
	for in, want := range map[float64]string{0: "0", 999: "999", 1000: "1,000", 1234567.8: "1,234,568", -12345: "-12,345"} {
		if got := thousands(in); got != want {
			t.Errorf("thousands(%v) = %q, want %q", in, got, want)
		}
	}
}

// The anon targets come beside the RSS ones, which stay as they were.
func TestDefaultTargets(t *testing.T) {
	want := []Target{
		{Scenario: "predecode-divert", Reference: "floor", Measure: "cpu", Max: 1.5},
		{Scenario: "predecode-tee", Reference: "plain", Measure: "cpu", Max: 1.2},
		{Scenario: "predecode-wirecount", Reference: "plain", Measure: "cpu", Max: 1.03},
		{Scenario: "predecode-divert", Reference: "plain", Measure: "rss", Max: 1},
		{Scenario: "predecode-tee", Reference: "plain", Measure: "rss", Max: 1},
		{Scenario: "predecode-divert", Reference: "plain", Measure: "anon", Max: 1},
		{Scenario: "predecode-tee", Reference: "plain", Measure: "anon", Max: 1},
	}
	if got := DefaultTargets("plain", "floor"); !slices.Equal(got, want) {
		t.Errorf("got %+v", got)
	}
}

func TestLatencyOf(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		out := make([]time.Duration, len(ns))
		for i, n := range ns {
			out[i] = time.Duration(n) * time.Millisecond
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = 100 - i // 100 down to 1
	}
	for _, tc := range []struct {
		in       []time.Duration
		p50, p99 time.Duration
	}{
		{nil, 0, 0},
		{ms(7), 7 * time.Millisecond, 7 * time.Millisecond},
		{ms(3, 1, 2), 2 * time.Millisecond, 3 * time.Millisecond},
		{ms(4, 1, 3, 2), 2 * time.Millisecond, 4 * time.Millisecond},
		// Nearest rank: p50 is the 50th smallest, p99 the 99th.
		{ms(hundred...), 50 * time.Millisecond, 99 * time.Millisecond},
		{ms(append(hundred, 1000)...), 51 * time.Millisecond, 100 * time.Millisecond},
	} {
		got := latencyOf(slices.Clone(tc.in))
		if got.P50 != tc.p50 || got.P99 != tc.p99 {
			t.Errorf("latencyOf(%d values) = %v, want p50 %v p99 %v", len(tc.in), got, tc.p50, tc.p99)
		}
	}
}
