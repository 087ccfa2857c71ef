// SPDX-License-Identifier: Apache-2.0

package e2ebench

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/otelcol-sdp/otelcol-sdp/benchmarks/internal/perfstat"
	"github.com/otelcol-sdp/otelcol-sdp/benchmarks/internal/perfstat/perfstattest"
)

func TestKernelFiguresPerRequestAndMedians(t *testing.T) {
	const M = 1_000_000
	counted := func(m Measurement, requests int64, coll, side perfstat.Crossings) Measurement {
		m.Requests, m.CollectorKernel, m.SidecarsKernel, m.KernelCounted = requests, coll, side, true
		return m
	}
	ms := []Measurement{
		counted(measurement("divert", "traces", "grpc", M, time.Second, 2*time.Second, time.Second, 30), 10_000,
			perfstat.Crossings{Syscalls: 130_000, ContextSwitches: 40_000, Reads: 50_000, Writes: 30_000, Polls: 20_000, Scheduler: 25_000},
			perfstat.Crossings{Syscalls: 90_000, ContextSwitches: 30_000}),
		counted(measurement("divert", "traces", "grpc", M, time.Second, 2*time.Second, time.Second, 30), 10_000,
			perfstat.Crossings{Syscalls: 150_000, ContextSwitches: 36_000, Reads: 54_000, Writes: 36_000, Polls: 22_000, Scheduler: 21_000},
			perfstat.Crossings{Syscalls: 80_000, ContextSwitches: 34_000}),
		counted(measurement("divert", "traces", "grpc", M, time.Second, 2*time.Second, time.Second, 30), 5_000,
			perfstat.Crossings{Syscalls: 70_000, ContextSwitches: 19_000, Reads: 26_000, Writes: 16_000, Polls: 10_500, Scheduler: 12_000},
			perfstat.Crossings{Syscalls: 44_000, ContextSwitches: 16_000}),
		measurement("plain", "traces", "grpc", M, time.Second, 4*time.Second, 0, 40),
	}
	for i := range ms {
		ms[i].Round = 1 + i%3
	}
	rows := Aggregate(ms, []string{"plain", "divert"}, "plain", "")
	if rows[0].Kernel != nil {
		t.Errorf("plain was not counted but has %+v", rows[0].Kernel)
	}
	// Per request: syscalls 13, 15, 14 -> 14; context switches 4, 3.6,
	// 3.8 -> 3.8; reads 5, 5.4, 5.2 -> 5.2; sidecars 9, 8, 8.8 -> 8.8.
	k := rows[1].Kernel
	if k == nil {
		t.Fatal("divert has no kernel figures")
	}
	want := KernelFigures{
		Collector: PerRequest{Syscalls: 14, ContextSwitches: 3.8, Reads: 5.2, Writes: 3.2, Polls: 2.1, Scheduler: 2.4},
		Sidecars:  PerRequest{Syscalls: 8.8, ContextSwitches: 3.2},
	}
	if *k != want {
		t.Fatalf("medians %+v, want %+v", *k, want)
	}
	if f := figuresOf(ms[2]); f.Requests != 5_000 || f.Kernel == nil || f.Kernel.Collector.Syscalls != 14 {
		t.Fatalf("one round's figures: %+v", f)
	}

	var b bytes.Buffer
	if err := WriteMarkdown(&b, rows, nil, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| divert | traces | grpc | 14.0 | 3.80 | 5.20 | 3.20 | 2.10 | 2.40 | 8.8 | 3.20 |") {
		t.Errorf("kernel table missing or wrong:\n%s", b.String())
	}
	b.Reset()
	if err := WriteMarkdown(&b, rows[:1], nil, nil); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "System calls") {
		t.Errorf("a run that counted nothing shows a kernel table:\n%s", b.String())
	}
}

// A case run with Options.Perf counts the crossings of the measured window
// only (the fake perf counts nothing unless the window is opened and closed
// once) and reports them with the number of requests measured.
func TestRunCaseCountsCrossings(t *testing.T) {
	dir := t.TempDir()
	floor, err := BuildFloor("go", dir, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	scenarios, err := LoadScenarios("configs")
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(scenarios, func(s Scenario) bool { return s.Binary == FloorBinary })
	if i < 0 {
		t.Fatal("no floor scenario in configs")
	}
	payload, err := NewPayload("traces", Shape{Resources: 2, ItemsPerResource: 5, Kind: PayloadSmall})
	if err != nil {
		t.Fatal(err)
	}
	o := Options{
		Collectors: map[string]string{FloorBinary: floor}, Items: 200, Warmup: 3, Clients: 2,
		Settle: 10 * time.Second, WorkDir: dir, Perf: perfstattest.Setup(t, perfstattest.Count),
	}
	m, err := runCase(context.Background(), o, Case{Scenario: scenarios[i], Signal: "traces", Protocol: "grpc"}, payload, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !m.KernelCounted || m.CollectorKernel != perfstattest.Crossings || m.SidecarsKernel != (perfstat.Crossings{}) {
		t.Fatalf("counted %v: collector %+v, sidecars %+v", m.KernelCounted, m.CollectorKernel, m.SidecarsKernel)
	}
	if m.Requests != 20 || m.Items != 200 {
		t.Fatalf("measured %d requests, %d items; want 20 and 200", m.Requests, m.Items)
	}
	if f := figuresOf(m); f.Kernel == nil || f.Kernel.Collector.Syscalls != 50 {
		t.Fatalf("figures %+v", f.Kernel)
	}
}
