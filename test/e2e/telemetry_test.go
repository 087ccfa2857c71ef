// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/otelcol-sdp/otelcol-sdp/internal/demo"
	"github.com/otelcol-sdp/otelcol-sdp/test/testbin"
)

// telemetryConfig runs wirecount and sdpshard in a traces and a logs
// pipeline behind a wirestage extension; sdpshard's only sidecar never
// comes up, so the shard set it shares across the pipelines logs
// connection failures.
const telemetryConfig = `
receivers:
  otlp:
    protocols:
      http: {endpoint: "{{otlp_http}}", middlewares: [{id: wirestage}]}
processors:
  wirecount: {group_by: [service.name]}
  sdpshard: {endpoints: ["{{sidecar}}"], wait_for_ack: false}
exporters:
  debug: {}
extensions:
  health_check: {endpoint: "{{health}}"}
  wirestage: {stages: [wirecount, sdpshard]}
service:
  extensions: [health_check, wirestage]
  telemetry:
    logs: {encoding: json}
    metrics:
      readers:
        - pull: {exporter: {prometheus: {host: "127.0.0.1", port: {{metrics_port}}, without_scope_info: {{without_scope_info}}}}}
  pipelines:
    traces: {receivers: [otlp], processors: [wirecount, sdpshard], exporters: [debug]}
    logs/other: {receivers: [otlp], processors: [wirecount, sdpshard], exporters: [debug]}
`

// TestTelemetryConventions checks, on the built distribution, with and
// without the Collector's telemetry.newPipelineTelemetry feature gate, that
// the components' metrics carry none of the attributes they used to add by
// hand, that the shard set shared by two pipelines names no pipeline in its
// series or log lines, and that its log lines hold each field once.
func TestTelemetryConventions(t *testing.T) {
	for _, gate := range []bool{false, true} {
		t.Run(fmt.Sprintf("gate=%v", gate), func(t *testing.T) {
			dir := t.TempDir()
			vars := map[string]string{
				"otlp_http": freePort(t),
				"health":    freePort(t),
				"sidecar":   "unix://" + filepath.Join(dir, "nobody.sock"),
			}
			metrics := freePort(t)
			vars["metrics_port"] = metrics[strings.LastIndexByte(metrics, ':')+1:]
			// The gate puts the component attributes in the scope, which
			// the Collector's Prometheus reader drops by default
			// (without_scope_info: true); its own pipeline metrics then
			// collide and every scrape fails (v0.165.0).
			vars["without_scope_info"] = fmt.Sprint(!gate)
			cfg := telemetryConfig
			for k, v := range vars {
				cfg = strings.ReplaceAll(cfg, "{{"+k+"}}", v)
			}
			path := filepath.Join(dir, "collector.yaml")
			if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"--config", path}
			if gate {
				args = append(args, "--feature-gates=telemetry.newPipelineTelemetry")
			}
			proc := startProc(t, dir, "collector", testbin.Path(t, testbin.CollectorEnv), args...)
			eventually(t, 60*time.Second, func() error { return demo.CheckHealth("http://" + vars["health"] + "/") })

			body, err := ptraceotlp.NewExportRequestFromTraces(batch("tel", 2, 3)).MarshalProto()
			if err != nil {
				t.Fatal(err)
			}
			code, _, err := postOTLP(context.Background(), "http://"+vars["otlp_http"]+"/v1/traces", "application/x-protobuf", body, false)
			if err != nil || code != http.StatusOK {
				t.Fatalf("export: HTTP %d, %v", code, err)
			}

			// Metrics: the series of each component, as Prometheus shows
			// them (scope attributes become otel_scope_* labels).
			var lines map[string][]string
			eventually(t, 20*time.Second, func() error {
				var err error
				if lines, err = scrapeOurs(metrics); err != nil {
					return err
				}
				if len(lines["otelcol_processor_wirecount_items"]) == 0 || len(lines["otelcol_processor_sdpshard_connection_failures"]) == 0 ||
					len(lines["otelcol_extension_wirestage_requests"]) == 0 {
					return fmt.Errorf("series missing: %v", lines)
				}
				return nil
			})
			id := `otelcol_component_id="%s"`
			if gate {
				id = `otel_scope_otelcol_component_id="%s"`
			}
			for name, ls := range lines {
				for _, l := range ls {
					for _, bad := range []string{`processor="`, `extension="`, `otel_signal="`, `otelcol_pipeline_id="`} {
						if strings.Contains(l, bad) {
							t.Errorf("%s carries %s...: %s", name, bad, l)
						}
					}
					component := strings.Split(strings.TrimPrefix(name, "otelcol_"), "_")[1]
					if !strings.Contains(l, fmt.Sprintf(id, component)) {
						t.Errorf("%s does not name its component with %s: %s", name, fmt.Sprintf(id, component), l)
					}
					if component == "sdpshard" && strings.Contains(l, `otelcol_signal="`) {
						t.Errorf("the shared shard set's series names a signal: %s", l)
					}
					if component != "sdpshard" && !strings.Contains(l, `otelcol_signal="traces"`) {
						t.Errorf("%s lacks the request's signal: %s", name, l)
					}
				}
			}

			// Logs: the shard set's lines about the missing sidecar.
			var entries []map[string]int
			var fields []map[string]any
			eventually(t, 20*time.Second, func() error {
				entries, fields = nil, nil
				sc := bufio.NewScanner(strings.NewReader(proc.Log()))
				sc.Buffer(make([]byte, 1<<20), 1<<20)
				for sc.Scan() {
					line := sc.Bytes()
					if !bytes.Contains(line, []byte("Sidecar unreachable")) && !bytes.Contains(line, []byte("Cannot connect to sidecar")) {
						continue
					}
					counts, err := jsonKeyCounts(line)
					if err != nil {
						return fmt.Errorf("%s: %w", line, err)
					}
					var m map[string]any
					if err := json.Unmarshal(line, &m); err != nil {
						return err
					}
					entries, fields = append(entries, counts), append(fields, m)
				}
				if len(entries) < 2 {
					return fmt.Errorf("%d log lines about the unreachable sidecar, want both warnings", len(entries))
				}
				return nil
			})
			for i, counts := range entries {
				for key, n := range counts {
					if n != 1 {
						t.Errorf("field %s appears %d times: %v", key, n, fields[i])
					}
				}
				for _, key := range []string{"otelcol.pipeline.id", "otelcol.signal"} {
					if _, ok := counts[key]; ok {
						t.Errorf("the shared shard set logs %s: %v", key, fields[i])
					}
				}
				if fields[i]["otelcol.component.id"] != "sdpshard" || counts["shard"] != 1 || counts["endpoint"] != 1 {
					t.Errorf("want otelcol.component.id sdpshard, shard and endpoint: %v", fields[i])
				}
			}
		})
	}
}

// scrapeOurs returns the Prometheus lines of the wirecount, sdpshard and
// wirestage metrics at addr, by metric name.
func scrapeOurs(addr string) (map[string][]string, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "#") {
			continue
		}
		for _, prefix := range []string{"otelcol_processor_wirecount_", "otelcol_processor_sdpshard_", "otelcol_extension_wirestage_"} {
			if strings.HasPrefix(line, prefix) {
				name := line[:strings.IndexAny(line, "{ ")]
				out[name] = append(out[name], line)
			}
		}
	}
	return out, nil
}

// jsonKeyCounts counts the top-level keys of one JSON object, duplicates
// included (which decoding into a map would hide).
func jsonKeyCounts(line []byte) (map[string]int, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	counts := map[string]int{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		counts[tok.(string)]++
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return counts, nil
}
