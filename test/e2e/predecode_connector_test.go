// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// connectorConfig: otlp runs wirecount's and sdpshard's stages for traces/in,
// which passes everything through the forward connector into traces/out.
// traces/out holds wirecount and sdpshard with the same IDs and is also fed
// by otlp/plain, a receiver without the stage: what reaches traces/out from
// the connector must be counted and forwarded exactly as what comes from
// otlp/plain. Nothing detaches the request context on the way (no batch
// processor), so the stage's mark reaches traces/out with the data.
const connectorConfig = `
receivers:
  otlp:
    protocols:
      grpc: {endpoint: "{{grpc}}", middlewares: [{id: wirestage}]}
      http: {endpoint: "{{http}}", middlewares: [{id: wirestage}]}
  otlp/plain:
    protocols:
      grpc: {endpoint: "{{plain_grpc}}"}
      http: {endpoint: "{{plain_http}}"}
connectors:
  forward: {}
processors:
  wirecount: {group_by: [service.name]}
  sdpshard: {endpoints: ["{{sidecar}}"], mode: tee}
exporters:
  otlphttp: {traces_endpoint: "{{sink}}/out/v1/traces", compression: none}
extensions:
  health_check: {endpoint: "{{health}}"}
  wirestage:
    stages: [wirecount, sdpshard]
service:
  extensions: [health_check, wirestage]
  telemetry:
    metrics:
      level: detailed
      readers:
        - pull: {exporter: {prometheus: {host: "127.0.0.1", port: {{metrics_port}}}}}
  pipelines:
    traces/in: {receivers: [otlp], processors: [wirecount, sdpshard], exporters: [forward]}
    traces/out: {receivers: [forward, otlp/plain], processors: [wirecount, sdpshard], exporters: [otlphttp]}
`

// TestConnectorFedPipelineProcessesLikeAnyReceiver: every item traces/out
// receives from the connector is counted by wirecount and forwarded by
// sdpshard there, as items from otlp/plain are, on top of what the stage
// counted and forwarded for traces/in.
func TestConnectorFedPipelineProcessesLikeAnyReceiver(t *testing.T) {
	dir := t.TempDir()
	sink := startSink(t)
	vars := map[string]string{"sink": sink.url}
	var sidecarOut string
	vars["sidecar"], sidecarOut, _ = startSidecar(t, dir, "sidecar")
	c := startCollectorFrom(t, dir, "collector", connectorConfig, vars, nil, "grpc", "http", "plain_grpc", "plain_http")
	addrs, metricsURL := c.addrs, c.metricsURL

	staged := batchesFor("staged") // gRPC, HTTP protobuf (the stage) and JSON (pdata)
	plain := batchesFor("plain")
	sendAll(t, addrs["grpc"], addrs["http"], staged)
	sendAll(t, addrs["plain_grpc"], addrs["plain_http"], plain)
	stagedSent, plainSent := values(staged), values(plain)
	all := append(append([]ptrace.Traces(nil), stagedSent...), plainSent...)

	// The stage handled the four protobuf requests sent to otlp (gRPC,
	// gRPC+gzip, HTTP, HTTP+gzip); without it every count below would be
	// the same and prove nothing.
	eventually(t, 10*time.Second, func() error {
		v, err := metricSum(metricsURL, "otelcol_extension_wirestage_requests", `outcome="passed"`)
		if err == nil && v != 4 {
			err = fmt.Errorf("the stage passed %v requests, want 4", v)
		}
		return err
	})

	// Downstream of traces/out: everything, once.
	down := waitSpans(t, "downstream", spanCount(all), func() ([]ptrace.Traces, error) { return sink.traces("/out/v1/traces"), nil })
	assertSameResources(t, "downstream", all, down)

	// The sidecar: each resource sent to otlp twice (the stage for
	// traces/in, sdpshard in traces/out), each sent to otlp/plain once.
	want := map[string]int{}
	for _, td := range stagedSent {
		addServices(want, td, 2)
	}
	for _, td := range plainSent {
		addServices(want, td, 1)
	}
	wantSpans := 2*spanCount(stagedSent) + spanCount(plainSent)
	waitSpans(t, "sidecar", wantSpans, func() ([]ptrace.Traces, error) { return sidecarTraces(sidecarOut) })
	time.Sleep(500 * time.Millisecond) // anything more would arrive now
	got, err := sidecarTraces(sidecarOut)
	if err != nil {
		t.Fatal(err)
	}
	if n := spanCount(got); n != wantSpans {
		t.Errorf("sidecar received %d spans, want %d", n, wantSpans)
	}
	assertResourceCopies(t, "sidecar", stagedSent, plainSent, got, want)

	// wirecount: twice the spans of each service sent to otlp, once those
	// of each service sent to otlp/plain.
	for _, sent := range []struct {
		tds    []ptrace.Traces
		copies int
	}{{stagedSent, 2}, {plainSent, 1}} {
		for _, td := range sent.tds {
			for i := 0; i < td.ResourceSpans().Len(); i++ {
				rs := td.ResourceSpans().At(i)
				service, _ := rs.Resource().Attributes().Get("service.name")
				spans := 0
				for j := 0; j < rs.ScopeSpans().Len(); j++ {
					spans += rs.ScopeSpans().At(j).Spans().Len()
				}
				v, err := metricSum(metricsURL, "otelcol_processor_wirecount_items", `service_name="`+service.Str()+`"`)
				if err != nil {
					t.Fatal(err)
				}
				if v != float64(sent.copies*spans) {
					t.Errorf("wirecount items for %s: %v, want %d (%d × %d spans)", service.Str(), v, sent.copies*spans, sent.copies, spans)
				}
			}
		}
	}
}

func addServices(counts map[string]int, td ptrace.Traces, copies int) {
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		v, _ := td.ResourceSpans().At(i).Resource().Attributes().Get("service.name")
		counts[v.Str()] += copies
	}
}

// assertResourceCopies checks that got holds each resource of the sent
// batches exactly want[service] times, byte for byte, and nothing else.
func assertResourceCopies(t *testing.T, what string, stagedSent, plainSent, got []ptrace.Traces, want map[string]int) {
	t.Helper()
	sent, _ := resourcesByService(t, append(append([]ptrace.Traces(nil), stagedSent...), plainSent...))
	seen := map[string]int{}
	for _, td := range got {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			one := ptrace.NewTraces()
			td.ResourceSpans().At(i).CopyTo(one.ResourceSpans().AppendEmpty())
			b, err := ptraceotlp.NewExportRequestFromTraces(one).MarshalProto()
			if err != nil {
				t.Fatal(err)
			}
			v, _ := td.ResourceSpans().At(i).Resource().Attributes().Get("service.name")
			if string(sent[v.Str()]) != string(b) {
				t.Errorf("%s: resource %s differs from what was sent", what, v.Str())
			}
			seen[v.Str()]++
		}
	}
	for service, n := range want {
		if seen[service] != n {
			t.Errorf("%s: resource %s received %d times, want %d", what, service, seen[service], n)
		}
	}
	for service := range seen {
		if _, ok := want[service]; !ok {
			t.Errorf("%s: unexpected resource %s", what, service)
		}
	}
}
