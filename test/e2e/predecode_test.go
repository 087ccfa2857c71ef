// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	grpcgzip "google.golang.org/grpc/encoding/gzip"
	"google.golang.org/grpc/status"

	"github.com/otelcol-sdp/otelcol-sdp/test/testbin"
)

func newGzipWriter(w io.Writer) *gzip.Writer { return gzip.NewWriter(w) }

// predecodeConfig runs four otlp receivers side by side: divert and tee
// through wirestage extensions, plain on the pdata path, and stall in front
// of a sidecar the test stops.
const predecodeConfig = `
receivers:
  otlp/divert:
    protocols:
      grpc: {endpoint: "{{divert_grpc}}", middlewares: [{id: wirestage/divert}]}
      http: {endpoint: "{{divert_http}}", middlewares: [{id: wirestage/divert}]}
  otlp/tee:
    protocols:
      grpc: {endpoint: "{{tee_grpc}}", middlewares: [{id: wirestage/tee}]}
      http: {endpoint: "{{tee_http}}", middlewares: [{id: wirestage/tee}]}
  otlp/plain:
    protocols:
      grpc: {endpoint: "{{plain_grpc}}"}
      http: {endpoint: "{{plain_http}}"}
  otlp/stall:
    protocols:
      grpc: {endpoint: "{{stall_grpc}}", middlewares: [{id: wirestage/stall}]}
      http: {endpoint: "{{stall_http}}", middlewares: [{id: wirestage/stall}]}
processors:
  wirecount/divert: {group_by: [service.name]}
  sdpshard/divert: {endpoints: ["{{sidecar_a0}}", "{{sidecar_a1}}"], mode: divert}
  wirecount/tee: {group_by: [service.name]}
  sdpshard/tee: {endpoints: ["{{sidecar_b}}"], mode: tee}
  wirecount/plain: {group_by: [service.name]}
  sdpshard/stall:
    endpoints: ["{{sidecar_c}}"]
    mode: divert
    wait_for_ack: false
    max_frame_bytes: 4096
    queue_bytes: 8192
exporters:
  debug: {}
  otlphttp/divert: {traces_endpoint: "{{sink}}/divert/v1/traces", compression: none}
  otlphttp/tee: {traces_endpoint: "{{sink}}/tee/v1/traces", compression: none}
  otlphttp/plain: {traces_endpoint: "{{sink}}/plain/v1/traces", compression: none}
  otlphttp/stall: {traces_endpoint: "{{sink}}/stall/v1/traces", compression: none}
extensions:
  health_check: {endpoint: "{{health}}"}
  wirestage/divert:
    stages: [wirecount/divert, sdpshard/divert]
    divert_all_pipelines: true
  wirestage/tee:
    stages: [wirecount/tee, sdpshard/tee]
  wirestage/stall:
    stages: [sdpshard/stall]
    divert_all_pipelines: true
service:
  extensions: [health_check, wirestage/divert, wirestage/tee, wirestage/stall]
  telemetry:
    metrics:
      level: detailed
      readers:
        - pull: {exporter: {prometheus: {host: "127.0.0.1", port: {{metrics_port}}}}}
  pipelines:
    traces/divert: {receivers: [otlp/divert], processors: [wirecount/divert, sdpshard/divert], exporters: [otlphttp/divert]}
    logs/divert: {receivers: [otlp/divert], processors: [wirecount/divert, sdpshard/divert], exporters: [debug]}
    metrics/divert: {receivers: [otlp/divert], processors: [wirecount/divert, sdpshard/divert], exporters: [debug]}
    traces/tee: {receivers: [otlp/tee], processors: [wirecount/tee, sdpshard/tee], exporters: [otlphttp/tee]}
    traces/plain: {receivers: [otlp/plain], processors: [wirecount/plain], exporters: [otlphttp/plain]}
    traces/stall: {receivers: [otlp/stall], processors: [sdpshard/stall], exporters: [otlphttp/stall]}
`

// predecode is one running Collector with its sidecars and sink.
type predecode struct {
	addrs      map[string]string
	metricsURL string
	sidecarA   []string // output directories
	sidecarB   string
	sidecarC   string
	stalled    *testbin.Process
	sink       *otlpSink
}

