// SPDX-License-Identifier: Apache-2.0

package e2ebench

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"

	"github.com/otelcol-sdp/otelcol-sdp/internal/profilestest"
)

// A profiles payload is what a profiler sends: resources named like the
// other signals' (service.name and the rest), each with one scope and one
// profile of ItemsPerResource samples, all referencing one dictionary that
// the resources share; and the same bytes every time.
func TestProfilesPayload(t *testing.T) {
	for _, kind := range PayloadKinds {
		shape := Shape{Resources: 3, ItemsPerResource: 7, Kind: kind}
		p, err := NewPayload("profiles", shape)
		if err != nil {
			t.Fatal(err)
		}
		again, err := NewPayload("profiles", shape)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(p.Bytes, again.Bytes) {
			t.Errorf("%s: two payloads of one shape differ", kind)
		}
		pd, err := profilestest.Unmarshal(p.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		if pd.SampleCount() != 21 || p.Items != 21 || pd.ResourceProfiles().Len() != 3 {
			t.Fatalf("%s: %d samples (payload says %d) in %d resources, want 21 in 3", kind, pd.SampleCount(), p.Items, pd.ResourceProfiles().Len())
		}
		namespace := map[string]string{PayloadSmall: "benchmarks", PayloadSDK: "shop"}[kind]
		dict := pd.Dictionary()
		stacksOf := make([]map[int32]bool, 3)
		for i, rp := range pd.ResourceProfiles().All() {
			attrs := rp.Resource().Attributes()
			name, _ := attrs.Get("service.name")
			ns, _ := attrs.Get("service.namespace")
			_, host := attrs.Get("host.name")
			if name.Str() != "bench-service-"+strconv.Itoa(i) || ns.Str() != namespace || !host {
				t.Errorf("%s: resource %d attributes %v", kind, i, attrs.AsRaw())
			}
			if rp.ScopeProfiles().Len() != 1 || rp.ScopeProfiles().At(0).Profiles().Len() != 1 {
				t.Fatalf("%s: resource %d has %d scopes, want 1 with 1 profile", kind, i, rp.ScopeProfiles().Len())
			}
			samples := rp.ScopeProfiles().At(0).Profiles().At(0).Samples()
			if samples.Len() != 7 {
				t.Errorf("%s: resource %d has %d samples, want 7", kind, i, samples.Len())
			}
			stacksOf[i] = map[int32]bool{}
			for _, s := range samples.All() {
				if s.StackIndex() < 1 || int(s.StackIndex()) >= dict.StackTable().Len() {
					t.Errorf("%s: resource %d: stack %d outside the dictionary's %d", kind, i, s.StackIndex(), dict.StackTable().Len())
				}
				stacksOf[i][s.StackIndex()] = true
			}
			for _, r := range profilestest.ResolvedSamples(dict, rp) {
				if strings.Contains(r, "<bad") {
					t.Errorf("%s: resource %d: sample does not resolve: %s", kind, i, r)
				}
			}
		}
		// One dictionary for the request: the resources' stacks are drawn
		// from overlapping windows of it, so some are shared.
		shared := false
		for s := range stacksOf[0] {
			shared = shared || stacksOf[1][s] || stacksOf[2][s]
		}
		for s := range stacksOf[1] {
			shared = shared || stacksOf[2][s]
		}
		if !shared {
			t.Errorf("%s: no stack shared between resources: %v", kind, stacksOf)
		}
	}
}

// grpcCounter counts the items the pdata OTLP/gRPC servers below decoded,
// by signal: one server per signal, as a Collector's receiver registers
// them.
type grpcCounter struct {
	mu    sync.Mutex
	items map[string]int
}

func (c *grpcCounter) add(signal string, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.items[signal] += n
}

type tracesCounter struct {
	ptraceotlp.UnimplementedGRPCServer
	*grpcCounter
}

func (c *tracesCounter) Export(_ context.Context, req ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	c.add("traces", req.Traces().SpanCount())
	return ptraceotlp.NewExportResponse(), nil
}

type metricsCounter struct {
	pmetricotlp.UnimplementedGRPCServer
	*grpcCounter
}

func (c *metricsCounter) Export(_ context.Context, req pmetricotlp.ExportRequest) (pmetricotlp.ExportResponse, error) {
	c.add("metrics", req.Metrics().DataPointCount())
	return pmetricotlp.NewExportResponse(), nil
}

type logsCounter struct {
	plogotlp.UnimplementedGRPCServer
	*grpcCounter
}

func (c *logsCounter) Export(_ context.Context, req plogotlp.ExportRequest) (plogotlp.ExportResponse, error) {
	c.add("logs", req.Logs().LogRecordCount())
	return plogotlp.NewExportResponse(), nil
}

type profilesCounter struct {
	pprofileotlp.UnimplementedGRPCServer
	*grpcCounter
}

func (c *profilesCounter) Export(_ context.Context, req pprofileotlp.ExportRequest) (pprofileotlp.ExportResponse, error) {
	c.add("profiles", req.Profiles().SampleCount())
	return pprofileotlp.NewExportResponse(), nil
}

// The load generator's gRPC requests are what pdata's OTLP servers (those
// the Collector's receiver registers) accept: each signal's method, and a
// payload that decodes to the items it claims, profiles included.
func TestLoadGRPCIntoPdataServers(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	c := &grpcCounter{items: map[string]int{}}
	ptraceotlp.RegisterGRPCServer(srv, &tracesCounter{grpcCounter: c})
	pmetricotlp.RegisterGRPCServer(srv, &metricsCounter{grpcCounter: c})
	plogotlp.RegisterGRPCServer(srv, &logsCounter{grpcCounter: c})
	pprofileotlp.RegisterGRPCServer(srv, &profilesCounter{grpcCounter: c})
	go srv.Serve(lis)
	defer srv.Stop()
	for _, signal := range Signals {
		for _, kind := range PayloadKinds {
			p, err := NewPayload(signal, Shape{Resources: 4, ItemsPerResource: 3, Kind: kind})
			if err != nil {
				t.Fatal(err)
			}
			res, err := Load{Protocol: "grpc", Endpoint: lis.Addr().String(), Payload: p, Clients: 2, Requests: 5}.Run(context.Background())
			if err != nil {
				t.Fatalf("%s %s: %v", signal, kind, err)
			}
			if res.Items != 60 {
				t.Errorf("%s %s: sent %d items, want 60", signal, kind, res.Items)
			}
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, signal := range Signals {
		if c.items[signal] != 2*60 {
			t.Errorf("%s: the pdata server decoded %d items, want %d", signal, c.items[signal], 2*60)
		}
	}
}

// Over HTTP, each signal goes to the path an OTLP/HTTP receiver serves it
// on, as protobuf, with the payload's bytes as they are.
func TestLoadHTTPPaths(t *testing.T) {
	want := map[string]string{
		"traces":   "/v1/traces",
		"metrics":  "/v1/metrics",
		"logs":     "/v1/logs",
		"profiles": "/v1development/profiles",
	}
	var (
		mu     sync.Mutex
		bodies = map[string][]byte{}
		bad    atomic.Int64
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-protobuf" {
			bad.Add(1)
		}
		mu.Lock()
		bodies[r.URL.Path] = b
		mu.Unlock()
	}))
	defer srv.Close()
	for _, signal := range Signals {
		p, err := NewPayload(signal, Shape{Resources: 2, ItemsPerResource: 3})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := (Load{Protocol: "http", Endpoint: strings.TrimPrefix(srv.URL, "http://"), Payload: p, Clients: 1, Requests: 2}).Run(context.Background()); err != nil {
			t.Fatalf("%s: %v", signal, err)
		}
		mu.Lock()
		got, ok := bodies[want[signal]]
		mu.Unlock()
		if !ok || !bytes.Equal(got, p.Bytes) {
			t.Errorf("%s: nothing or another body on %s (paths seen: %d)", signal, want[signal], len(bodies))
		}
	}
	if len(bodies) != len(want) || bad.Load() != 0 {
		t.Errorf("%d paths seen, want %d; %d requests not protobuf POSTs", len(bodies), len(want), bad.Load())
	}
}
