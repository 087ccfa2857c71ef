// SPDX-License-Identifier: Apache-2.0

package wirestageextension

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/otelcol-sdp/otelcol-sdp/extension/wirestageextension/internal/metadatatest"
	"github.com/otelcol-sdp/otelcol-sdp/internal/componenttelemetry/componenttelemetrytest"
	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// countLogsRequest creates the extension with settings (inject or not the
// Collector's attributes), runs a two-resource logs request through a
// registered stage and returns what was collected from the extension's
// scope: its attributes, and each metric's data point attribute sets.
func countLogsRequest(t *testing.T, inject bool) (attribute.Set, map[string][]attribute.Set) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := extensiontest.NewNopSettings(extID.Type())
	set.ID = extID
	set.TelemetrySettings = tel.NewTelemetrySettings()
	if inject {
		set.TelemetrySettings = componenttelemetrytest.Inject(set.TelemetrySettings, componenttelemetrytest.Extension(extID))
	}
	e, err := NewFactory().Create(context.Background(), set, &Config{Stages: []component.ID{stageID}})
	require.NoError(t, err)
	require.NoError(t, e.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, e.Shutdown(context.Background())) })
	w := e.(*wireStage)
	unregister, err := w.register(stageID, otlpwire.SignalLogs, &stageRecorder{}, false)
	require.NoError(t, err)
	t.Cleanup(unregister)
	body, err := (&plog.ProtoMarshaler{}).MarshalLogs(logs("a", "b"))
	require.NoError(t, err)
	res := w.run(context.Background(), otlpwire.SignalLogs, body, new(call))
	require.NoError(t, res.err)

	var rm metricdata.ResourceMetrics
	require.NoError(t, tel.Reader.Collect(context.Background(), &rm))
	var scope attribute.Set
	points := map[string][]attribute.Set{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != "github.com/otelcol-sdp/otelcol-sdp/extension/wirestageextension" {
			continue
		}
		scope = sm.Scope.Attributes
		for _, m := range sm.Metrics {
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				points[m.Name] = append(points[m.Name], dp.Attributes)
			}
		}
	}
	return scope, points
}

// TestTelemetryAttributes pins every attribute of the extension's series,
// with and without the Collector injecting its attributes: the signal is
// always the extension's to record (one extension serves all signals), the
// component ID only when the Collector does not inject it, and nothing else
// names the extension.
func TestTelemetryAttributes(t *testing.T) {
	signal := attribute.String("otelcol.signal", "logs")
	passed := attribute.String("outcome", "passed")
	for _, tc := range []struct {
		name     string
		inject   bool
		scope    attribute.Set
		identity []attribute.KeyValue
	}{
		{
			name:     "gate_off",
			identity: []attribute.KeyValue{attribute.String("otelcol.component.id", "wirestage/test")},
		},
		{
			name:   "gate_on",
			inject: true,
			scope: attribute.NewSet(attribute.String("otelcol.component.kind", "extension"),
				attribute.String("otelcol.component.id", "wirestage/test")),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scope, points := countLogsRequest(t, tc.inject)
			assert.True(t, scope.Equals(&tc.scope), "scope attributes %v, want %v", scope.ToSlice(), tc.scope.ToSlice())
			want := map[string][]attribute.Set{
				"otelcol_extension_wirestage_items":    {attribute.NewSet(append(tc.identity, signal)...)},
				"otelcol_extension_wirestage_requests": {attribute.NewSet(append(tc.identity, signal, passed)...)},
			}
			assert.Equal(t, want, points)
		})
	}
}

