// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/zap"

	"github.com/otelcol-sdp/otelcol-sdp/processor/sdpshardprocessor/internal/metadata"
	"github.com/otelcol-sdp/otelcol-sdp/sdp"
	"github.com/otelcol-sdp/otelcol-sdp/sdp/transport"
)

// received is one frame as a sidecar saw it.
type received struct {
	helloShard uint32
	frame      sdp.ResourceFrame // OTLP is a private copy
}

// recorder is a sidecar Handler that keeps every frame. While gate is
// closed (see block) it stops handling, so the server stops reading.
type recorder struct {
	mu     sync.Mutex
	frames []received
	gate   chan struct{}
	status sdp.AckStatus
}

func newRecorder() *recorder {
	gate := make(chan struct{})
	close(gate)
	return &recorder{gate: gate}
}

func (r *recorder) HandleFrame(hello *sdp.Hello, f *sdp.ResourceFrame) (sdp.AckStatus, string) {
	r.mu.Lock()
	gate := r.gate
	r.mu.Unlock()
	<-gate
	r.mu.Lock()
	defer r.mu.Unlock()
	copied := *f
	copied.OTLP = append([]byte(nil), f.OTLP...)
	r.frames = append(r.frames, received{helloShard: hello.Shard, frame: copied})
	if r.status != sdp.AckAccepted {
		return r.status, "test sidecar refuses"
	}
	return sdp.AckAccepted, ""
}

// block makes the handler stop until the returned function is called.
func (r *recorder) block() (unblock func()) {
	gate := make(chan struct{})
	r.mu.Lock()
	r.gate = gate
	r.mu.Unlock()
	return sync.OnceFunc(func() { close(gate) })
}

func (r *recorder) snapshot() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.frames...)
}

// sidecar is an in-process SDP server on a real socket.
type sidecar struct {
	t        *testing.T
	endpoint string
	rec      *recorder
	srv      *transport.Server
	done     chan error
}

// newEndpoints returns n endpoints on the network: unix sockets in a short
// temporary directory (socket paths are limited to 107 bytes) or free
// loopback TCP ports.
func newEndpoints(t testing.TB, network string, n int) []string {
	t.Helper()
	var out []string
	if network == "unix" {
		dir, err := os.MkdirTemp("", "sdp")
		require.NoError(t, err)
		t.Cleanup(func() { os.RemoveAll(dir) })
		for i := range n {
			out = append(out, "unix://"+filepath.Join(dir, fmt.Sprintf("s%d.sock", i)))
		}
		return out
	}
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		endpoint := "tcp://" + l.Addr().String()
		out = append(out, endpoint)
		// The port stays taken until a sidecar serves on it: a test package
		// running in parallel could bind it in between.
		reservedPorts.Store(endpoint, l)
		t.Cleanup(func() {
			if l, ok := reservedPorts.LoadAndDelete(endpoint); ok {
				l.(net.Listener).Close()
			}
		})
	}
	return out
}

// reservedPorts holds, by endpoint, the listeners of TCP ports that
// newEndpoints picked and no sidecar has served on yet.
var reservedPorts sync.Map

func startSidecar(t *testing.T, endpoint string, rec *recorder) *sidecar {
	t.Helper()
	s := &sidecar{t: t, endpoint: endpoint, rec: rec}
	s.start()
	t.Cleanup(s.stop)
	return s
}

func (s *sidecar) start() {
	var l net.Listener
	if reserved, ok := reservedPorts.LoadAndDelete(s.endpoint); ok {
		l = reserved.(net.Listener)
	} else {
		var err error
		l, err = transport.Listen(s.endpoint)
		require.NoError(s.t, err)
	}
	s.srv = &transport.Server{Handler: s.rec}
	s.done = make(chan error, 1)
	srv := s.srv
	go func() { s.done <- srv.Serve(l) }()
}

// stop shuts the server down (closing its connections); it may be started
// again on the same endpoint.
func (s *sidecar) stop() {
	if s.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
	<-s.done
	s.srv = nil
}

// testConfig is a valid configuration with short timings for tests.
func testConfig(endpoints []string) *Config {
	cfg := createDefaultConfig()
	cfg.Endpoints = endpoints
	cfg.InitialBackoff = 5 * time.Millisecond
	cfg.MaxBackoff = 50 * time.Millisecond
	cfg.DialTimeout = time.Second
	cfg.FlushTimeout = 5 * time.Second
	return cfg
}

func testSettings(tel *componenttest.Telemetry) processor.Settings {
	set := processorSettings()
	if tel != nil {
		set.TelemetrySettings = tel.NewTelemetrySettings()
	}
	return set
}

func processorSettings() processor.Settings {
	set := processor.Settings{ID: component.NewIDWithName(metadata.Type, "test")}
	set.TelemetrySettings = componenttest.NewNopTelemetrySettings()
	set.Logger = zap.NewNop()
	return set
}

