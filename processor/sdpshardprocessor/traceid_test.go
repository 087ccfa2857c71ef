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
	at := map[string]map[int]bool{}
	resources := 0
	for i, rec := range recs {
		for _, rf := range rec.snapshot() {
			sent, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(rf.frame.OTLP)
			require.NoError(t, err)
			svc, _ := sent.ResourceSpans().At(0).Resource().Attributes().Get("service.name")
			if at[svc.Str()] == nil {
				at[svc.Str()] = map[int]bool{}
			}
			at[svc.Str()][i] = true
			resources++
		}
	}
	assert.Equal(t, 40, resources)
	assert.Len(t, at, 6)
	used := map[int]bool{}
	for svc, sidecars := range at {
		assert.Len(t, sidecars, 1, "service %s on sidecars %v", svc, sidecars)
		for i := range sidecars {
			used[i] = true
		}
	}
	assert.Greater(t, len(used), 1, "every service on one sidecar: the key does not spread")
}

// With routing_key metric every metric's points reach one sidecar.
func TestRoutingKeyMetricKeepsEachMetricOnOneSidecar(t *testing.T) {
	recs, cfg := keyedSidecars(t, RoutingKeyMetric)
	require.NoError(t, cfg.Validate())
	p, err := newRegistry().createMetrics(context.Background(), testSettings(nil), cfg, new(consumertest.MetricsSink))
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, p.Shutdown(context.Background())) })

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
	at := map[string]map[int]bool{}
	points := 0
	for i, rec := range recs {
		for _, rf := range rec.snapshot() {
			sent, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(rf.frame.OTLP)
			require.NoError(t, err)
			points += sent.DataPointCount()
			for _, m := range sent.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().All() {
				if at[m.Name()] == nil {
					at[m.Name()] = map[int]bool{}
				}
				at[m.Name()][i] = true
			}
		}
	}
	assert.Equal(t, 54, points)
	assert.Len(t, at, 9)
	for name, sidecars := range at {
		assert.Len(t, sidecars, 1, "metric %s on sidecars %v", name, sidecars)
	}
}

// With routing_key streamID every point of a series reaches one sidecar
// and a metric's series spread.
func TestRoutingKeyStreamIDKeepsEachSeriesOnOneSidecar(t *testing.T) {
	recs, cfg := keyedSidecars(t, RoutingKeyStreamID)
	require.NoError(t, cfg.Validate())
	p, err := newRegistry().createMetrics(context.Background(), testSettings(nil), cfg, new(consumertest.MetricsSink))
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, p.Shutdown(context.Background())) })

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
	at := map[string]map[int]bool{}
	points := 0
	for i, rec := range recs {
		for _, rf := range rec.snapshot() {
			sent, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(rf.frame.OTLP)
			require.NoError(t, err)
			for _, dp := range sent.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().At(0).Gauge().DataPoints().All() {
				host, _ := dp.Attributes().Get("host")
				if at[host.Str()] == nil {
					at[host.Str()] = map[int]bool{}
				}
				at[host.Str()][i] = true
				points++
			}
		}
	}
	assert.Equal(t, 36, points)
	used := map[int]bool{}
	for host, sidecars := range at {
		assert.Len(t, sidecars, 1, "series of %s on sidecars %v", host, sidecars)
		for i := range sidecars {
			used[i] = true
		}
	}
	assert.Greater(t, len(used), 1, "the series did not spread")
}
