// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/otelcol-sdp/otelcol-sdp/internal/profilestest"
	"github.com/otelcol-sdp/otelcol-sdp/test/testbin"
)

// profilesGate turns on the Collector's profiles pipelines.
const profilesGate = "--feature-gates=service.profilesSupport"

// The gateway meters profiles per tenant on the wire, tees them to a
// forward-mode sidecar that passes them to a second Collector (each frame
// with the whole dictionary), and diverts them to two file-mode sidecars
// (each frame with the dictionary pruned to its resource).
const profilesGatewayConfig = `
receivers:
  otlp:
    protocols:
      grpc: {endpoint: "{{grpc}}", middlewares: [{id: wirestage}]}
      http: {endpoint: "{{http}}", middlewares: [{id: wirestage}]}
processors:
  wirecount/tenants: {group_by: [tenant]}
  sdpshard/forward: {endpoints: ["{{forward}}"], mode: tee}
  sdpshard/files: {endpoints: ["{{file0}}", "{{file1}}"], mode: divert, routing_key: service, profiles_dictionary: pruned}
exporters:
  debug: {}
extensions:
  health_check: {endpoint: "{{health}}"}
  wirestage:
    stages: [wirecount/tenants, sdpshard/forward, sdpshard/files]
    divert_all_pipelines: true
service:
  extensions: [health_check, wirestage]
  telemetry:
    metrics:
      level: detailed
      readers:
        - pull: {exporter: {prometheus: {host: "127.0.0.1", port: {{metrics_port}}}}}
  pipelines:
    profiles: {receivers: [otlp], processors: [wirecount/tenants, sdpshard/forward, sdpshard/files], exporters: [debug]}
`

// The second Collector decodes what the forward-mode sidecar passes on
// (no wire stage: pdata all the way) and counts the samples per service.
const profilesDownstreamConfig = `
receivers:
  otlp:
    protocols:
      grpc: {endpoint: "{{grpc}}"}
processors:
  wirecount/received: {group_by: [service.name]}
exporters:
  debug: {}
extensions:
  health_check: {endpoint: "{{health}}"}
service:
  extensions: [health_check]
  telemetry:
    metrics:
      readers:
        - pull: {exporter: {prometheus: {host: "127.0.0.1", port: {{metrics_port}}}}}
  pipelines:
    profiles: {receivers: [otlp], processors: [wirecount/received], exporters: [debug]}
`

// profilesRequest is a request of n resources of service prefix-i and
// tenant t-(i%2) sharing one dictionary.
func profilesRequest(seed uint64, prefix string, n int) pprofile.Profiles {
	return profilestest.Generate(seed, profilestest.Shape{
		Resources: n, Scopes: 1, Profiles: 2, Samples: 30,
		Functions: 50, Locations: 100, Stacks: 60, Depth: 16,
		Resource: func(_ *rand.Rand, i int, res pcommon.Resource) {
			res.Attributes().PutStr("service.name", fmt.Sprintf("%s-%d", prefix, i))
			res.Attributes().PutStr("tenant", fmt.Sprintf("t-%d", i%2))
		},
	})
}

