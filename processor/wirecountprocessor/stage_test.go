// SPDX-License-Identifier: Apache-2.0

package wirecountprocessor

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/extension/extensionmiddleware"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelcol-sdp/otelcol-sdp/extension/wirestageextension"
	"github.com/otelcol-sdp/otelcol-sdp/internal/componenttelemetry"
)

type stageHost struct {
	exts map[component.ID]component.Component
}

func (h *stageHost) GetExtensions() map[component.ID]component.Component { return h.exts }

// TestStageCountsOnceAndLikeThePdataPath sends the same batches through the
// stage (wirestage middleware in front of a stand-in receiver) to one
// processor and on the pdata path to another: the series are identical,
// so the stage counted each request once and the first processor's pdata
// path did not count it again.
func TestStageCountsOnceAndLikeThePdataPath(t *testing.T) {
	staged := component.MustNewIDWithName("wirecount", "staged")
	ext, host := startStageExtension(t, staged)

	tel := componenttest.NewTelemetry()
	defer func() { require.NoError(t, tel.Shutdown(context.Background())) }()
	create := func(id component.ID) processor.Traces {
		set := processortest.NewNopSettings(id.Type())
		set.ID = id
		set.TelemetrySettings = tel.NewTelemetrySettings()
		cfg := createDefaultConfig().(*Config)
		cfg.GroupBy = []string{"service.name", "host.name"}
		p, err := NewFactory().CreateTraces(context.Background(), set, cfg, new(consumertest.TracesSink))
		require.NoError(t, err)
		require.NoError(t, p.Start(context.Background(), host))
		t.Cleanup(func() { require.NoError(t, p.Shutdown(context.Background())) })
		return p
	}
	stagedProc := create(staged)
	pdataProc := create(component.MustNewIDWithName("wirecount", "pdata"))

	h := stagedHandler(t, ext, stagedProc.ConsumeTraces)

	rng := rand.New(rand.NewPCG(9, 9))
	for range 20 {
		td := generateTraces(rng, batchShape{resources: 5, scopes: 2, items: 4, varied: true})
		postTraces(t, h, td)
		require.NoError(t, pdataProc.ConsumeTraces(context.Background(), td))
	}
	assertStagedCountsLikePdata(t, tel)
}

// stagedHandler is an HTTP handler behind ext's middleware that decodes
// each OTLP/HTTP traces request and passes it to consume with the request
// context, as the otlp receiver does.
func stagedHandler(t *testing.T, ext component.Component, consume consumer.ConsumeTracesFunc) http.Handler {
	t.Helper()
	wrap, err := ext.(extensionmiddleware.HTTPServer).GetHTTPHandler(context.Background())
	require.NoError(t, err)
	h, err := wrap(context.Background(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(body)
		require.NoError(t, err)
		require.NoError(t, consume(r.Context(), td))
	}))
	require.NoError(t, err)
	return h
}

// postTraces sends td to h as an OTLP/HTTP protobuf request and requires 200.
func postTraces(t *testing.T, h http.Handler, td ptrace.Traces) {
	t.Helper()
	b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	require.NoError(t, err)
	req := httptest.NewRequest(http.MethodPost, "/v1/traces", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/x-protobuf")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code)
}

// assertStagedCountsLikePdata requires that wirecount/staged recorded
// exactly the items and bytes series that wirecount/pdata did.
func assertStagedCountsLikePdata(t *testing.T, tel *componenttest.Telemetry) {
	t.Helper()
	for _, name := range []string{"otelcol_processor_wirecount_items", "otelcol_processor_wirecount_bytes"} {
		all := readSeriesByProcessor(t, tel, name)
		require.NotEmpty(t, all["wirecount/pdata"], name)
		assert.Equal(t, all["wirecount/pdata"], all["wirecount/staged"], name)
	}
}

// readSeriesByProcessor returns, per processor ID, the metric's series
// with the component ID attribute left out, so that two processors' counts
// compare directly.
func readSeriesByProcessor(t *testing.T, tt *componenttest.Telemetry, name string) map[string]map[string]int64 {
	t.Helper()
	out := map[string]map[string]int64{}
	m, err := tt.GetMetric(name)
	require.NoError(t, err)
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		id, _ := dp.Attributes.Value(componenttelemetry.ComponentIDKey)
		rest, _ := dp.Attributes.Filter(func(kv attribute.KeyValue) bool { return kv.Key != componenttelemetry.ComponentIDKey })
		if out[id.AsString()] == nil {
			out[id.AsString()] = map[string]int64{}
		}
		out[id.AsString()][rest.Encoded(attribute.DefaultEncoder())] += dp.Value
	}
	return out
}

