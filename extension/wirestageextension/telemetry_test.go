// SPDX-License-Identifier: Apache-2.0

package wirestageextension

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

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