func TestProfilesAreCountedDivertedAndForwarded(t *testing.T) {
	dir := t.TempDir()
	downstream := startCollectorFrom(t, dir, "downstream", profilesDownstreamConfig, nil, []string{profilesGate}, "grpc")
	forwardSock := "unix://" + filepath.Join(dir, "forward.sock")
	startProc(t, dir, "sidecar-forward", testbin.Path(t, testbin.SidecarEnv),
		"-listen", forwardSock, "-mode", "forward", "-forward-endpoint", downstream.addrs["grpc"])
	eventually(t, 15*time.Second, func() error {
		c, err := net.Dial("unix", strings.TrimPrefix(forwardSock, "unix://"))
		if err == nil {
			c.Close()
		}
		return err
	})
	vars := map[string]string{"forward": forwardSock}
	var fileDirs, statsFiles []string
	for i := range 2 {
		socket := filepath.Join(dir, fmt.Sprintf("file%d.sock", i))
		out := filepath.Join(dir, fmt.Sprintf("file%d", i))
		stats := filepath.Join(dir, fmt.Sprintf("file%d.json", i))
		if err := os.MkdirAll(out, 0o755); err != nil {
			t.Fatal(err)
		}
		startProc(t, dir, fmt.Sprintf("sidecar-file%d", i), testbin.Path(t, testbin.SidecarEnv),
			"-listen", "unix://"+socket, "-mode", "file", "-dir", out, "-stats-file", stats, "-stats-interval", "100ms")
		eventually(t, 15*time.Second, func() error {
			c, err := net.Dial("unix", socket)
			if err == nil {
				c.Close()
			}
			return err
		})
		vars[fmt.Sprintf("file%d", i)] = "unix://" + socket
		fileDirs, statsFiles = append(fileDirs, out), append(statsFiles, stats)
	}
	gw := startCollectorFrom(t, dir, "gateway", profilesGatewayConfig, vars, []string{profilesGate}, "grpc", "http")

	// Two requests over gRPC (pdata's profiles client) and two over HTTP.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := grpc.NewClient(gw.addrs["grpc"], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var sent []pprofile.Profiles
	for i := range 4 {
		pd := profilesRequest(uint64(i), fmt.Sprintf("r%d", i), 4)
		body := profilestest.Marshal(pd)
		// Read back: marshalling moved attribute strings into the dictionary.
		readBack, err := profilestest.Unmarshal(body)
		if err != nil {
			t.Fatal(err)
		}
		sent = append(sent, readBack)
		if i%2 == 0 {
			req := pprofileotlp.NewExportRequest()
			if err := req.UnmarshalProto(body); err != nil {
				t.Fatal(err)
			}
			if _, err := pprofileotlp.NewGRPCClient(conn).Export(ctx, req); err != nil {
				t.Fatalf("gRPC export: %v", err)
			}
			continue
		}
		code, _, err := postOTLP(ctx, "http://"+gw.addrs["http"]+"/v1development/profiles", "application/x-protobuf", body, false)
		if err != nil || code != http.StatusOK {
			t.Fatalf("HTTP export: %d %v", code, err)
		}
	}
	want := map[string][]string{} // service -> resolved samples
	tenants := map[string]int{}
	total := 0
	for _, pd := range sent {
		for _, rp := range pd.ResourceProfiles().All() {
			svc, _ := rp.Resource().Attributes().Get("service.name")
			tenant, _ := rp.Resource().Attributes().Get("tenant")
			samples := profilestest.ResolvedSamples(pd.Dictionary(), rp)
			want[svc.Str()] = samples
			tenants[tenant.Str()] += len(samples)
			total += len(samples)
		}
	}

	// Counted per tenant on the wire, before any decoding.
	for tenant, n := range tenants {
		got, err := metricSum(gw.metricsURL, "otelcol_processor_wirecount_items", `otelcol_signal="profiles"`, `tenant="`+tenant+`"`)
		if err != nil || got != float64(n) {
			t.Errorf("wirecount items of tenant %s: %v (%v), want %d", tenant, got, err, n)
		}
	}
	if v, err := metricSum(gw.metricsURL, "otelcol_extension_wirestage_diverted_items", `otelcol_signal="profiles"`); err != nil || v != float64(total) {
		t.Errorf("wirestage diverted %v profiles samples (%v), want all %d: the receiver decoded some", v, err, total)
	}

	// Diverted to the file-mode sidecars: one record per resource, each a
	// request of its own whose samples resolve through its dictionary as
	// in the request sent.
	eventually(t, 30*time.Second, func() error {
		recs, err := sidecarRecords(fileDirs, "profiles")
		if err != nil {
			return err
		}
		if len(recs) < len(want) {
			return fmt.Errorf("%d profiles records, want %d", len(recs), len(want))
		}
		got := map[string][]string{}
		for _, r := range recs {
			pd, err := profilestest.Unmarshal(r)
			if err != nil {
				return fmt.Errorf("a stored record does not unmarshal in pprofile: %w", err)
			}
			if pd.ResourceProfiles().Len() != 1 {
				return fmt.Errorf("a record holds %d resources", pd.ResourceProfiles().Len())
			}
			rp := pd.ResourceProfiles().At(0)
			svc, _ := rp.Resource().Attributes().Get("service.name")
			if _, dup := got[svc.Str()]; dup {
				return fmt.Errorf("resource %s stored twice", svc.Str())
			}
			got[svc.Str()] = profilestest.ResolvedSamples(pd.Dictionary(), rp)
		}
		for svc, samples := range want {
			if !slices.Equal(got[svc], samples) {
				return fmt.Errorf("resource %s: %d resolved samples stored unlike the %d sent", svc, len(got[svc]), len(samples))
			}
		}
		return nil
	})
	// Every frame the sidecars accepted was of signal 4.
	eventually(t, 10*time.Second, func() error {
		frames := 0
		for _, f := range statsFiles {
			s, err := readSidecarStats(f)
			if err != nil {
				return err
			}
			for name, c := range s.Totals {
				if name != "profiles" && name != "all" && c.Frames != 0 {
					return fmt.Errorf("%s: %d frames of %s", f, c.Frames, name)
				}
			}
			frames += int(s.Totals["profiles"].Frames)
		}
		if frames != len(want) {
			return fmt.Errorf("sidecars accepted %d profiles frames, want %d", frames, len(want))
		}
		return nil
	})

	// Teed to the forward-mode sidecar, which passed them to a Collector
	// that decoded and counted every sample.
	eventually(t, 30*time.Second, func() error {
		got, err := metricSum(downstream.metricsURL, "otelcol_processor_wirecount_items", `otelcol_signal="profiles"`)
		if err != nil {
			return err
		}
		if got != float64(total) {
			return fmt.Errorf("the downstream Collector counted %v samples, want %d", got, total)
		}
		return nil
	})
}
