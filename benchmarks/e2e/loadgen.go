// SPDX-License-Identifier: Apache-2.0

package e2ebench

import (
	"bytes"
	stdgzip "compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding/gzip"
	"google.golang.org/grpc/status"

	"github.com/otelcol-sdp/otelcol-sdp/internal/sidecar"
)

// grpcServices names each signal's OTLP/gRPC export service, whose one
// method is Export. The profiles service is the development version the
// pinned Collector serves.
var grpcServices = map[string]string{
	"traces":   "opentelemetry.proto.collector.trace.v1.TraceService",
	"metrics":  "opentelemetry.proto.collector.metrics.v1.MetricsService",
	"logs":     "opentelemetry.proto.collector.logs.v1.LogsService",
	"profiles": "opentelemetry.proto.collector.profiles.v1development.ProfilesService",
}

// grpcMethod is the full method name a client calls to export signal.
func grpcMethod(signal string) string { return "/" + grpcServices[signal] + "/Export" }

// httpPaths is each signal's OTLP/HTTP path.
var httpPaths = map[string]string{
	"traces":   "/v1/traces",
	"metrics":  "/v1/metrics",
	"logs":     "/v1/logs",
	"profiles": "/v1development/profiles",
}

// maxAttempts bounds the retries of one request answered with a retryable
// status (gRPC UNAVAILABLE or RESOURCE_EXHAUSTED, HTTP 429 or 503).
const maxAttempts = 100

// Load describes one run of the load generator.
type Load struct {
	Protocol string // grpc or http
	Endpoint string // host:port of the Collector's receiver for Protocol
	Payload  Payload
	Clients  int // concurrent clients, each with its own connection
	// Compression of every request: "" (none) or "gzip". gRPC clients
	// compress each message; HTTP clients send a body compressed once.
	Compression string
	// Requests to send; when Duration is set, clients instead send until it
	// has passed (Requests is then ignored).
	Requests int
	Duration time.Duration
}

// LoadResult is what the clients sent and were told succeeded.
type LoadResult struct {
	Requests int64
	Items    int64
	Retries  int64
	Elapsed  time.Duration
	// Latency is the spread of the requests' latencies: from a request's
	// first attempt until it was answered with success, retries and their
	// waits included, as a client that retries sees it.
	Latency Latency
}

// Latency is the 50th and 99th percentile of request latencies.
type Latency struct {
	P50, P99 time.Duration
}

// latencyOf returns the percentiles of ds (sorted in place); zero when
// empty. A percentile is the smallest latency at least that share of the
// requests did not exceed (nearest rank).
func latencyOf(ds []time.Duration) Latency {
	if len(ds) == 0 {
		return Latency{}
	}
	slices.Sort(ds)
	rank := func(p int) time.Duration { return ds[(len(ds)*p+99)/100-1] }
	return Latency{P50: rank(50), P99: rank(99)}
}

// sender sends one request and reports whether a failure may be retried.
type sender interface {
	send(ctx context.Context) (retryable bool, err error)
	close()
}

// Run sends the load and returns when every request has been answered with
// success, or with the first error that is not retryable or outlived its
// retries.
func (l Load) Run(ctx context.Context) (LoadResult, error) {
	if l.Clients < 1 {
		return LoadResult{}, errors.New("clients must be at least 1")
	}
	senders := make([]sender, l.Clients)
	for i := range senders {
		s, err := l.newSender()
		if err != nil {
			return LoadResult{}, err
		}
		defer s.close()
		senders[i] = s
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		next, done, retries atomic.Int64
		wg                  sync.WaitGroup
		deadline            time.Time
	)
	// One slice of latencies per client, merged once all have stopped.
	latencies := make([][]time.Duration, len(senders))
	start := time.Now()
	if l.Duration > 0 {
		deadline = start.Add(l.Duration)
	}
	for i, s := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if l.Duration > 0 {
					if time.Now().After(deadline) {
						return
					}
				} else if next.Add(1) > int64(l.Requests) {
					return
				}
				sent := time.Now()
				if err := sendWithRetry(ctx, s, &retries); err != nil {
					cancel(err)
					return
				}
				latencies[i] = append(latencies[i], time.Since(sent))
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	res := LoadResult{
		Requests: done.Load(), Items: done.Load() * int64(l.Payload.Items), Retries: retries.Load(), Elapsed: time.Since(start),
		Latency: latencyOf(slices.Concat(latencies...)),
	}
	if err := context.Cause(ctx); err != nil {
		return res, err
	}
	return res, nil
}

func sendWithRetry(ctx context.Context, s sender, retries *atomic.Int64) error {
	for attempt := 1; ; attempt++ {
		retryable, err := s.send(ctx)
		if err == nil {
			return nil
		}
		if !retryable || attempt == maxAttempts {
			return err
		}
		retries.Add(1)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(attempt) * 5 * time.Millisecond):
		}
	}
}

func (l Load) newSender() (sender, error) {
	switch l.Compression {
	case "", "gzip":
	default:
		return nil, fmt.Errorf("unknown compression %q (none or gzip)", l.Compression)
	}
	switch l.Protocol {
	case "grpc":
		callOpts := []grpc.CallOption{grpc.ForceCodecV2(sidecar.RawCodec{})}
		if l.Compression == "gzip" {
			callOpts = append(callOpts, grpc.UseCompressor(gzip.Name))
		}
		conn, err := grpc.NewClient(l.Endpoint,
			grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithDefaultCallOptions(callOpts...))
		if err != nil {
			return nil, err
		}
		return &grpcSender{conn: conn, method: grpcMethod(l.Payload.Signal), payload: l.Payload.Bytes}, nil
	case "http":
		body, encoding := l.Payload.Bytes, ""
		if l.Compression == "gzip" {
			var err error
			if body, err = gzipped(body); err != nil {
				return nil, err
			}
			encoding = "gzip"
		}
		return &httpSender{
			// One connection per client, like one exporter each.
			client:   &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}},
			url:      "http://" + l.Endpoint + httpPaths[l.Payload.Signal],
			payload:  body,
			encoding: encoding,
		}, nil
	}
	return nil, fmt.Errorf("unknown protocol %q", l.Protocol)
}

// gzipped compresses b at gzip's default level, as OTLP exporters do.
func gzipped(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw := stdgzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

type grpcSender struct {
	conn    *grpc.ClientConn
	method  string
	payload []byte
}

func (s *grpcSender) send(ctx context.Context) (bool, error) {
	var resp []byte
	err := s.conn.Invoke(ctx, s.method, s.payload, &resp)
	if err == nil {
		return false, nil
	}
	code := status.Code(err)
	return code == codes.Unavailable || code == codes.ResourceExhausted, fmt.Errorf("grpc %s: %w", s.method, err)
}

func (s *grpcSender) close() { s.conn.Close() }

type httpSender struct {
	client   *http.Client
	url      string
	payload  []byte
	encoding string // Content-Encoding of payload, "" for none
}

func (s *httpSender) send(ctx context.Context) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(s.payload))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	if s.encoding != "" {
		req.Header.Set("Content-Encoding", s.encoding)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return false, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		return false, nil
	}
	retryable := resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable
	return retryable, fmt.Errorf("POST %s: %s", s.url, resp.Status)
}

func (s *httpSender) close() { s.client.CloseIdleConnections() }
