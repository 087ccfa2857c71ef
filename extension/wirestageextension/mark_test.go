// SPDX-License-Identifier: Apache-2.0

package wirestageextension

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// stagedRequest runs two stages (stageID keeping the resources in keep,
// countID keeping all) on a request of three resources and returns the
// context the receiver would pass on and the data it would decode.
func stagedRequest(t *testing.T, keep []int) (context.Context, ptrace.Traces) {
	t.Helper()
	w, err := newWireStage(settingsFor(t), &Config{Stages: []component.ID{stageID, countID}, DivertAllPipelines: true, RetryAfter: time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, w.Shutdown(context.Background())) })
	_, err = w.register(stageID, otlpwire.SignalTraces, &stageRecorder{divert: keep != nil, keep: keep}, true)
	require.NoError(t, err)
	_, err = w.register(countID, otlpwire.SignalTraces, &stageRecorder{}, false)
	require.NoError(t, err)
	res := w.run(context.Background(), otlpwire.SignalTraces, marshal(t, traces(2, "a", "b", "c")), &call{})
	require.NoError(t, res.err)
	td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(res.body)
	require.NoError(t, err)
	return withRan(context.Background(), res.ran), td
}

func TestStagedIdentifiesTheRequest(t *testing.T) {
	for name, keep := range map[string][]int{"tee": nil, "divert": {0, 2}} {
		t.Run(name, func(t *testing.T) {
			ctx, td := stagedRequest(t, keep)
			assert.True(t, StagedTraces(ctx, stageID, td), "the data the receiver decoded")
			assert.True(t, StagedTraces(ctx, countID, td), "the data the receiver decoded")
			assert.False(t, StagedTraces(ctx, component.MustNewIDWithName("sdpshard", "other"), td), "a processor without a stage")
			assert.False(t, StagedTraces(context.Background(), stageID, td), "a context without the mark")

			// Other signals made from the request (count, spanmetrics...).
			md := pmetric.NewMetrics()
			md.ResourceMetrics().AppendEmpty()
			assert.False(t, StagedMetrics(ctx, stageID, md))
			assert.False(t, StagedLogs(ctx, stageID, plog.NewLogs()))

			// Traces made from the request that are not what it decoded to:
			// a subset (routing), one resource more, fewer spans.
			subset := ptrace.NewTraces()
			td.ResourceSpans().At(0).CopyTo(subset.ResourceSpans().AppendEmpty())
			assert.False(t, StagedTraces(ctx, stageID, subset))
			more := ptrace.NewTraces()
			td.CopyTo(more)
			more.ResourceSpans().AppendEmpty()
			assert.False(t, StagedTraces(ctx, stageID, more))
			less := ptrace.NewTraces()
			td.CopyTo(less)
			spans := less.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
			spans.RemoveIf(func(ptrace.Span) bool { return true })
			assert.False(t, StagedTraces(ctx, stageID, less))
		})
	}
}

// TestPassOnEndsTheMarkOfOneProcessor: what a processor passes on no longer
// carries its own mark (a processor of the same ID behind a connector
// processes it), but still carries the marks of the stages after it, and
// the context the receiver holds for its other pipelines is unchanged.
func TestPassOnEndsTheMarkOfOneProcessor(t *testing.T) {
	ctx, td := stagedRequest(t, nil)
	var passed context.Context
	next, err := consumer.NewTraces(func(ctx context.Context, _ ptrace.Traces) error {
		passed = ctx
		return nil
	}, consumer.WithCapabilities(consumer.Capabilities{MutatesData: true}))
	require.NoError(t, err)
	wrapped := PassOnTraces(next, stageID)
	assert.True(t, wrapped.Capabilities().MutatesData, "the wrapper keeps the next consumer's capabilities")
	require.NoError(t, wrapped.ConsumeTraces(ctx, td))
	assert.False(t, StagedTraces(passed, stageID, td))
	assert.True(t, StagedTraces(passed, countID, td))
	assert.True(t, StagedTraces(ctx, stageID, td), "the receiver's context keeps the mark for its other pipelines")

	// Passing on again, or passing on a context without the mark, is a no-op.
	require.NoError(t, PassOnTraces(next, stageID).ConsumeTraces(passed, td))
	assert.True(t, StagedTraces(passed, countID, td))
	plain := context.WithValue(context.Background(), ranKey{}, (*ran)(nil))
	assert.Equal(t, plain, passOn(plain, stageID))

	metrics := new(consumertest.MetricsSink)
	require.NoError(t, PassOnMetrics(metrics, stageID).ConsumeMetrics(ctx, pmetric.NewMetrics()))
	assert.False(t, StagedMetrics(metrics.Contexts()[0], stageID, pmetric.NewMetrics()))
	logs := new(consumertest.LogsSink)
	require.NoError(t, PassOnLogs(logs, countID).ConsumeLogs(ctx, plog.NewLogs()))
	assert.Nil(t, markOf(logs.Contexts()[0], countID, otlpwire.SignalTraces), "count's mark was passed on")
	assert.NotNil(t, markOf(logs.Contexts()[0], stageID, otlpwire.SignalTraces))
}
