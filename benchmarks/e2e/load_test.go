// SPDX-License-Identifier: Apache-2.0

package e2ebench

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestPayloads(t *testing.T) {
	for _, signal := range Signals {
		small, err := NewPayload(signal, Shape{Resources: 3, ItemsPerResource: 7})
		if err != nil {
			t.Fatal(err)
		}
		sdk, err := NewPayload(signal, Shape{Resources: 3, ItemsPerResource: 7, Kind: PayloadSDK})
		if err != nil {
			t.Fatal(err)
		}
		if small.Items != 21 || sdk.Items != 21 || len(small.Bytes) == 0 {
			t.Errorf("%s: %d and %d items, %d bytes", signal, small.Items, sdk.Items, len(small.Bytes))
		}
		// The SDK-shaped items are the realistic, bigger ones: hundreds of
		// bytes an item where the small ones are a few dozen to 200. A
		// sample is small either way (its stack is an index into the
		// shared dictionary): sdk profiles differ by their resources and
		// deeper stacks, and are only bigger.
		perItem := len(sdk.Bytes) / sdk.Items
		switch {
		case signal == "profiles":
			if len(sdk.Bytes) <= len(small.Bytes) {
				t.Errorf("%s: sdk payload %d bytes vs small %d bytes", signal, len(sdk.Bytes), len(small.Bytes))
			}
		case perItem < 300 || len(sdk.Bytes) < 2*len(small.Bytes):
			t.Errorf("%s: sdk payload %d B/item (%d bytes) vs small %d bytes", signal, perItem, len(sdk.Bytes), len(small.Bytes))
		}
		t.Logf("%s: small %d B/item, sdk %d B/item", signal, len(small.Bytes)/small.Items, perItem)
	}
	if _, err := NewPayload("events", Shape{Resources: 1, ItemsPerResource: 1}); err == nil {
		t.Error("unknown signal: no error")
	}
	if _, err := NewPayload("traces", Shape{Resources: 1, ItemsPerResource: 1, Kind: "huge"}); err == nil {
		t.Error("unknown payload kind: no error")
	}
}

// The floor server counts every item the load generator sends, over both
// protocols, compressed or not, and writes what it counted to its stats
// file, and serves its profiles; it stops when its context ends.
func TestLoadIntoFloor(t *testing.T) {
	ports, err := freePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	cfg := FloorConfig{
		GRPCEndpoint:  "127.0.0.1:" + strconv.Itoa(ports[0]),
		HTTPEndpoint:  "127.0.0.1:" + strconv.Itoa(ports[1]),
		StatsFile:     filepath.Join(t.TempDir(), "floor.json"),
		StatsInterval: 10 * time.Millisecond,
		PprofEndpoint: "127.0.0.1:" + strconv.Itoa(ports[2]),
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- ServeFloor(ctx, cfg) }()
	for _, ep := range []string{cfg.GRPCEndpoint, cfg.HTTPEndpoint} {
		deadline := time.Now().Add(10 * time.Second)
		for {
			c, err := net.Dial("tcp", ep)
			if err == nil {
				c.Close()
				break
			}
			if time.Now().After(deadline) {
				t.Fatal(err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	want := map[string]int64{}
	for _, signal := range Signals {
		p, err := NewPayload(signal, Shape{Resources: 2, ItemsPerResource: 5, Kind: PayloadSDK})
		if err != nil {
			t.Fatal(err)
		}
		for _, proto := range Protocols {
			for _, compression := range []string{"", "gzip"} {
				ep := cfg.GRPCEndpoint
				if proto == "http" {
					ep = cfg.HTTPEndpoint
				}
				res, err := Load{Protocol: proto, Endpoint: ep, Payload: p, Clients: 2, Requests: 7, Compression: compression}.Run(context.Background())
				if err != nil {
					t.Fatalf("%s %s %q: %v", signal, proto, compression, err)
				}
				want[signal] += res.Items
				if res.Latency.P50 <= 0 || res.Latency.P99 < res.Latency.P50 || res.Latency.P99 > res.Elapsed {
					t.Errorf("%s %s %q: latency p50 %v, p99 %v over a run of %v", signal, proto, compression, res.Latency.P50, res.Latency.P99, res.Elapsed)
				}
			}
		}
	}
	profiles := t.TempDir()
	cpu, heap := filepath.Join(profiles, "cpu.pprof"), filepath.Join(profiles, "heap.pprof")
	if err := fetchProfile(context.Background(), cfg.PprofEndpoint, 0, 1, cpu, heap); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{cpu, heap} {
		// A profile is a gzip-compressed protocol buffer.
		if b, err := os.ReadFile(path); err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
			t.Errorf("%s: not a profile (%d bytes, %v)", filepath.Base(path), len(b), err)
		}
	}
	cancel()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	got, err := ReadFloorStats(cfg.StatsFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, signal := range Signals {
		if want[signal] != 2*2*7*10 || got.Items[signal] != want[signal] {
			t.Errorf("%s: floor counted %d, sent %d", signal, got.Items[signal], want[signal])
		}
	}
	if got.Errors != 0 {
		t.Errorf("floor errors: %d", got.Errors)
	}
	if _, err := (Load{Protocol: "grpc", Endpoint: cfg.GRPCEndpoint, Clients: 1, Compression: "zstd"}).newSender(); err == nil {
		t.Error("unknown compression: no error")
	}
}

// The load generator's gRPC clients against the sink, which is an OTLP/gRPC
// server: every item sent is counted once, for the right signal.
func TestLoadGRPCIntoSink(t *testing.T) {
	sink, err := NewSink()
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Stop()
	for _, signal := range Signals {
		p, err := NewPayload(signal, Shape{Resources: 2, ItemsPerResource: 5})
		if err != nil {
			t.Fatal(err)
		}
		res, err := Load{Protocol: "grpc", Endpoint: sink.Endpoint(), Payload: p, Clients: 3, Requests: 31}.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if res.Requests != 31 || res.Items != 310 || sink.Items(signal) != 310 {
			t.Errorf("%s: sent %d requests, %d items; sink has %d", signal, res.Requests, res.Items, sink.Items(signal))
		}
	}
	if sink.Errors() != 0 {
		t.Errorf("sink errors: %d", sink.Errors())
	}
}

// Over HTTP, 503 is retried, any other failure stops the load with an error,
// and the request is what an OTLP/HTTP receiver expects.
func TestLoadHTTP(t *testing.T) {
	p, err := NewPayload("logs", Shape{Resources: 1, ItemsPerResource: 4})
	if err != nil {
		t.Fatal(err)
	}
	var calls, bad atomic.Int64
	var refuse atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if refuse.Load() {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		b, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/v1/logs" || r.Header.Get("Content-Type") != "application/x-protobuf" || string(b) != string(p.Bytes) {
			bad.Add(1)
		}
		if calls.Add(1)%3 == 0 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	endpoint := strings.TrimPrefix(srv.URL, "http://")
	res, err := Load{Protocol: "http", Endpoint: endpoint, Payload: p, Clients: 2, Requests: 20}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 20 || res.Items != 80 || res.Retries == 0 || bad.Load() != 0 {
		t.Errorf("result %+v, %d malformed requests", res, bad.Load())
	}

	refuse.Store(true)
	_, err = Load{Protocol: "http", Endpoint: endpoint, Payload: p, Clients: 2, Duration: time.Minute}.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "400") {
		t.Errorf("400 answers: %v", err)
	}
}
