// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pipeline"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	zapobserver "go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-sdp/otelcol-sdp/internal/componenttelemetry"
	"github.com/otelcol-sdp/otelcol-sdp/internal/componenttelemetry/componenttelemetrytest"
)

// ourScope is the instrumentation scope of the processor's own metrics.
const ourScope = "github.com/otelcol-sdp/otelcol-sdp/processor/sdpshardprocessor"

// handMadeKeys are attributes the processor once added by hand next to the
// ones the Collector injects.
var handMadeKeys = []string{"processor", "extension", "otel.signal"}

// startSharedSet creates and starts the metrics processor, then the traces
// processor, of one sdpshard ID with the given settings for each pipeline,
// against a sidecar that refuses connections, and waits until both the
// health warning and the transport's dial warning were logged.
func startSharedSet(t *testing.T, metricsSet, tracesSet component.TelemetrySettings, logs *zapobserver.ObservedLogs) {
	t.Helper()
	f := NewFactory()
	cfg := testConfig([]string{"tcp://127.0.0.1:1"}) // nothing listens on port 1
	ctx := context.Background()
	ms, ts := processorSettings(), processorSettings()
	ms.TelemetrySettings, ts.TelemetrySettings = metricsSet, tracesSet
	mp, err := f.CreateMetrics(ctx, ms, cfg, consumertest.NewNop())
	require.NoError(t, err)
	tp, err := f.CreateTraces(ctx, ts, cfg, consumertest.NewNop())
	require.NoError(t, err)
	for _, p := range []component.Component{mp, tp} {
		require.NoError(t, p.Start(ctx, componenttest.NewNopHost()))
		t.Cleanup(func() { require.NoError(t, p.Shutdown(context.Background())) })
	}
	waitFor(t, "the unreachable sidecar warnings", func() bool {
		return logs.FilterMessageSnippet("Sidecar unreachable").Len() > 0 &&
			logs.FilterMessageSnippet("Cannot connect to sidecar").Len() > 0
	})
}

// TestSharedShardSetNamesNoPipeline runs the traces and metrics processors
// of one ID in two pipelines whose settings inject the Collector's component
// attributes, as the service does with telemetry.newPipelineTelemetry: the
// shard set they share must log and meter as the component, naming neither
// pipeline, and add none of the attributes the Collector injects.
func TestSharedShardSetNamesNoPipeline(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	core, logs := zapobserver.New(zapcore.DebugLevel)
	base := tel.NewTelemetrySettings()
	base.Logger = zap.New(core)
	id := processorSettings().ID
	metricsSet := componenttelemetrytest.Inject(base, componenttelemetrytest.Processor(id, pipeline.NewIDWithName(pipeline.SignalMetrics, "m")))
	tracesSet := componenttelemetrytest.Inject(base, componenttelemetrytest.Processor(id, pipeline.NewIDWithName(pipeline.SignalTraces, "t")))
	startSharedSet(t, metricsSet, tracesSet, logs)

	for _, snippet := range []string{"Sidecar unreachable", "Cannot connect to sidecar"} {
		for _, e := range logs.FilterMessageSnippet(snippet).All() {
			counts := make(map[string]int)
			for _, f := range e.Context {
				counts[f.Key]++
			}
			for key, n := range counts {
				assert.Equal(t, 1, n, "%q logs field %s %d times", e.Message, key, n)
			}
			fields := e.ContextMap()
			assert.Equal(t, "sdpshard/test", fields[componenttelemetry.ComponentIDKey], "%q", e.Message)
			assert.Contains(t, fields, "shard", "%q", e.Message)
			assert.Contains(t, fields, "endpoint", "%q", e.Message)
			for _, k := range []string{componenttelemetry.PipelineIDKey, componenttelemetry.SignalKey} {
				assert.NotContains(t, fields, k, "%q names a pipeline: %v", e.Message, fields)
			}
		}
	}

	var rm metricdata.ResourceMetrics
	require.NoError(t, tel.Reader.Collect(context.Background(), &rm))
	scopes := 0
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != ourScope {
			continue
		}
		scopes++
		want := attribute.NewSet(
			attribute.String(componenttelemetry.ComponentKindKey, "processor"),
			attribute.String(componenttelemetry.ComponentIDKey, "sdpshard/test"))
		assert.True(t, sm.Scope.Attributes.Equals(&want), "scope attributes %v, want %v", sm.Scope.Attributes.ToSlice(), want.ToSlice())
		for _, m := range sm.Metrics {
			for _, attrs := range pointAttributes(t, m) {
				for _, kv := range attrs.ToSlice() {
					assert.False(t, componenttelemetry.IsInjectedKey(string(kv.Key)), "%s: data point attribute %s duplicates an injected one", m.Name, kv.Key)
					assert.NotContains(t, handMadeKeys, string(kv.Key), "%s: hand-made attribute %s", m.Name, kv.Key)
				}
			}
		}
	}
	assert.Equal(t, 1, scopes, "the shared set's metrics must come from one scope, not one per pipeline")
}

// TestIdentityWithoutInjection: when the meter provider injects nothing (the
// Collector's default in v0.165.0), every series carries
// otelcol.component.id on its data points, so that the series of two
// sdpshard processors stay apart, and still no pipeline attribute.
func TestIdentityWithoutInjection(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	core, logs := zapobserver.New(zapcore.DebugLevel)
	set := tel.NewTelemetrySettings()
	set.Logger = zap.New(core)
	startSharedSet(t, set, set, logs)

	var rm metricdata.ResourceMetrics
	require.NoError(t, tel.Reader.Collect(context.Background(), &rm))
	points := 0
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != ourScope {
			continue
		}
		for _, m := range sm.Metrics {
			for _, attrs := range pointAttributes(t, m) {
				points++
				v, ok := attrs.Value(componenttelemetry.ComponentIDKey)
				assert.True(t, ok && v.AsString() == "sdpshard/test", "%s: %v lacks %s", m.Name, attrs.ToSlice(), componenttelemetry.ComponentIDKey)
				for _, kv := range attrs.ToSlice() {
					key := string(kv.Key)
					assert.NotContains(t, handMadeKeys, key, "%s: hand-made attribute %s", m.Name, key)
					assert.False(t, strings.HasPrefix(key, "otelcol.") && key != componenttelemetry.ComponentIDKey,
						"%s: attribute %s names a pipeline", m.Name, key)
				}
			}
		}
	}
	assert.NotZero(t, points, "no data points of %s collected", ourScope)
}

// pointAttributes returns the attribute sets of a metric's data points.
func pointAttributes(t *testing.T, m metricdata.Metrics) []attribute.Set {
	t.Helper()
	var out []attribute.Set
	switch data := m.Data.(type) {
	case metricdata.Sum[int64]:
		for _, dp := range data.DataPoints {
			out = append(out, dp.Attributes)
		}
	case metricdata.Gauge[int64]:
		for _, dp := range data.DataPoints {
			out = append(out, dp.Attributes)
		}
	default:
		t.Fatalf("%s has data %T", m.Name, m.Data)
	}
	return out
}
