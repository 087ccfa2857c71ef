// SPDX-License-Identifier: Apache-2.0

package wirecountprocessor

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-sdp/otelcol-sdp/processor/wirecountprocessor/internal/metadata"
)

type contextMarker struct{}

// TestContextReachesNextConsumer checks that the request context a receiver
// passes in reaches the next consumer unchanged for every signal: the
// pre-decode stage marks requests in their context, and a processor that
// dropped or replaced it would make the processors after it redo the stage's
// work. (mdatagen v0.159.0's generated tests do not check this.)
func TestContextReachesNextConsumer(t *testing.T) {
	f := NewFactory()
	cfg := f.CreateDefaultConfig()
	host := componenttest.NewNopHost()
	ctx := context.WithValue(context.Background(), contextMarker{}, "request-1")
	check := func(t *testing.T, got []context.Context) {
		t.Helper()
		if len(got) != 1 {
			t.Fatalf("next consumer was called %d times, want 1", len(got))
		}
		if v := got[0].Value(contextMarker{}); v != "request-1" {
			t.Errorf("next consumer's context holds %v, want the caller's value request-1", v)
		}
	}

	t.Run("traces", func(t *testing.T) {
		sink := new(consumertest.TracesSink)
		p, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, sink)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Start(context.Background(), host); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = p.Shutdown(context.Background()) }()
		td := ptrace.NewTraces()
		td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty().SetName("s")
		if err := p.ConsumeTraces(ctx, td); err != nil {
			t.Fatal(err)
		}
		check(t, sink.Contexts())
	})
	t.Run("metrics", func(t *testing.T) {
		sink := new(consumertest.MetricsSink)
		p, err := f.CreateMetrics(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, sink)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Start(context.Background(), host); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = p.Shutdown(context.Background()) }()
		md := pmetric.NewMetrics()
		m := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
		m.SetName("m")
		m.SetEmptyGauge().DataPoints().AppendEmpty().SetIntValue(1)
		if err := p.ConsumeMetrics(ctx, md); err != nil {
			t.Fatal(err)
		}
		check(t, sink.Contexts())
	})
	t.Run("logs", func(t *testing.T) {
		sink := new(consumertest.LogsSink)
		p, err := f.CreateLogs(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, sink)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Start(context.Background(), host); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = p.Shutdown(context.Background()) }()
		ld := plog.NewLogs()
		ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body().SetStr("l")
		if err := p.ConsumeLogs(ctx, ld); err != nil {
			t.Fatal(err)
		}
		check(t, sink.Contexts())
	})
}
