// SPDX-License-Identifier: Apache-2.0

package wirestageextension

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/collector/processor/processorhelper"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/embedded"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	_ "google.golang.org/grpc/encoding/gzip" // the client's gzip compressor

	"github.com/otelcol-sdp/otelcol-sdp/internal/componenttelemetry"
	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

var (
	extID   = component.MustNewIDWithName("wirestage", "test")
	stageID = component.MustNewIDWithName("sdpshard", "test")
	countID = component.MustNewIDWithName("wirecount", "test")
)

// host offers the extensions to the receiver and the processors.
type host struct {
	exts map[component.ID]component.Component
}

func (h *host) GetExtensions() map[component.ID]component.Component { return h.exts }

// seen is what the processor in front of the sink observed for one batch.
type seen struct {
	spans     int
	resources []string // service.name of each resource
	ran       bool
}

// rig is an otlp receiver using a wirestage extension, feeding a
// processorhelper processor (which records whether the stage's mark reached
// it) and a sink.
type rig struct {
	t        *testing.T
	ext      *wireStage
	tel      *componenttest.Telemetry
	host     *host
	grpcAddr string
	httpURL  string

	mu   sync.Mutex
	seen []seen
	sink consumertest.TracesSink
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

func newRig(t *testing.T, cfg *Config) *rig {
	t.Helper()
	r := &rig{t: t, tel: componenttest.NewTelemetry()}
	t.Cleanup(func() { require.NoError(t, r.tel.Shutdown(context.Background())) })
	set := extensiontest.NewNopSettings(extID.Type())
	set.ID = extID
	set.TelemetrySettings = r.tel.NewTelemetrySettings()
	e, err := NewFactory().Create(context.Background(), set, cfg)
	require.NoError(t, err)
	r.ext = e.(*wireStage)
	r.host = &host{exts: map[component.ID]component.Component{extID: e}}
	require.NoError(t, e.Start(context.Background(), r.host))
	t.Cleanup(func() { require.NoError(t, e.Shutdown(context.Background())) })
	return r
}

// startReceiver starts the receiver once the stages are registered.
func (r *rig) startReceiver() {
	t := r.t
	t.Helper()
	next, err := processorhelper.NewTraces(context.Background(), processortest.NewNopSettings(component.MustNewType("sdpshard")),
		struct{}{}, &r.sink, func(ctx context.Context, td ptrace.Traces) (ptrace.Traces, error) {
			s := seen{spans: td.SpanCount(), ran: StagedTraces(ctx, stageID, td)}
			for i := 0; i < td.ResourceSpans().Len(); i++ {
				v, _ := td.ResourceSpans().At(i).Resource().Attributes().Get("service.name")
				s.resources = append(s.resources, v.Str())
			}
			r.mu.Lock()
			r.seen = append(r.seen, s)
			r.mu.Unlock()
			return td, nil
		}, processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}))
	require.NoError(t, err)
	f, set, cfg := r.receiverConfig()
	recv, err := f.CreateTraces(context.Background(), set, cfg, next)
	require.NoError(t, err)
	require.NoError(t, recv.Start(context.Background(), r.host))
	t.Cleanup(func() { require.NoError(t, recv.Shutdown(context.Background())) })
}

// receiverConfig picks the receiver's addresses and returns its factory,
// settings and a configuration that uses the extension on both protocols.
func (r *rig) receiverConfig() (receiver.Factory, receiver.Settings, component.Config) {
	t := r.t
	r.grpcAddr, r.httpURL = freeAddr(t), "http://"+freeAddr(t)
	f := otlpreceiver.NewFactory()
	cfg := f.CreateDefaultConfig()
	require.NoError(t, confmap.NewFromStringMap(map[string]any{
		"protocols": map[string]any{
			"grpc": map[string]any{"endpoint": r.grpcAddr, "middlewares": []any{map[string]any{"id": extID.String()}}},
			"http": map[string]any{"endpoint": r.httpURL[len("http://"):], "middlewares": []any{map[string]any{"id": extID.String()}}},
		},
	}).Unmarshal(&cfg))
	set := receivertest.NewNopSettings(f.Type())
	set.TelemetrySettings = r.tel.NewTelemetrySettings()
	return f, set, cfg
}

