// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// grpcMemConfig is the pre-decode gateway behind contrib's bearer token
// authenticator, with pprof to force a garbage collection.
const grpcMemConfig = `
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: "{{grpc}}"
        auth: {authenticator: bearertokenauth}
        middlewares: [{id: wirestage}]
processors:
  wirecount: {group_by: [service.name]}
  sdpshard: {endpoints: ["{{sidecar}}"], mode: divert}
exporters:
  debug: {}
extensions:
  health_check: {endpoint: "{{health}}"}
  pprof: {endpoint: "{{pprof}}"}
  bearertokenauth: {token: "letmein"}
  wirestage:
    stages: [wirecount, sdpshard]
    divert_all_pipelines: true
service:
  extensions: [health_check, pprof, bearertokenauth, wirestage]
  telemetry:
    metrics:
      level: detailed
      readers:
        - pull: {exporter: {prometheus: {host: "127.0.0.1", port: {{metrics_port}}}}}
  pipelines:
    traces: {receivers: [otlp], processors: [wirecount, sdpshard], exporters: [debug]}
`

const (
	grpcMemRPCs    = 2000
	grpcMemWorkers = 8
	// grpcMemSlack is how far the heap may stay above where it started.
	grpcMemSlack = 20 << 20
)

// rawBytes is a message a rawBytesCodec sends as it is.
type rawBytes []byte

type rawBytesCodec struct{}

func (rawBytesCodec) Name() string { return "proto" }

func (rawBytesCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(v.(rawBytes))}, nil
}

func (rawBytesCodec) Unmarshal(data mem.BufferSlice, v any) error {
	*v.(*rawBytes) = data.Materialize()
	return nil
}

const exportTraces = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"

// exportTwice sends two messages on one Export RPC, which is unary.
func exportTwice(ctx context.Context, conn *grpc.ClientConn, body []byte) error {
	cs, err := conn.NewStream(ctx, &grpc.StreamDesc{StreamName: "Export", ClientStreams: true}, exportTraces, grpc.ForceCodecV2(rawBytesCodec{}))
	if err != nil {
		return err
	}
	for range 2 {
		if err := cs.SendMsg(rawBytes(body)); err != nil {
			break // the server answered already; RecvMsg reports it
		}
	}
	_ = cs.CloseSend()
	return cs.RecvMsg(new(rawBytes))
}

// heapAfterGC forces two collections (the second empties what sync.Pools
// kept through the first) and reads the Collector's heap from its own
// metrics, which it refreshes at most once a second.
func heapAfterGC(t *testing.T, pprofURL, metricsURL string) float64 {
	t.Helper()
	for range 2 {
		resp, err := http.Get(pprofURL + "/debug/pprof/heap?gc=1")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	time.Sleep(1100 * time.Millisecond)
	heap, err := metricSum(metricsURL, "otelcol_process_runtime_heap_alloc_bytes")
	if err != nil {
		t.Fatal(err)
	}
	if heap == 0 {
		t.Fatal("otelcol_process_runtime_heap_alloc_bytes not found")
	}
	return heap
}

// TestPreDecodeGRPCMemoryReturns sends 2,000 Export RPCs of two messages
// each and 2,000 refused by the authenticator, every one carrying a 48 KiB
// request the wirestage codec keeps: the Collector's heap comes back to
// within 20 MB of where it started, and the hand-off holds nothing. (A
// hand-off miss cannot be forced in the release binary; the component test
// TestGRPCHandoffMissFailsClosed shows it is answered UNAVAILABLE.)
func TestPreDecodeGRPCMemoryReturns(t *testing.T) {
	dir := t.TempDir()
	sidecar, _, _ := startSidecar(t, dir, "sidecar")
	c := startCollectorFrom(t, dir, "collector", grpcMemConfig, map[string]string{"sidecar": sidecar}, nil, "grpc", "pprof")
	vars, metricsURL := c.addrs, c.metricsURL
	pprofURL := "http://" + vars["pprof"]

	conn, err := grpc.NewClient(vars["grpc"], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body, err := ptraceotlp.NewExportRequestFromTraces(batch("mem", 8, 70)).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("request: %d bytes", len(body))
	good := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer letmein")
	bad := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer wrong")

	// Warm up: the same requests, accepted, so that pools and caches
	// reach their working size before the first reading.
	for range 50 {
		if err := conn.Invoke(good, exportTraces, rawBytes(body), new(rawBytes), grpc.ForceCodecV2(rawBytesCodec{})); err != nil {
			t.Fatalf("warm-up export: %v", err)
		}
	}
	before := heapAfterGC(t, pprofURL, metricsURL)

	var mu sync.Mutex
	got := map[string]int{}
	run := func(what string, call func() error, want codes.Code) {
		var wg sync.WaitGroup
		next := make(chan struct{})
		for range grpcMemWorkers {
			wg.Go(func() {
				for range next {
					err := call()
					mu.Lock()
					got[fmt.Sprintf("%s: %s", what, status.Code(err))]++
					mu.Unlock()
				}
			})
		}
		for range grpcMemRPCs {
			next <- struct{}{}
		}
		close(next)
		wg.Wait()
		if n := got[fmt.Sprintf("%s: %s", what, want)]; n != grpcMemRPCs {
			t.Errorf("%s: %d of %d answered %s; all answers: %v", what, n, grpcMemRPCs, want, got)
		}
	}
	run("two messages", func() error { return exportTwice(good, conn, body) }, codes.Internal)
	run("bad token", func() error {
		return conn.Invoke(bad, exportTraces, rawBytes(body), new(rawBytes), grpc.ForceCodecV2(rawBytesCodec{}))
	}, codes.Unauthenticated)

	after := heapAfterGC(t, pprofURL, metricsURL)
	t.Logf("heap before %.1f MB, after %.1f MB; %d RPCs carried %.0f MB of requests the codec kept",
		before/1e6, after/1e6, 2*grpcMemRPCs, float64(3*grpcMemRPCs*len(body))/1e6)
	if after-before > grpcMemSlack {
		t.Errorf("heap grew by %.1f MB (> %d MB)", (after-before)/1e6, grpcMemSlack>>20)
	}
	eventually(t, 10*time.Second, func() error {
		held, err := metricSum(metricsURL, "otelcol_extension_wirestage_grpc_held_bytes")
		if err != nil {
			return err
		}
		if held != 0 {
			return fmt.Errorf("the gRPC hand-off holds %.0f bytes", held)
		}
		return nil
	})
	if misses, err := metricSum(metricsURL, "otelcol_extension_wirestage_grpc_handoff_misses"); err != nil || misses != 0 {
		t.Errorf("hand-off misses: %v (%v)", misses, err)
	}
	// The accepted warm-up requests still work after the flood.
	if err := conn.Invoke(good, exportTraces, rawBytes(body), new(rawBytes), grpc.ForceCodecV2(rawBytesCodec{})); err != nil {
		t.Errorf("export after the flood: %v", err)
	}
}
