// SPDX-License-Identifier: Apache-2.0

package wirecountprocessor

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pipeline"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelcol-sdp/otelcol-sdp/internal/componenttelemetry/componenttelemetrytest"
)

// TestInjectedIdentityIsNotRepeated runs one wirecount ID in a traces and a
// logs pipeline whose settings inject the Collector's attributes, as the
// service does with telemetry.newPipelineTelemetry. Each signal's counts
// must come from its own scope, which names the component and the signal
// but no pipeline (the pre-decode stage counts once for every pipeline a
// receiver feeds), and the data points must carry the group_by keys and
// nothing else. The
// group_by keys are the names of the attributes the processor used to add
// by hand, which no longer clash with anything.
func TestInjectedIdentityIsNotRepeated(t *testing.T) {
	tt := newTelemetry(t)
	cfg := &Config{GroupBy: []string{"processor", "otel.signal"}, MaxGroups: 10}
	settings := func(p pipeline.ID) processor.Settings {
		set := newSettings(tt, "inj")
		set.TelemetrySettings = componenttelemetrytest.Inject(set.TelemetrySettings, componenttelemetrytest.Processor(set.ID, p))
		return set
	}
	tp := startProcessor(t, func() (processor.Traces, error) {
		return NewFactory().CreateTraces(context.Background(), settings(pipeline.NewID(pipeline.SignalTraces)), cfg, consumertest.NewNop())
	})
	lp := startProcessor(t, func() (processor.Logs, error) {
		return NewFactory().CreateLogs(context.Background(), settings(pipeline.NewIDWithName(pipeline.SignalLogs, "audit")), cfg, consumertest.NewNop())
	})

	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("processor", "checkout")
	rs.Resource().Attributes().PutStr("otel.signal", "whatever")
	rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty().SetName("s")
	require.NoError(t, tp.ConsumeTraces(context.Background(), td))
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("processor", "billing")
	logs := rl.ScopeLogs().AppendEmpty().LogRecords()
	logs.AppendEmpty()
	logs.AppendEmpty()
	require.NoError(t, lp.ConsumeLogs(context.Background(), ld))

	var rm metricdata.ResourceMetrics
	require.NoError(t, tt.Reader.Collect(context.Background(), &rm))
	// Items by the scope's signal, then by the data point's attributes.
	got := map[string]map[attribute.Set]int64{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != "github.com/otelcol-sdp/otelcol-sdp/processor/wirecountprocessor" {
			continue
		}
		id, _ := sm.Scope.Attributes.Value("otelcol.component.id")
		assert.Equal(t, "wirecount/inj", id.AsString(), "scope %v", sm.Scope.Attributes.ToSlice())
		if v, ok := sm.Scope.Attributes.Value("otelcol.pipeline.id"); ok {
			t.Errorf("scope names pipeline %s", v.Emit())
		}
		signal, _ := sm.Scope.Attributes.Value("otelcol.signal")
		for _, m := range sm.Metrics {
			if m.Name != itemsMetric {
				continue
			}
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				if got[signal.AsString()] == nil {
					got[signal.AsString()] = map[attribute.Set]int64{}
				}
				got[signal.AsString()][dp.Attributes] += dp.Value
			}
		}
	}
	want := map[string]map[attribute.Set]int64{
		"traces": {attribute.NewSet(attribute.String("processor", "checkout"), attribute.String("otel.signal", "whatever")): 1},
		"logs":   {attribute.NewSet(attribute.String("processor", "billing"), attribute.String("otel.signal", MissingValue)): 2},
	}
	assert.Equal(t, want, got)
}