// signalCase drives one signal through a processor and decodes what the
// sidecars received.
type signalCase struct {
	name string
	// create builds the signal's processor.
	create func(t *testing.T, f processor.Factory, set processor.Settings, cfg *Config) (component.Component, func() int)
	// consume sends batch b (resources resources of items items) and
	// returns the item names sent, keyed by resource (service.name).
	consume func(ctx context.Context, c component.Component, batch, resources, items int) (map[string][]string, error)
	// decode returns the service.name, item names and canonical bytes of
	// a frame's single-resource request.
	decode func(otlp []byte) (service string, items []string, resources int, err error)
	// alone returns, for batch b, each resource copied alone into a new
	// request with pdata and marshalled by pdata, keyed by the name of the
	// resource's first item: what a frame of that resource must decode to.
	alone func(t *testing.T, batch, resources, items int) map[string][]byte
	// canonical unmarshals a frame's OTLP with pdata and marshals it again.
	canonical func(otlp []byte) ([]byte, error)
}

func serviceName(batch, resource int) string { return fmt.Sprintf("svc-%d", resource) }
func itemName(batch, resource, item int) string {
	return fmt.Sprintf("b%d-r%d-i%d", batch, resource, item)
}

var signalCases = []signalCase{
	{
		name: "traces",
		create: func(t *testing.T, f processor.Factory, set processor.Settings, cfg *Config) (component.Component, func() int) {
			sink := new(consumertest.TracesSink)
			p, err := f.CreateTraces(context.Background(), set, cfg, sink)
			require.NoError(t, err)
			return p, sink.SpanCount
		},
		consume: func(ctx context.Context, c component.Component, batch, resources, items int) (map[string][]string, error) {
			td, sent := buildTraces(batch, resources, items)
			return sent, c.(processor.Traces).ConsumeTraces(ctx, td)
		},
		decode: func(otlp []byte) (string, []string, int, error) {
			td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(otlp)
			if err != nil {
				return "", nil, 0, err
			}
			if td.ResourceSpans().Len() != 1 {
				return "", nil, td.ResourceSpans().Len(), nil
			}
			rs := td.ResourceSpans().At(0)
			var names []string
			for i := range rs.ScopeSpans().Len() {
				for j := range rs.ScopeSpans().At(i).Spans().Len() {
					names = append(names, rs.ScopeSpans().At(i).Spans().At(j).Name())
				}
			}
			return resourceService(rs.Resource()), names, 1, nil
		},
		alone: func(t *testing.T, batch, resources, items int) map[string][]byte {
			td, _ := buildTraces(batch, resources, items)
			out := map[string][]byte{}
			for r := range td.ResourceSpans().Len() {
				single := ptrace.NewTraces()
				td.ResourceSpans().At(r).CopyTo(single.ResourceSpans().AppendEmpty())
				b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(single)
				require.NoError(t, err)
				out[itemName(batch, r, 0)] = b
			}
			return out
		},
		canonical: func(otlp []byte) ([]byte, error) {
			td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(otlp)
			if err != nil {
				return nil, err
			}
			return (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
		},
	},
	{
		name: "metrics",
		create: func(t *testing.T, f processor.Factory, set processor.Settings, cfg *Config) (component.Component, func() int) {
			sink := new(consumertest.MetricsSink)
			p, err := f.CreateMetrics(context.Background(), set, cfg, sink)
			require.NoError(t, err)
			return p, sink.DataPointCount
		},
		consume: func(ctx context.Context, c component.Component, batch, resources, items int) (map[string][]string, error) {
			md, sent := buildMetrics(batch, resources, items)
			return sent, c.(processor.Metrics).ConsumeMetrics(ctx, md)
		},
		decode: func(otlp []byte) (string, []string, int, error) {
			md, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(otlp)
			if err != nil {
				return "", nil, 0, err
			}
			if md.ResourceMetrics().Len() != 1 {
				return "", nil, md.ResourceMetrics().Len(), nil
			}
			rm := md.ResourceMetrics().At(0)
			var names []string
			for i := range rm.ScopeMetrics().Len() {
				ms := rm.ScopeMetrics().At(i).Metrics()
				for j := range ms.Len() {
					dps := ms.At(j).Gauge().DataPoints()
					for k := range dps.Len() {
						v, _ := dps.At(k).Attributes().Get("item")
						names = append(names, v.Str())
					}
				}
			}
			return resourceService(rm.Resource()), names, 1, nil
		},
		alone: func(t *testing.T, batch, resources, items int) map[string][]byte {
			md, _ := buildMetrics(batch, resources, items)
			out := map[string][]byte{}
			for r := range md.ResourceMetrics().Len() {
				single := pmetric.NewMetrics()
				md.ResourceMetrics().At(r).CopyTo(single.ResourceMetrics().AppendEmpty())
				b, err := (&pmetric.ProtoMarshaler{}).MarshalMetrics(single)
				require.NoError(t, err)
				out[itemName(batch, r, 0)] = b
			}
			return out
		},
		canonical: func(otlp []byte) ([]byte, error) {
			md, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(otlp)
			if err != nil {
				return nil, err
			}
			return (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
		},
	},
	{
		name: "logs",
		create: func(t *testing.T, f processor.Factory, set processor.Settings, cfg *Config) (component.Component, func() int) {
			sink := new(consumertest.LogsSink)
			p, err := f.CreateLogs(context.Background(), set, cfg, sink)
			require.NoError(t, err)
			return p, sink.LogRecordCount
		},
		consume: func(ctx context.Context, c component.Component, batch, resources, items int) (map[string][]string, error) {
			ld, sent := buildLogs(batch, resources, items)
			return sent, c.(processor.Logs).ConsumeLogs(ctx, ld)
		},
		decode: func(otlp []byte) (string, []string, int, error) {
			ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(otlp)
			if err != nil {
				return "", nil, 0, err
			}
			if ld.ResourceLogs().Len() != 1 {
				return "", nil, ld.ResourceLogs().Len(), nil
			}
			rl := ld.ResourceLogs().At(0)
			var names []string
			for i := range rl.ScopeLogs().Len() {
				for j := range rl.ScopeLogs().At(i).LogRecords().Len() {
					names = append(names, rl.ScopeLogs().At(i).LogRecords().At(j).Body().Str())
				}
			}
			return resourceService(rl.Resource()), names, 1, nil
		},
		alone: func(t *testing.T, batch, resources, items int) map[string][]byte {
			ld, _ := buildLogs(batch, resources, items)
			out := map[string][]byte{}
			for r := range ld.ResourceLogs().Len() {
				single := plog.NewLogs()
				ld.ResourceLogs().At(r).CopyTo(single.ResourceLogs().AppendEmpty())
				b, err := (&plog.ProtoMarshaler{}).MarshalLogs(single)
				require.NoError(t, err)
				out[itemName(batch, r, 0)] = b
			}
			return out
		},
		canonical: func(otlp []byte) ([]byte, error) {
			ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(otlp)
			if err != nil {
				return nil, err
			}
			return (&plog.ProtoMarshaler{}).MarshalLogs(ld)
		},
	},
}

func resourceService(r pcommon.Resource) string {
	v, _ := r.Attributes().Get("service.name")
	return v.Str()
}

func fillResource(r pcommon.Resource, resource int) {
	r.Attributes().PutStr("service.name", serviceName(0, resource))
	r.Attributes().PutInt("replica", int64(resource%3))
}

func buildTraces(batch, resources, items int) (ptrace.Traces, map[string][]string) {
	td := ptrace.NewTraces()
	sent := map[string][]string{}
	for r := range resources {
		rs := td.ResourceSpans().AppendEmpty()
		fillResource(rs.Resource(), r)
		spans := rs.ScopeSpans().AppendEmpty().Spans()
		for i := range items {
			name := itemName(batch, r, i)
			s := spans.AppendEmpty()
			s.SetName(name)
			s.SetTraceID(pcommon.TraceID{byte(batch), byte(r), byte(i), 1})
			s.SetSpanID(pcommon.SpanID{byte(i), 1})
			s.Attributes().PutStr("http.route", "/checkout/"+strings.Repeat("x", 40))
			sent[serviceName(batch, r)] = append(sent[serviceName(batch, r)], name)
		}
	}
	return td, sent
}

func buildMetrics(batch, resources, items int) (pmetric.Metrics, map[string][]string) {
	md := pmetric.NewMetrics()
	sent := map[string][]string{}
	for r := range resources {
		rm := md.ResourceMetrics().AppendEmpty()
		fillResource(rm.Resource(), r)
		m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
		m.SetName("queue.depth")
		dps := m.SetEmptyGauge().DataPoints()
		for i := range items {
			name := itemName(batch, r, i)
			dp := dps.AppendEmpty()
			dp.SetIntValue(int64(i))
			dp.Attributes().PutStr("item", name)
			sent[serviceName(batch, r)] = append(sent[serviceName(batch, r)], name)
		}
	}
	return md, sent
}

func buildLogs(batch, resources, items int) (plog.Logs, map[string][]string) {
	ld := plog.NewLogs()
	sent := map[string][]string{}
	for r := range resources {
		rl := ld.ResourceLogs().AppendEmpty()
		fillResource(rl.Resource(), r)
		lrs := rl.ScopeLogs().AppendEmpty().LogRecords()
		for i := range items {
			name := itemName(batch, r, i)
			lrs.AppendEmpty().Body().SetStr(name)
			sent[serviceName(batch, r)] = append(sent[serviceName(batch, r)], name)
		}
	}
	return ld, sent
}

// sumMetric adds up the int64 data points of a metric whose attributes
// include every key=value in match.
func sumMetric(t *testing.T, tel *componenttest.Telemetry, name string, match map[string]string) int64 {
	t.Helper()
	m, err := tel.GetMetric(name)
	if err != nil {
		return 0
	}
	var dps []metricdata.DataPoint[int64]
	switch data := m.Data.(type) {
	case metricdata.Sum[int64]:
		dps = data.DataPoints
	case metricdata.Gauge[int64]:
		dps = data.DataPoints
	default:
		t.Fatalf("%s has data %T", name, m.Data)
	}
	var total int64
	for _, dp := range dps {
		ok := true
		for k, v := range match {
			got, found := dp.Attributes.Value(attribute.Key(k))
			if !found || got.Emit() != v {
				ok = false
			}
		}
		if ok {
			total += dp.Value
		}
	}
	return total
}