func startPredecode(t *testing.T) *predecode {
	dir := t.TempDir()
	p := &predecode{sink: startSink(t)}
	vars := map[string]string{"sink": p.sink.url}
	for i := range 2 {
		ep, out, _ := startSidecar(t, dir, fmt.Sprintf("sidecar-a%d", i))
		vars[fmt.Sprintf("sidecar_a%d", i)] = ep
		p.sidecarA = append(p.sidecarA, out)
	}
	vars["sidecar_b"], p.sidecarB, _ = startSidecar(t, dir, "sidecar-b")
	vars["sidecar_c"], p.sidecarC, p.stalled = startSidecar(t, dir, "sidecar-c")
	c := startCollectorFrom(t, dir, "collector", predecodeConfig, vars, nil,
		"divert_grpc", "divert_http", "tee_grpc", "tee_http", "plain_grpc", "plain_http", "stall_grpc", "stall_http")
	p.addrs, p.metricsURL = c.addrs, c.metricsURL
	return p
}

// batch builds a request of resources named prefix-0..n-1 with spans spans
// each; every span name is unique.
func batch(prefix string, resources, spans int) ptrace.Traces {
	td := ptrace.NewTraces()
	for r := range resources {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", fmt.Sprintf("%s-%d", prefix, r))
		rs.Resource().Attributes().PutInt("host.index", int64(r))
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName("e2e")
		for s := range spans {
			sp := ss.Spans().AppendEmpty()
			sp.SetName(fmt.Sprintf("%s-%d-span-%d", prefix, r, s))
			sp.SetTraceID([16]byte{byte(r), byte(s), 1})
			sp.SetSpanID([8]byte{byte(r), byte(s), 2})
			sp.Attributes().PutStr("payload", strings.Repeat("x", 20))
		}
	}
	return td
}

// resourcesByService returns each resource of tds, alone in a request and
// marshalled (pdata marshals deterministically), by service.name; a
// service seen twice is reported.
func resourcesByService(t *testing.T, tds []ptrace.Traces) (map[string][]byte, []string) {
	out := map[string][]byte{}
	var dups []string
	for _, td := range tds {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			one := ptrace.NewTraces()
			td.ResourceSpans().At(i).CopyTo(one.ResourceSpans().AppendEmpty())
			b, err := ptraceotlp.NewExportRequestFromTraces(one).MarshalProto()
			if err != nil {
				t.Fatal(err)
			}
			v, _ := td.ResourceSpans().At(i).Resource().Attributes().Get("service.name")
			if _, seen := out[v.Str()]; seen {
				dups = append(dups, v.Str())
			}
			out[v.Str()] = b
		}
	}
	return out, dups
}

func spanCount(tds []ptrace.Traces) int {
	n := 0
	for _, td := range tds {
		n += td.SpanCount()
	}
	return n
}

