// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/extension/extensionmiddleware"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"

	"github.com/otelcol-sdp/otelcol-sdp/extension/wirestageextension"
)

type stageHost struct {
	exts map[component.ID]component.Component
}

func (h *stageHost) GetExtensions() map[component.ID]component.Component { return h.exts }

// newStageHost starts a wirestage extension listing the test processor.
func newStageHost(t *testing.T, divertAll bool) (*stageHost, extensionmiddleware.HTTPServer) {
	t.Helper()
	f := wirestageextension.NewFactory()
	cfg := f.CreateDefaultConfig().(*wirestageextension.Config)
	cfg.Stages = []component.ID{processorSettings().ID}
	cfg.DivertAllPipelines = divertAll
	ext, err := f.Create(context.Background(), extensiontest.NewNopSettings(f.Type()), cfg)
	require.NoError(t, err)
	h := &stageHost{exts: map[component.ID]component.Component{component.MustNewID("wirestage"): ext}}
	require.NoError(t, ext.Start(context.Background(), h))
	t.Cleanup(func() { require.NoError(t, ext.Shutdown(context.Background())) })
	return h, ext.(extensionmiddleware.HTTPServer)
}

// startStaged starts a traces processor with cfg on host, whose wirestage
// extension lists it, passing on to sink.
func startStaged(t *testing.T, host component.Host, cfg *Config, sink *consumertest.TracesSink) processor.Traces {
	t.Helper()
	p, err := NewFactory().CreateTraces(context.Background(), testSettings(nil), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), host))
	t.Cleanup(func() { require.NoError(t, p.Shutdown(context.Background())) })
	return p
}

// serveLikeReceiver sends td through the extension's HTTP middleware to a
// handler that, like the otlp receiver, decodes what stays and passes it
// with the request context to the processor.
func serveLikeReceiver(t *testing.T, mw extensionmiddleware.HTTPServer, p processor.Traces, td ptrace.Traces) int {
	t.Helper()
	code, _ := serveLikeReceiverCtx(t, context.Background(), mw, p, td)
	return code
}

func serveLikeReceiverCtx(t *testing.T, ctx context.Context, mw extensionmiddleware.HTTPServer, p processor.Traces, td ptrace.Traces) (int, http.Header) {
	t.Helper()
	wrap, err := mw.GetHTTPHandler(context.Background())
	require.NoError(t, err)
	h, err := wrap(context.Background(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if got.SpanCount() > 0 {
			if err := p.ConsumeTraces(r.Context(), got); err != nil {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
		}
		w.WriteHeader(http.StatusOK)
	}))
	require.NoError(t, err)
	b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	require.NoError(t, err)
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/v1/traces", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/x-protobuf")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Header()
}

// TestStageWaitsForAcks: with wait_for_ack, the stage answers only once the
// sidecar acknowledged the frames; a sidecar that does not acknowledge
// before the request ends makes the client retry (503, Retry-After), and
// the pdata path never sees the request.
func TestStageWaitsForAcks(t *testing.T) {
	host, mw := newStageHost(t, true)
	endpoints := newEndpoints(t, "unix", 1)
	rec := newRecorder()
	startSidecar(t, endpoints[0], rec)
	cfg := testConfig(endpoints)
	cfg.Mode = ModeDivert
	cfg.WaitForAck = true
	sink := new(consumertest.TracesSink)
	p := startStaged(t, host, cfg, sink)

	unblock := rec.block()
	defer unblock()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	td, _ := buildTraces(0, 2, 2)
	code, header := serveLikeReceiverCtx(t, ctx, mw, p, td)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, "1", header.Get("Retry-After"))
	assert.Zero(t, sink.SpanCount())

	unblock()
	td, _ = buildTraces(1, 2, 2)
	assert.Equal(t, http.StatusOK, serveLikeReceiver(t, mw, p, td))
	// Both resources of the second request reached the sidecar before the
	// answer: the stage waited for their acks.
	frames := 0
	for _, r := range rec.snapshot() {
		if bytes.Contains(r.frame.OTLP, []byte(itemName(1, 0, 0)[:3])) {
			frames++
		}
	}
	assert.Equal(t, 2, frames)
}

