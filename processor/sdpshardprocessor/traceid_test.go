// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
)

// keyedSidecars starts three sidecars and returns their recorders and a
// configuration over them with routing key key.
func keyedSidecars(t *testing.T, key RoutingKey) ([]*recorder, *Config) {
	endpoints := newEndpoints(t, "unix", 3)
	var recs []*recorder
	for _, e := range endpoints {
		rec := newRecorder()
		startSidecar(t, e, rec)
		recs = append(recs, rec)
	}
	cfg := testConfig(endpoints)
	cfg.RoutingKey = key
	return recs, cfg
}

// startKeyed starts a traces processor with cfg, passing on to next.
func startKeyed(t *testing.T, cfg *Config, next *consumertest.TracesSink) processor.Traces {
	require.NoError(t, cfg.Validate())
	p, err := newRegistry().createTraces(context.Background(), testSettings(nil), cfg, next)
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, p.Shutdown(context.Background())) })
	return p
}

// startKeyedMetrics starts a metrics processor with cfg.
func startKeyedMetrics(t *testing.T, cfg *Config) processor.Metrics {
	require.NoError(t, cfg.Validate())
	p, err := newRegistry().createMetrics(context.Background(), testSettings(nil), cfg, new(consumertest.MetricsSink))
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, p.Shutdown(context.Background())) })
	return p
}

// placement records which sidecars received items of each key.
type placement map[string]map[int]bool

func (pl placement) add(key string, sidecar int) {
	if pl[key] == nil {
		pl[key] = map[int]bool{}
	}
	pl[key][sidecar] = true
}

// assertOnOneSidecar checks that every key's items reached one sidecar and
// returns the sidecars used.
func (pl placement) assertOnOneSidecar(t *testing.T, what string) map[int]bool {
	t.Helper()
	used := map[int]bool{}
	for key, sidecars := range pl {
		assert.Len(t, sidecars, 1, "%s %s on sidecars %v", what, key, sidecars)
		for i := range sidecars {
			used[i] = true
		}
	}
	return used
}

// With routing_key traceID every trace's spans reach one sidecar, each
// frame holding its resource whole, in both modes' pipelines.
func TestRoutingKeyTraceIDKeepsEachTraceOnOneSidecar(t *testing.T) {
	recs, cfg := keyedSidecars(t, RoutingKeyTraceID)
	cfg.Mode = ModeDivert
	next := new(consumertest.TracesSink)
	p := startKeyed(t, cfg, next)

	td := tracesOfFiveTraces()
	require.NoError(t, p.ConsumeTraces(context.Background(), td))
	assert.Zero(t, next.SpanCount(), "divert passed spans on")
	assertEachTraceOnOneSidecar(t, recs, td.SpanCount())
}

// tracesOfFiveTraces returns 8 resources of 12 spans each, whose spans
// belong to 5 traces that cross every resource.
func tracesOfFiveTraces() ptrace.Traces {
	td := ptrace.NewTraces()
	for r := range 8 {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", fmt.Sprintf("svc-%d", r))
		rs.Resource().Attributes().PutStr("host.name", "h")
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName("s")
		for s := range 12 {
			sp := ss.Spans().AppendEmpty()
			sp.SetName(fmt.Sprintf("r%d-s%d", r, s))
			sp.SetTraceID(pcommon.TraceID{byte(s % 5), 7, byte(s % 5), 1})
		}
	}
	return td
}

// assertEachTraceOnOneSidecar checks that the sidecars received spans
// spans of tracesOfFiveTraces, each trace on one sidecar, in frames that
// hold their resource whole.
func assertEachTraceOnOneSidecar(t *testing.T, recs []*recorder, spans int) {
	t.Helper()
	at := map[pcommon.TraceID]map[int]bool{}
	got := 0
	for i, rec := range recs {
		for _, rf := range rec.snapshot() {
			sent, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(rf.frame.OTLP)
			require.NoError(t, err)
			rs := sent.ResourceSpans().At(0)
			host, _ := rs.Resource().Attributes().Get("host.name")
			assert.Equal(t, "h", host.Str(), "resource not whole")
			for _, sp := range rs.ScopeSpans().At(0).Spans().All() {
				got++
				if at[sp.TraceID()] == nil {
					at[sp.TraceID()] = map[int]bool{}
				}
				at[sp.TraceID()][i] = true
			}
		}
	}
	assert.Equal(t, spans, got)
	assert.Len(t, at, 5)
	for id, sidecars := range at {
		assert.Len(t, sidecars, 1, "trace %x on sidecars %v", id, sidecars)
	}
}

