// SPDX-License-Identifier: Apache-2.0

package e2ebench

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestCaseResultsOfAndJSONRoundTrip(t *testing.T) {
	const M = 1_000_000
	ms := []Measurement{
		measurement("plain", "traces", "grpc", M, 2*time.Second, 4*time.Second, 0, 40),
		measurement("floor", "traces", "grpc", M, time.Second, 2*time.Second, 0, 10),
		withAnon(measurement("divert", "traces", "grpc", M, time.Second, 2*time.Second, time.Second, 30), 12, 6),
		measurement("plain", "traces", "grpc", M, 2*time.Second, 6*time.Second, 0, 60),
		measurement("floor", "traces", "grpc", M, time.Second, 3*time.Second, 0, 10),
		withAnon(measurement("divert", "traces", "grpc", M, time.Second, 2*time.Second, 2*time.Second, 30), 14, 6),
	}
	// Two rounds, in the order Plan.Run appends them; round 2 of divert
	// listed first to check the order comes from Round.
	for i := range ms {
		ms[i].Round = 1 + i/3
	}
	ms[2], ms[5] = ms[5], ms[2]
	ms[2].Latency = Latency{P50: 3 * time.Millisecond, P99: 9 * time.Millisecond} // divert round 2
	ms[5].Latency = Latency{P50: time.Millisecond, P99: 5 * time.Millisecond}     // divert round 1
	rows := Aggregate(ms, []string{"plain", "floor", "divert"}, "plain", "floor")
	cases := CaseResultsOf(rows, ms)
	if len(cases) != 3 {
		t.Fatalf("%d cases", len(cases))
	}
	divert := cases[2]
	if divert.Scenario != "divert" || len(divert.Rounds) != 2 {
		t.Fatalf("divert: %+v", divert)
	}
	if r := divert.Rounds; r[0].Round != 1 || r[0].CPUTotal != 3 || r[1].Round != 2 || r[1].CPUTotal != 4 {
		t.Fatalf("divert rounds out of order or wrong: %+v", r)
	}
	if r := divert.Rounds; r[0].PeakAnonMB != 12 || r[1].PeakAnonMB != 14 || r[1].SidecarsAnonMB != 6 {
		t.Fatalf("divert rounds' peak anon: %+v", r)
	}
	if divert.Median.PeakAnonMB != 13 || divert.Median.SidecarsAnonMB != 6 || cases[0].Median.PeakAnonMB != 0 {
		t.Fatalf("peak anon medians: divert %+v, plain %+v", divert.Median, cases[0].Median)
	}
	if r := divert.Rounds; r[0].LatencyP50Ms != 1 || r[0].LatencyP99Ms != 5 || r[1].LatencyP99Ms != 9 || divert.Median.LatencyP50Ms != 2 || divert.Median.LatencyP99Ms != 7 {
		t.Fatalf("divert latencies: rounds %+v, median %+v", r, divert.Median)
	}
	if divert.Median.CPUTotal != 3.5 || divert.CPUTotalMin != 3 || divert.CPUTotalMax != 4 {
		t.Fatalf("divert medians: %+v min %v max %v", divert.Median, divert.CPUTotalMin, divert.CPUTotalMax)
	}
	// Floor totals 2 and 3 (median 2.5); divert 3 and 4: 1.4x, paired 1.5 and 1.33.
	if f := divert.VsFloor; f == nil || f.Median != 3.5/2.5 || f.Min != 4.0/3 || f.Max != 1.5 {
		t.Fatalf("divert vs floor: %+v", f)
	}
	if cases[0].VsBaseline == nil || cases[0].VsBaseline.Median != 1 {
		t.Fatalf("plain vs itself: %+v", cases[0].VsBaseline)
	}

	res := Results{
		Started: time.Date(2026, 11, 26, 6, 0, 0, 0, time.UTC), Command: "benche2e -clients 16",
		Load:     LoadShape{Items: 2000, Warmup: 50, Clients: 16, Resources: 1000, ItemsPerResource: 1, Payload: PayloadSDK, Compression: "gzip", Rounds: 2},
		Baseline: "plain", Floor: "floor", Cases: cases,
		Unavailable: []Unavailable{{Scenario: "tee", Reason: "no wirestage"}},
		Failures:    FailureRecords([]Failure{{Case: "x/logs/http", Round: 2, Err: errors.New("lost 3 items")}}),
	}
	var buf bytes.Buffer
	if err := res.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"clients": 16`, `"items_per_resource": 1`, `"compression": "gzip"`, `"cpu_total": 3.5`, `"error": "lost 3 items"`,
		`"peak_anon_mb": 13`, `"sidecars_anon_mb": 6`, `"peak_anon_mb": 0`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("JSON lacks %s:\n%s", want, buf.String())
		}
	}
	got, err := ReadResults(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != ResultsVersion || got.Load != res.Load || !got.Started.Equal(res.Started) ||
		len(got.Cases) != 3 || got.Cases[2].Rounds[1].CPUTotal != 4 || got.Cases[2].Rounds[1].PeakAnonMB != 14 || *got.Cases[2].VsFloor != *divert.VsFloor ||
		got.Failures[0] != res.Failures[0] || got.Unavailable[0] != res.Unavailable[0] {
		t.Fatalf("read back %+v", got)
	}
}

// A file written before the peak anonymous memory was measured still reads,
// its figures 0 (unknown).
func TestReadResultsWithoutAnon(t *testing.T) {
	old := `{"version": 1, "started": "2026-11-26T06:00:00Z", "command": "benche2e", "machine": "linux/amd64",
  "load_before": "1 1 1", "load_after": "1 1 1",
  "load": {"items": 2000, "warmup": 50, "clients": 4, "resources": 10, "items_per_resource": 10, "payload": "small", "compression": "none", "rounds": 1},
  "cases": [{"scenario": "plain", "signal": "traces", "protocol": "grpc",
    "median": {"items_per_sec": 1000, "cpu_collector": 2, "cpu_sidecars": 0, "cpu_total": 2, "peak_rss_mb": 48, "sidecars_rss_mb": 0, "startup_excluded": true},
    "cpu_total_min": 2, "cpu_total_max": 2,
    "rounds": [{"round": 1, "items": 2000, "elapsed_seconds": 2, "items_per_sec": 1000, "cpu_collector": 2, "cpu_sidecars": 0, "cpu_total": 2, "peak_rss_mb": 48, "sidecars_rss_mb": 0, "startup_excluded": true}]}]}`
	r, err := ReadResults(strings.NewReader(old))
	if err != nil {
		t.Fatal(err)
	}
	if c := r.Cases[0]; c.Median.PeakRSSMB != 48 || c.Median.PeakAnonMB != 0 || c.Rounds[0].SidecarsAnonMB != 0 {
		t.Fatalf("read %+v", c)
	}
}

func TestReadResultsRejects(t *testing.T) {
	for name, in := range map[string]string{
		"other version": `{"version": 2, "cases": []}`,
		"no version":    `{"cases": []}`,
		"unknown field": `{"version": 1, "cpu": 3}`,
		"not JSON":      `| scenario | signal |`,
	} {
		_, err := ReadResults(strings.NewReader(in))
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if strings.Contains(name, "version") && !errors.Is(err, ErrResultsVersion) {
			t.Errorf("%s: %v, want ErrResultsVersion", name, err)
		}
	}
}

// A case whose elapsed time is zero gives a rate of zero, not an infinity
// that JSON cannot hold.
func TestFiguresOfZeroElapsed(t *testing.T) {
	f := figuresOf(measurement("plain", "traces", "grpc", 10, 0, time.Second, 0, 1))
	if f.ItemsPerSec != 0 {
		t.Fatalf("items/s = %v", f.ItemsPerSec)
	}
	var buf bytes.Buffer
	if err := (Results{Cases: []CaseResults{{Rounds: []Figures{f}}}}).WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
}
