package e2ebench

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestPayloads(t *testing.T) {
	for _, signal := range Signals {
		p, err := NewPayload(signal, Shape{Resources: 3, ItemsPerResource: 7})
		if err != nil {
			t.Fatal(err)
		}
		if p.Items != 21 || len(p.Bytes) == 0 {
			t.Errorf("%s: %d items, %d bytes", signal, p.Items, len(p.Bytes))
		}
	}
	if _, err := NewPayload("profiles", Shape{1, 1}); err == nil {
		t.Error("unknown signal: no error")
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