func grpcExport(t *testing.T, addr string, td ptrace.Traces, gz bool) error {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var opts []grpc.CallOption
	if gz {
		opts = append(opts, grpc.UseCompressor(grpcgzip.Name))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = ptraceotlp.NewGRPCClient(conn).Export(ctx, ptraceotlp.NewExportRequestFromTraces(td), opts...)
	return err
}

// sendAll sends the named batches to a receiver over gRPC, gRPC+gzip,
// HTTP protobuf, HTTP protobuf+gzip and HTTP JSON (the last one on the
// pdata path).
func sendAll(t *testing.T, grpcAddr, httpAddr string, batches map[string]ptrace.Traces) {
	t.Helper()
	for name, td := range batches {
		var err error
		switch {
		case strings.HasSuffix(name, "grpc"):
			err = grpcExport(t, grpcAddr, td, false)
		case strings.HasSuffix(name, "grpcgz"):
			err = grpcExport(t, grpcAddr, td, true)
		case strings.HasSuffix(name, "json"):
			var m ptrace.JSONMarshaler
			b, _ := m.MarshalTraces(td)
			var code int
			code, _, err = postOTLP(context.Background(), "http://"+httpAddr+"/v1/traces", "application/json", b, false)
			if err == nil && code != http.StatusOK {
				err = fmt.Errorf("HTTP %d", code)
			}
		default:
			b, _ := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
			var code int
			code, _, err = postOTLP(context.Background(), "http://"+httpAddr+"/v1/traces", "application/x-protobuf", b, strings.HasSuffix(name, "httpgz"))
			if err == nil && code != http.StatusOK {
				err = fmt.Errorf("HTTP %d", code)
			}
		}
		if err != nil {
			t.Fatalf("sending %s: %v", name, err)
		}
	}
}

func batchesFor(prefix string) map[string]ptrace.Traces {
	out := map[string]ptrace.Traces{}
	for i, kind := range []string{"grpc", "grpcgz", "http", "httpgz", "json"} {
		out[prefix+"-"+kind] = batch(fmt.Sprintf("%s%d", prefix, i), 3, 4+i)
	}
	return out
}

func values(m map[string]ptrace.Traces) []ptrace.Traces {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []ptrace.Traces
	for _, k := range keys {
		out = append(out, m[k])
	}
	return out
}

// assertSameResources fails unless got holds every resource of want exactly
// once, byte for byte, and nothing else.
func assertSameResources(t *testing.T, what string, want, got []ptrace.Traces) {
	t.Helper()
	w, _ := resourcesByService(t, want)
	g, dups := resourcesByService(t, got)
	if len(dups) > 0 {
		t.Errorf("%s: resources received more than once: %v", what, dups)
	}
	for name, b := range w {
		gb, ok := g[name]
		switch {
		case !ok:
			t.Errorf("%s: resource %s missing", what, name)
		case string(gb) != string(b):
			t.Errorf("%s: resource %s differs from what was sent", what, name)
		}
	}
	for name := range g {
		if _, ok := w[name]; !ok {
			t.Errorf("%s: unexpected resource %s", what, name)
		}
	}
}

func (p *predecode) sidecarATraces() ([]ptrace.Traces, error) {
	var all []ptrace.Traces
	for _, d := range p.sidecarA {
		tds, err := sidecarTraces(d)
		if err != nil {
			return nil, err
		}
		all = append(all, tds...)
	}
	return all, nil
}

func waitSpans(t *testing.T, what string, want int, get func() ([]ptrace.Traces, error)) []ptrace.Traces {
	t.Helper()
	var got []ptrace.Traces
	eventually(t, 30*time.Second, func() error {
		var err error
		if got, err = get(); err != nil {
			return err
		}
		if n := spanCount(got); n < want {
			return fmt.Errorf("%s: %d spans, want %d", what, n, want)
		}
		return nil
	})
	return got
}

func (p *predecode) metric(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	v, err := metricSum(p.metricsURL, name, labels...)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestPreDecodeStage runs the pre-decode stage on the built distribution.
func TestPreDecodeStage(t *testing.T) {
	p := startPredecode(t)

	t.Run("divert", func(t *testing.T) {
		batches := batchesFor("d")
		sendAll(t, p.addrs["divert_grpc"], p.addrs["divert_http"], batches)
		sent := values(batches)
		got := waitSpans(t, "sidecars", spanCount(sent), p.sidecarATraces)
		assertSameResources(t, "sidecars", sent, got)
		// Only the JSON request went through the receiver's decoding (and
		// was diverted on the pdata path).
		json := batches["d-json"].SpanCount()
		eventually(t, 10*time.Second, func() error {
			if v := p.metric(t, "otelcol_receiver_accepted_spans", `receiver="otlp/divert"`); v != float64(json) {
				return fmt.Errorf("otlp/divert accepted %v spans, want %d (the JSON request only)", v, json)
			}
			return nil
		})
		if v := p.metric(t, "otelcol_processor_wirecount_items", `otelcol_component_id="wirecount/divert"`); v != float64(spanCount(sent)) {
			t.Errorf("wirecount/divert counted %v items, want %d", v, spanCount(sent))
		}
		if v := p.metric(t, "otelcol_extension_wirestage_requests", `otelcol_component_id="wirestage/divert"`, `outcome="diverted"`); v != 4 {
			t.Errorf("wirestage/divert diverted %v requests, want the 4 protobuf ones", v)
		}
		time.Sleep(time.Second)
		if got := p.sink.traces("/divert/v1/traces"); len(got) > 0 {
			t.Errorf("the divert pipeline exported %d spans; everything was diverted", spanCount(got))
		}
	})

	t.Run("divert_logs_and_metrics", func(t *testing.T) { divertLogsAndMetrics(t, p) })

	t.Run("tee", func(t *testing.T) {
		batches := batchesFor("t")
		sendAll(t, p.addrs["tee_grpc"], p.addrs["tee_http"], batches)
		sendAll(t, p.addrs["plain_grpc"], p.addrs["plain_http"], batches)
		sent := values(batches)
		total := spanCount(sent)
		got := waitSpans(t, "sidecar", total, func() ([]ptrace.Traces, error) { return sidecarTraces(p.sidecarB) })
		assertSameResources(t, "sidecar", sent, got)
		down := waitSpans(t, "downstream", total, func() ([]ptrace.Traces, error) { return p.sink.traces("/tee/v1/traces"), nil })
		assertSameResources(t, "downstream", sent, down)
		if v := p.metric(t, "otelcol_receiver_accepted_spans", `receiver="otlp/tee"`); v != float64(total) {
			t.Errorf("otlp/tee accepted %v spans, want %d", v, total)
		}
		// wirecount at the stage (tee) and on the pdata path (plain) count
		// the same items and bytes for every service.
		waitSpans(t, "plain downstream", total, func() ([]ptrace.Traces, error) { return p.sink.traces("/plain/v1/traces"), nil })
		w, _ := resourcesByService(t, sent)
		for service := range w {
			for _, m := range []string{"otelcol_processor_wirecount_items", "otelcol_processor_wirecount_bytes"} {
				stage := p.metric(t, m, `otelcol_component_id="wirecount/tee"`, `service_name="`+service+`"`)
				pdata := p.metric(t, m, `otelcol_component_id="wirecount/plain"`, `service_name="`+service+`"`)
				if stage != pdata || stage == 0 {
					t.Errorf("%s{service_name=%q}: %v at the stage, %v on the pdata path", m, service, stage, pdata)
				}
			}
		}
	})

	t.Run("stalled_sidecar", func(t *testing.T) {
		p.stalled.Signal(t, syscall.SIGSTOP)
		var succeeded []ptrace.Traces
		var grpcRefused, httpRefused int
		for i := 0; i < 400 && (grpcRefused == 0 || httpRefused == 0); i++ {
			td := batch(fmt.Sprintf("s%d", i), 1, 3)
			if i%2 == 0 {
				err := grpcExport(t, p.addrs["stall_grpc"], td, false)
				switch status.Code(err) {
				case codes.OK:
					succeeded = append(succeeded, td)
				case codes.Unavailable:
					grpcRefused++
				default:
					t.Fatalf("gRPC export: %v, want OK or UNAVAILABLE", err)
				}
				continue
			}
			b, _ := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
			code, retryAfter, err := postOTLP(context.Background(), "http://"+p.addrs["stall_http"]+"/v1/traces", "application/x-protobuf", b, false)
			switch {
			case err != nil:
				t.Fatal(err)
			case code == http.StatusOK:
				succeeded = append(succeeded, td)
			case code == http.StatusServiceUnavailable && retryAfter != "":
				httpRefused++
			default:
				t.Fatalf("HTTP export: status %d Retry-After %q, want 200 or 503 with Retry-After", code, retryAfter)
			}
		}
		if grpcRefused == 0 || httpRefused == 0 {
			t.Fatalf("with the sidecar stopped, %d gRPC and %d HTTP requests were refused; want both refused", grpcRefused, httpRefused)
		}
		t.Logf("sidecar stopped: %d requests accepted, %d gRPC and %d HTTP refused as retryable", len(succeeded), grpcRefused, httpRefused)
		p.stalled.Signal(t, syscall.SIGCONT)
		got := waitSpans(t, "stalled sidecar", spanCount(succeeded), func() ([]ptrace.Traces, error) { return sidecarTraces(p.sidecarC) })
		w, _ := resourcesByService(t, succeeded)
		g, _ := resourcesByService(t, got)
		for name, b := range w {
			if string(g[name]) != string(b) {
				t.Errorf("resource %s was accepted but did not reach the sidecar intact", name)
			}
		}
	})
}

// TestPreDecodeRefusesStageBehindBatch starts the distribution with a
// pipeline in which batch (which detaches the request context) precedes
// sdpshard: the Collector must refuse to start and say what to change.
func TestPreDecodeRefusesStageBehindBatch(t *testing.T) {
	dir := t.TempDir()
	cfg := fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      grpc: {endpoint: "%s", middlewares: [{id: wirestage}]}
processors:
  batch: {}
  sdpshard: {endpoints: ["unix://%s/none.sock"]}
exporters:
  debug: {}
extensions:
  wirestage: {stages: [sdpshard]}
service:
  extensions: [wirestage]
  telemetry: {metrics: {level: none}}
  pipelines:
    traces: {receivers: [otlp], processors: [batch, sdpshard], exporters: [debug]}
`, freePort(t), dir)
	path := filepath.Join(dir, "collector.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, testbin.Path(t, testbin.CollectorEnv), "--config", path).CombinedOutput()
	if err == nil || ctx.Err() != nil {
		t.Fatalf("the Collector did not refuse to start (err %v, ctx %v):\n%s", err, ctx.Err(), testbin.TailLines(string(out), 20))
	}
	for _, want := range []string{"sdpshard comes after batch", "put sdpshard before batch"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the start error does not say %q:\n%s", want, testbin.TailLines(string(out), 20))
		}
	}
}