func (r *rig) seenBatches() []seen {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]seen(nil), r.seen...)
}

// traces builds a request with one resource per name, spans spans each.
func traces(spans int, names ...string) ptrace.Traces {
	td := ptrace.NewTraces()
	for _, n := range names {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", n)
		ss := rs.ScopeSpans().AppendEmpty()
		for i := range spans {
			s := ss.Spans().AppendEmpty()
			s.SetName(fmt.Sprintf("%s-%d", n, i))
			s.SetTraceID([16]byte{1, byte(i)})
			s.SetSpanID([8]byte{2, byte(i)})
		}
	}
	return td
}

func marshal(t testing.TB, td ptrace.Traces) []byte {
	b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	require.NoError(t, err)
	return b
}

// postTo sends a protobuf body to path.
func (r *rig) postTo(path string, body []byte) (*http.Response, []byte) {
	return r.send(path, "application/x-protobuf", body, false)
}

// post sends body to /v1/traces and returns the response with its body read.
func (r *rig) post(contentType string, body []byte, gz bool) (*http.Response, []byte) {
	return r.send("/v1/traces", contentType, body, gz)
}

func (r *rig) send(path, contentType string, body []byte, gz bool) (*http.Response, []byte) {
	t := r.t
	if gz {
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		_, _ = w.Write(body)
		require.NoError(t, w.Close())
		body = buf.Bytes()
	}
	req, err := http.NewRequest(http.MethodPost, r.httpURL+path, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", contentType)
	if gz {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, b
}

func (r *rig) grpcClient() ptraceotlp.GRPCClient {
	conn, err := grpc.NewClient(r.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(r.t, err)
	r.t.Cleanup(func() { _ = conn.Close() })
	return ptraceotlp.NewGRPCClient(conn)
}

// stageRecorder is a stage that records what it saw and answers with keep
// (nil: tee) or err.
type stageRecorder struct {
	mu       sync.Mutex
	requests [][]byte
	divert   bool
	keep     []int
	err      error
}

func (s *stageRecorder) ProcessRequest(_ context.Context, req otlpwire.Request) (Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, append([]byte(nil), req.Bytes()...))
	if s.err != nil {
		return Result{}, s.err
	}
	return Result{Divert: s.divert, Keep: s.keep}, nil
}

func (s *stageRecorder) seen() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.requests...)
}

// sumByOutcome returns the requests metric's value for outcome.
func (r *rig) requestsWith(outcome string) int64 {
	m, err := r.tel.GetMetric("otelcol_extension_wirestage_requests")
	if err != nil {
		return 0
	}
	var n int64
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		if v, ok := dp.Attributes.Value("outcome"); ok && v.AsString() == outcome {
			n += dp.Value
		}
	}
	return n
}

func settingsFor(testing.TB) extension.Settings {
	set := extensiontest.NewNopSettings(extID.Type())
	set.ID = extID
	return set
}

// startedWithTelemetry returns a started extension whose telemetry is the
// SDK's meter provider behind tel, with the stages of the usual test
// configuration; it is shut down at the end of the test.
func startedWithTelemetry(tb testing.TB) (*wireStage, *componenttest.Telemetry) {
	tb.Helper()
	tel := componenttest.NewTelemetry()
	tb.Cleanup(func() { require.NoError(tb, tel.Shutdown(context.Background())) })
	set := settingsFor(tb)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	w, err := newWireStage(set, &Config{Stages: []component.ID{stageID}, DivertAllPipelines: true})
	require.NoError(tb, err)
	require.NoError(tb, w.Start(context.Background(), componenttest.NewNopHost()))
	tb.Cleanup(func() { require.NoError(tb, w.Shutdown(context.Background())) })
	return w, tel
}

// valueOf is what c reports when the telemetry is collected (0 before its
// first Add).
func valueOf(c *componenttelemetry.Count) int64 {
	var o lastValue
	c.Observe(&o)
	return o.v
}

// lastValue is an Int64Observer that keeps the last value observed.
type lastValue struct {
	embedded.Int64Observer
	v int64
}

func (o *lastValue) Observe(v int64, _ ...metric.ObserveOption) { o.v = v }