// With routing_key service every resource of a service reaches one
// sidecar, whatever its other attributes.
func TestRoutingKeyServiceKeepsEachServiceOnOneSidecar(t *testing.T) {
	recs, cfg := keyedSidecars(t, RoutingKeyService)
	p := startKeyed(t, cfg, new(consumertest.TracesSink))

	td := ptrace.NewTraces()
	for r := range 40 {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", fmt.Sprintf("svc-%d", r%6))
		rs.Resource().Attributes().PutStr("host.name", fmt.Sprintf("host-%d", r))
		rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty().SetName("op")
	}
	require.NoError(t, p.ConsumeTraces(context.Background(), td))
	at := placement{}
	resources := 0
	for i, rec := range recs {
		for _, rf := range rec.snapshot() {
			sent, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(rf.frame.OTLP)
			require.NoError(t, err)
			svc, _ := sent.ResourceSpans().At(0).Resource().Attributes().Get("service.name")
			at.add(svc.Str(), i)
			resources++
		}
	}
	assert.Equal(t, 40, resources)
	assert.Len(t, at, 6)
	assert.Greater(t, len(at.assertOnOneSidecar(t, "service")), 1, "every service on one sidecar: the key does not spread")
}

// With routing_key metric every metric's points reach one sidecar.
func TestRoutingKeyMetricKeepsEachMetricOnOneSidecar(t *testing.T) {
	recs, cfg := keyedSidecars(t, RoutingKeyMetric)
	p := startKeyedMetrics(t, cfg)

	md := pmetric.NewMetrics()
	for r := range 6 {
		rm := md.ResourceMetrics().AppendEmpty()
		rm.Resource().Attributes().PutStr("service.name", fmt.Sprintf("svc-%d", r))
		sm := rm.ScopeMetrics().AppendEmpty()
		for m := range 9 {
			metric := sm.Metrics().AppendEmpty()
			metric.SetName(fmt.Sprintf("metric.%d", m))
			metric.SetEmptySum().DataPoints().AppendEmpty().SetIntValue(int64(r))
		}
	}
	require.NoError(t, p.ConsumeMetrics(context.Background(), md))
	at := placement{}
	points := 0
	for i, rec := range recs {
		for _, rf := range rec.snapshot() {
			sent, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(rf.frame.OTLP)
			require.NoError(t, err)
			points += sent.DataPointCount()
			for _, m := range sent.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().All() {
				at.add(m.Name(), i)
			}
		}
	}
	assert.Equal(t, 54, points)
	assert.Len(t, at, 9)
	at.assertOnOneSidecar(t, "metric")
}

// With routing_key streamID every point of a series reaches one sidecar
// and a metric's series spread.
func TestRoutingKeyStreamIDKeepsEachSeriesOnOneSidecar(t *testing.T) {
	recs, cfg := keyedSidecars(t, RoutingKeyStreamID)
	p := startKeyedMetrics(t, cfg)

	md := pmetric.NewMetrics()
	for round := range 3 {
		rm := md.ResourceMetrics().AppendEmpty()
		rm.Resource().Attributes().PutStr("service.name", "svc")
		g := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
		g.SetName("queue.depth")
		gauge := g.SetEmptyGauge()
		for h := range 12 {
			dp := gauge.DataPoints().AppendEmpty()
			dp.Attributes().PutStr("host", fmt.Sprintf("h%d", h))
			dp.SetIntValue(int64(round))
		}
	}
	require.NoError(t, p.ConsumeMetrics(context.Background(), md))
	at := placement{}
	points := 0
	for i, rec := range recs {
		for _, rf := range rec.snapshot() {
			sent, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(rf.frame.OTLP)
			require.NoError(t, err)
			for _, dp := range sent.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().At(0).Gauge().DataPoints().All() {
				host, _ := dp.Attributes().Get("host")
				at.add(host.Str(), i)
				points++
			}
		}
	}
	assert.Equal(t, 36, points)
	assert.Greater(t, len(at.assertOnOneSidecar(t, "series of host")), 1, "the series did not spread")
}
