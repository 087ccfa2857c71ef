package e2ebench

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
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
		if got := median(in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
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
		Collector:       Usage{CPU: collector, PeakRSS: rssMiB << 20},
		Sidecars:        Usage{CPU: sidecars, PeakRSS: 10 << 20},
		StartupExcluded: true,
	}
}

func TestAggregate(t *testing.T) {
	const M = 1_000_000
	ms := []Measurement{
		// Three rounds of plain: CPU 4, 6, 5 s per M items: median 5.
		measurement("plain", "traces", "grpc", M, 4*time.Second, 4*time.Second, 0, 40),
		measurement("plain", "traces", "grpc", M, 5*time.Second, 6*time.Second, 0, 60),
		measurement("plain", "traces", "grpc", M, 10*time.Second, 5*time.Second, 0, 50),
		// divert: collector 1 or 2 s, sidecars 1 or 3 s; totals 2, 5, 3 (median 3),
		// which is not the sum of the medians (2 + 1 + ... ).
		measurement("divert", "traces", "grpc", 2*M, 2*time.Second, 2*time.Second, 2*time.Second, 30),
		measurement("divert", "traces", "grpc", 2*M, 2*time.Second, 4*time.Second, 6*time.Second, 30),
		measurement("divert", "traces", "grpc", 2*M, 4*time.Second, 4*time.Second, 2*time.Second, 30),
		// logs over http has no baseline figure.
		measurement("divert", "logs", "http", M, time.Second, time.Second, time.Second, 20),
		// metrics over gRPC comes before logs in the report.
		measurement("plain", "metrics", "grpc", M, time.Second, time.Second, 0, 20),
	}
	ms[7].StartupExcluded = false
	rows := Aggregate(ms, []string{"plain", "divert"}, "plain")
	if len(rows) != 4 {
		t.Fatalf("%d rows: %+v", len(rows), rows)
	}
	order := []string{"plain traces grpc", "divert traces grpc", "plain metrics grpc", "divert logs http"}
	for i, r := range rows {
		if got := r.Scenario + " " + r.Signal + " " + r.Protocol; got != order[i] {
			t.Errorf("row %d is %q, want %q", i, got, order[i])
		}
	}
	plain, divert := rows[0], rows[1]
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
	near("divert items/s", divert.ItemsPerSec, 1_000_000)
	near("divert collector", divert.CPUCollector, 2)
	near("divert sidecars", divert.CPUSidecars, 1)
	near("divert total", divert.CPUTotal, 3)
	near("divert ratio", divert.Ratio, 0.6)
	if rows[3].Ratio != 0 {
		t.Errorf("a row without a baseline has ratio %v", rows[3].Ratio)
	}
	if !plain.StartupExcluded || rows[2].StartupExcluded {
		t.Errorf("StartupExcluded: %v, %v", plain.StartupExcluded, rows[2].StartupExcluded)
	}
}

func TestWriteMarkdown(t *testing.T) {
	rows := []Row{
		{Scenario: "plain", Signal: "traces", Protocol: "grpc", Rounds: 3, ItemsPerSec: 1234567.4, CPUCollector: 4, CPUTotal: 4, Ratio: 1, PeakRSSMB: 48.6, StartupExcluded: true},
		{Scenario: "pdata-divert", Signal: "traces", Protocol: "grpc", Rounds: 3, ItemsPerSec: 999.5, CPUCollector: 3.456, CPUSidecars: 1.5, CPUTotal: 4.956, Ratio: 1.239, PeakRSSMB: 52},
		{Scenario: "x", Signal: "logs", Protocol: "http", ItemsPerSec: 10, StartupExcluded: true},
	}
	var b strings.Builder
	err := WriteMarkdown(&b, rows,
		[]Unavailable{{"predecode-tee", "unknown type: \"wirestage\"\nsecond | line"}},
		[]Failure{{Case: "pdata-tee/logs/http", Round: 2, Err: errors.New("sidecars received 99 items, want exactly 100")}})
	if err != nil {
		t.Fatal(err)
	}
	want := `| scenario | signal | proto | items/s | CPU s/M items: collector | sidecars | total | ratio to plain | peak RSS MB |
|---|---|---|--:|--:|--:|--:|--:|--:|
| plain | traces | grpc | 1,234,567 | 4.00 | 0.00 | 4.00 | 1.00x | 49 |
| pdata-divert | traces | grpc | 1,000 | 3.46* | 1.50 | 4.96 | 1.24x | 52 |
| x | logs | http | 10 | 0.00 | 0.00 | 0.00 | – | 0 |
| predecode-tee | all | all | not available: unknown type: "wirestage" second \| line | | | | | |
| pdata-tee/logs/http | | | FAILED (round 2): sidecars received 99 items, want exactly 100 | | | | | |

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