// TestRequestCountsTelemetry pins the per-request metrics, which run keeps
// in atomic counters that the meter reads when it collects: each series
// holds the cumulative, monotonic count of what run saw, under the name,
// unit and attributes the synchronous counters had; a series exists once
// a request recorded it (a request without items records an items series
// of zero) and not before; after Shutdown the final counts are still
// reported, for the last export of a push exporter.
func TestRequestCountsTelemetry(t *testing.T) {
	w, tel := startedWithTelemetry(t)

	// The stage refuses a request holding a resource named retry or bad,
	// and diverts the resources whose name starts with d.
	stage := StageFunc(func(_ context.Context, req otlpwire.Request) (Result, error) {
		var keep []int
		i := 0
		for rd, err := range req.Resources() {
			if err != nil {
				return Result{}, err
			}
			res, err := rd.Resource()
			if err != nil {
				return Result{}, err
			}
			name, _, err := res.Attribute("service.name")
			if err != nil {
				return Result{}, err
			}
			switch n := name.Str(); {
			case n == "retry":
				return Result{}, errors.New("try again")
			case n == "bad":
				return Result{}, consumererror.NewPermanent(errors.New("never"))
			case !strings.HasPrefix(n, "d"):
				keep = append(keep, i)
			}
			i++
		}
		return Result{Divert: i != len(keep), Keep: keep}, nil
	})
	for _, sig := range []otlpwire.Signal{otlpwire.SignalTraces, otlpwire.SignalLogs} {
		_, err := w.register(stageID, sig, stage, true)
		require.NoError(t, err)
	}
	noRecords := plog.NewLogs()
	noRecords.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
	emptyLogs, err := (&plog.ProtoMarshaler{}).MarshalLogs(noRecords)
	require.NoError(t, err)
	for _, r := range []struct {
		sig  otlpwire.Signal
		body []byte
	}{
		{otlpwire.SignalTraces, marshal(t, traces(2, "a", "d1"))}, // passed: 4 items, 2 diverted
		{otlpwire.SignalTraces, marshal(t, traces(2, "d2"))},      // diverted: 2 items, 2 diverted
		{otlpwire.SignalTraces, marshal(t, traces(1, "retry"))},   // refused_retryable: 1 item
		{otlpwire.SignalTraces, marshal(t, traces(1, "bad"))},     // refused_permanent: 1 item
		{otlpwire.SignalTraces, []byte{0xff}},                     // malformed: no items
		{otlpwire.SignalLogs, emptyLogs},                          // passed: 0 items
	} {
		w.run(context.Background(), r.sig, r.body, new(call))
	}

	id := attribute.String("otelcol.component.id", "wirestage/test")
	tracesSig := attribute.String("otelcol.signal", "traces")
	logsSig := attribute.String("otelcol.signal", "logs")
	point := func(v int64, kvs ...attribute.KeyValue) metricdata.DataPoint[int64] {
		return metricdata.DataPoint[int64]{Value: v, Attributes: attribute.NewSet(append([]attribute.KeyValue{id}, kvs...)...)}
	}
	outcome := func(o string) attribute.KeyValue { return attribute.String("outcome", o) }
	metadatatest.AssertEqualExtensionWirestageRequests(t, tel, []metricdata.DataPoint[int64]{
		point(1, tracesSig, outcome(outcomePassed)),
		point(1, tracesSig, outcome(outcomeDiverted)),
		point(1, tracesSig, outcome(outcomeRefusedRetryable)),
		point(1, tracesSig, outcome(outcomeRefusedPermanent)),
		point(1, tracesSig, outcome(outcomeMalformed)),
		point(1, logsSig, outcome(outcomePassed)),
	}, metricdatatest.IgnoreTimestamp())
	assertItems := func() {
		t.Helper()
		metadatatest.AssertEqualExtensionWirestageItems(t, tel, []metricdata.DataPoint[int64]{
			point(8, tracesSig),
			point(0, logsSig),
		}, metricdatatest.IgnoreTimestamp())
		metadatatest.AssertEqualExtensionWirestageDivertedItems(t, tel, []metricdata.DataPoint[int64]{
			point(4, tracesSig),
		}, metricdatatest.IgnoreTimestamp())
	}
	assertItems()

	require.NoError(t, w.Shutdown(context.Background()))
	assertItems()
}