// TestConnectorDataIsCountedLikeAnyReceivers: a counter whose stage ran
// sits in the pipeline the receiver feeds and passes its batch to a
// connector (here a stand-in for core's forward connector, which passes
// context and data on as they are) into a second pipeline holding a
// counter of the same ID. The first counter skips what its stage counted;
// the second counts what it receives, as it would from any receiver. So
// the ID's series equal those of a pdata-only counter fed each batch twice
// (once for each pipeline).
func TestConnectorDataIsCountedLikeAnyReceivers(t *testing.T) {
	staged := component.MustNewIDWithName("wirecount", "staged")
	ext, host := startStageExtension(t, staged)

	tel := componenttest.NewTelemetry()
	defer func() { require.NoError(t, tel.Shutdown(context.Background())) }()
	create := func(id component.ID, next consumer.Traces) processor.Traces {
		set := processortest.NewNopSettings(id.Type())
		set.ID = id
		set.TelemetrySettings = tel.NewTelemetrySettings()
		cfg := createDefaultConfig().(*Config)
		cfg.GroupBy = []string{"service.name", "host.name"}
		p, err := NewFactory().CreateTraces(context.Background(), set, cfg, next)
		require.NoError(t, err)
		require.NoError(t, p.Start(context.Background(), host))
		t.Cleanup(func() { require.NoError(t, p.Shutdown(context.Background())) })
		return p
	}
	sink := new(consumertest.TracesSink)
	second := create(staged, sink)
	forward, err := consumer.NewTraces(second.ConsumeTraces) // same context, same data
	require.NoError(t, err)
	first := create(staged, forward)
	pdataProc := create(component.MustNewIDWithName("wirecount", "pdata"), new(consumertest.TracesSink))

	h := stagedHandler(t, ext, first.ConsumeTraces)

	rng := rand.New(rand.NewPCG(5, 7))
	spans := 0
	for range 10 {
		td := generateTraces(rng, batchShape{resources: 4, scopes: 2, items: 3, varied: true})
		spans += td.SpanCount()
		postTraces(t, h, td)
		// Once for the stage (first pipeline), once for the second.
		require.NoError(t, pdataProc.ConsumeTraces(context.Background(), td))
		require.NoError(t, pdataProc.ConsumeTraces(context.Background(), td))
	}
	assert.Equal(t, spans, sink.SpanCount(), "the second pipeline got every span")
	assertStagedCountsLikePdata(t, tel)
}

// startStageExtension starts a wirestage extension whose one stage is the
// processor staged, stopped when the test ends, and returns it with a host
// that holds it under the ID wirestage.
func startStageExtension(t *testing.T, staged component.ID) (component.Component, *stageHost) {
	t.Helper()
	f := wirestageextension.NewFactory()
	extCfg := f.CreateDefaultConfig().(*wirestageextension.Config)
	extCfg.Stages = []component.ID{staged}
	ext, err := f.Create(context.Background(), extensiontest.NewNopSettings(f.Type()), extCfg)
	require.NoError(t, err)
	host := &stageHost{exts: map[component.ID]component.Component{component.MustNewID("wirestage"): ext}}
	require.NoError(t, ext.Start(context.Background(), host))
	t.Cleanup(func() { require.NoError(t, ext.Shutdown(context.Background())) })
	return ext, host
}