// TestStageForwardsOnceAcrossBothPaths: a request that went through the
// stage is forwarded there and passed on untouched by the pdata path; a
// batch that did not (no mark in its context) is forwarded on the pdata
// path.
func TestStageForwardsOnceAcrossBothPaths(t *testing.T) {
	for _, mode := range []Mode{ModeTee, ModeDivert} {
		t.Run(string(mode), func(t *testing.T) {
			host, mw := newStageHost(t, true)
			endpoints := newEndpoints(t, "unix", 1)
			rec := newRecorder()
			startSidecar(t, endpoints[0], rec)
			cfg := testConfig(endpoints)
			cfg.Mode = mode
			cfg.WaitForAck = true
			sink := new(consumertest.TracesSink)
			p := startStaged(t, host, cfg, sink)

			td, _ := buildTraces(0, 3, 2)
			require.Equal(t, http.StatusOK, serveLikeReceiver(t, mw, p, td))
			assert.Len(t, rec.snapshot(), 3, "one frame per resource, sent once")
			if mode == ModeTee {
				assert.Equal(t, 6, sink.SpanCount(), "tee passes everything on")
			} else {
				assert.Zero(t, sink.SpanCount(), "divert leaves nothing to decode")
			}

			// The pdata path, without the stage's mark, forwards too.
			td, _ = buildTraces(1, 2, 2)
			require.NoError(t, p.ConsumeTraces(context.Background(), td))
			assert.Eventually(t, func() bool { return len(rec.snapshot()) == 5 }, 5*time.Second, 10*time.Millisecond)
		})
	}
}

func TestDivertStageNeedsAcknowledgement(t *testing.T) {
	host, _ := newStageHost(t, false)
	cfg := testConfig(newEndpoints(t, "unix", 1))
	cfg.Mode = ModeDivert
	p, err := NewFactory().CreateTraces(context.Background(), testSettings(nil), cfg, new(consumertest.TracesSink))
	require.NoError(t, err)
	err = p.Start(context.Background(), host)
	require.ErrorIs(t, err, wirestageextension.ErrDivertNotAcknowledged)
	assert.ErrorContains(t, err, "divert_all_pipelines")
	require.NoError(t, p.Shutdown(context.Background()))

	// Tee needs no acknowledgement.
	cfg.Mode = ModeTee
	p, err = NewFactory().CreateTraces(context.Background(), testSettings(nil), cfg, new(consumertest.TracesSink))
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), host))
	require.NoError(t, p.Shutdown(context.Background()))
}

// TestConnectorDataIsForwardedLikeAnyReceivers: the processor whose stage
// forwarded a request passes the batch on, through a stand-in for core's
// forward connector (same context, same data), to a second pipeline holding
// a processor of the same ID. That one forwards what it receives, as it
// would from any receiver: each resource reaches the sidecar once for the
// stage and once for the second pipeline.
func TestConnectorDataIsForwardedLikeAnyReceivers(t *testing.T) {
	host, mw := newStageHost(t, true)
	endpoints := newEndpoints(t, "unix", 1)
	rec := newRecorder()
	startSidecar(t, endpoints[0], rec)
	cfg := testConfig(endpoints)
	cfg.Mode = ModeTee
	cfg.WaitForAck = true
	create := func(next consumer.Traces) processor.Traces {
		p, err := NewFactory().CreateTraces(context.Background(), testSettings(nil), cfg, next)
		require.NoError(t, err)
		require.NoError(t, p.Start(context.Background(), host))
		t.Cleanup(func() { require.NoError(t, p.Shutdown(context.Background())) })
		return p
	}
	sink := new(consumertest.TracesSink)
	second := create(sink)
	forward, err := consumer.NewTraces(second.ConsumeTraces)
	require.NoError(t, err)
	first := create(forward)

	td, _ := buildTraces(0, 3, 2)
	require.Equal(t, http.StatusOK, serveLikeReceiver(t, mw, first, td))
	assert.Equal(t, 6, sink.SpanCount(), "the second pipeline got every span")
	assert.Eventually(t, func() bool { return len(rec.snapshot()) == 6 }, 5*time.Second, 10*time.Millisecond,
		"three frames from the stage, three from the second pipeline")
}

// TestStageRoutesByTraceID: the pre-decode path splits by routing_key as
// the pdata path does, each trace on one sidecar, and diverts everything
// it forwarded.
func TestStageRoutesByTraceID(t *testing.T) {
	host, mw := newStageHost(t, true)
	recs, cfg := keyedSidecars(t, RoutingKeyTraceID)
	cfg.Mode = ModeDivert
	cfg.WaitForAck = true
	sink := new(consumertest.TracesSink)
	p := startStaged(t, host, cfg, sink)

	td := tracesOfFiveTraces()
	assert.Equal(t, http.StatusOK, serveLikeReceiver(t, mw, p, td))
	assert.Zero(t, sink.SpanCount(), "the pdata path saw a diverted request")
	assertEachTraceOnOneSidecar(t, recs, td.SpanCount())
}
