// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/otelcol-sdp/otelcol-sdp/internal/sidecar"
)

func TestParseExposition(t *testing.T) {
	text := `# HELP otelcol_processor_wirecount_items Items received per group.
# TYPE otelcol_processor_wirecount_items counter
otelcol_processor_wirecount_items{otelcol_signal="traces",otelcol_component_id="wirecount",service_name="a\"b\\c"} 42
otelcol_processor_wirecount_items{otelcol_signal="logs",otelcol_component_id="wirecount",service_name="x,y}"} 7 1700000000000
target_info 1
`
	samples, err := parseExposition(text)
	if err != nil {
		t.Fatal(err)
	}
	if len(samples) != 3 {
		t.Fatalf("%d samples, want 3: %+v", len(samples), samples)
	}
	if s := samples[0]; s.name != "otelcol_processor_wirecount_items" || s.value != 42 ||
		s.labels["service_name"] != `a"b\c` || s.labels["otelcol_signal"] != "traces" {
		t.Errorf("first sample = %+v", s)
	}
	if s := samples[1]; s.labels["service_name"] != "x,y}" || s.value != 7 {
		t.Errorf("second sample = %+v", s)
	}
	if s := samples[2]; s.name != "target_info" || len(s.labels) != 0 || s.value != 1 {
		t.Errorf("third sample = %+v", s)
	}
}

func TestParseExpositionRejectsBrokenLines(t *testing.T) {
	for _, line := range []string{
		`m{a="1"`,
		`m{a="1"} `,
		`m{a} 1`,
		`m notanumber`,
		`m`,
	} {
		if _, err := parseExposition(line); err == nil {
			t.Errorf("parseExposition(%q) accepted a broken line", line)
		}
	}
}

func TestCountedSumsTheCaseServicesOfOneSignal(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte(`otelcol_processor_wirecount_items{otelcol_signal="traces",otelcol_component_id="wirecount",service_name="s1"} 10
otelcol_processor_wirecount_items{otelcol_signal="traces",otelcol_component_id="wirecount",service_name="s2"} 5
otelcol_processor_wirecount_items{otelcol_signal="logs",otelcol_component_id="wirecount",service_name="s1"} 100
otelcol_processor_wirecount_items{otelcol_signal="traces",otelcol_component_id="wirecount",service_name="other"} 1000
otelcol_processor_wirecount_bytes{otelcol_signal="traces",otelcol_component_id="wirecount",service_name="s1"} 9999
`))
	}))
	defer srv.Close()
	r := &runner{metricsURL: srv.URL}
	got, err := r.counted("traces", []string{"s1", "s2"})
	if err != nil {
		t.Fatal(err)
	}
	if got != 15 {
		t.Errorf("counted = %d, want 15 (traces of s1 and s2 only)", got)
	}
}

func TestScrapeSumMatchesNameAndLabels(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte(`# HELP otelcol_processor_sdpshard_queue_bytes Bytes of frames held for a shard.
otelcol_processor_sdpshard_queue_bytes{otelcol_component_id="sdpshard",shard="0"} 100
otelcol_processor_sdpshard_queue_bytes{otelcol_component_id="sdpshard",shard="1"} 4096
otelcol_processor_sdpshard_queue_bytes{otelcol_component_id="sdpshard/b",shard="1"} 8
otelcol_process_runtime_heap_alloc_bytes 7.5e+06
`))
	}))
	defer srv.Close()
	for _, tt := range []struct {
		name  string
		match map[string]string
		want  float64
	}{
		{"otelcol_processor_sdpshard_queue_bytes", map[string]string{"shard": "1"}, 4104},
		{"otelcol_processor_sdpshard_queue_bytes", map[string]string{"shard": "1", "otelcol_component_id": "sdpshard"}, 4096},
		{"otelcol_processor_sdpshard_queue_bytes", nil, 4204},
		{"otelcol_process_runtime_heap_alloc_bytes", nil, 7.5e6},
		{"otelcol_process_runtime_heap_alloc_bytes", map[string]string{"shard": "1"}, 0},
		{"absent", nil, 0},
	} {
		got, err := ScrapeSum(srv.URL, tt.name, tt.match)
		if err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("ScrapeSum(%s, %v) = %v, want %v", tt.name, tt.match, got, tt.want)
		}
	}
}

func TestSidecarItemsReadsTheStatsFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "stats.json")
	if n, err := sidecarItems(path, "traces"); err != nil || n != 0 {
		t.Fatalf("missing stats file: got %d, %v; want 0, nil", n, err)
	}
	// Written with the sidecar's own type, so a renamed field breaks here.
	stats, err := json.Marshal(sidecar.Stats{
		Shards: map[string]map[string]sidecar.Counts{"0": {"traces": {Frames: 2, Items: 30, Bytes: 100}}},
		Totals: map[string]sidecar.Counts{"traces": {Frames: 2, Items: 30, Bytes: 100}, "logs": {Frames: 1, Items: 4, Bytes: 9}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, stats, 0o644); err != nil {
		t.Fatal(err)
	}
	for signal, want := range map[string]int{"traces": 30, "metrics": 0, "logs": 4} {
		if n, err := sidecarItems(path, signal); err != nil || n != want {
			t.Errorf("%s: got %d, %v; want %d", signal, n, err, want)
		}
	}
	if err := os.WriteFile(path, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := sidecarItems(path, "traces"); err == nil {
		t.Error("a truncated stats file was accepted")
	}
}

func TestTelemetrygenArgsCountWholeTraces(t *testing.T) {
	args, sent := telemetrygenArgs("traces", "http", "127.0.0.1:1", "svc", 101)
	if sent != 100 {
		t.Errorf("101 requested items of traces sent %d, want 100 (50 traces of 1+%d spans)", sent, childSpans)
	}
	for _, want := range [][]string{{"--traces", "50"}, {"--child-spans", "1"}, {"--service", "svc"}, {"--rate", "0"}} {
		if i := slices.Index(args, want[0]); i < 0 || args[i+1] != want[1] {
			t.Errorf("args %v lack %v", args, want)
		}
	}
	if !slices.Contains(args, "--otlp-http") {
		t.Errorf("http case without --otlp-http: %v", args)
	}
	args, sent = telemetrygenArgs("logs", "grpc", "127.0.0.1:1", "svc", 7)
	if sent != 7 || slices.Contains(args, "--otlp-http") || args[0] != "logs" {
		t.Errorf("logs over grpc: sent %d, args %v", sent, args)
	}
}

func TestReportErrNamesUnbalancedCases(t *testing.T) {
	r := &Report{Results: []Result{
		{Signal: "traces", Protocol: "grpc", Sent: 10, Counted: 10, Received: [Shards]int{4, 6}},
		{Signal: "logs", Protocol: "http", Sent: 10, Counted: 9, Received: [Shards]int{10, 0}},
	}}
	err := r.Err()
	if !errors.Is(err, ErrMismatch) {
		t.Fatalf("Err() = %v, want ErrMismatch", err)
	}
	if !strings.Contains(err.Error(), "logs/http") || strings.Contains(err.Error(), "traces/grpc") {
		t.Errorf("Err() = %v, want only logs/http named", err)
	}
	var table strings.Builder
	r.WriteTo(&table)
	if !strings.Contains(table.String(), "MISMATCH") || !strings.Contains(table.String(), "total") {
		t.Errorf("report table:\n%s", table.String())
	}
	r.Results = r.Results[:1]
	if err := r.Err(); err != nil {
		t.Errorf("balanced report: Err() = %v", err)
	}
	if err := (&Report{}).Err(); !errors.Is(err, ErrMismatch) {
		t.Errorf("empty report: Err() = %v, want ErrMismatch", err)
	}
}

func TestRunFailsClearlyWithoutBinaries(t *testing.T) {
	_, err := Run(context.Background(), Options{Binaries: Binaries{Collector: "/nonexistent/otelcol-sdp"}, Config: "x"})
	if err == nil {
		t.Fatal("Run without binaries succeeded")
	}
	for _, want := range []string{"otelcol-sdp collector", "sdp-sidecar: no path given", "telemetrygen: no path given"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
