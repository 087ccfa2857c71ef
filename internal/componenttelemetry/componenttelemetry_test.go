// SPDX-License-Identifier: Apache-2.0

package componenttelemetry_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pipeline"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-sdp/otelcol-sdp/internal/componenttelemetry"
	"github.com/otelcol-sdp/otelcol-sdp/internal/componenttelemetry/componenttelemetrytest"
)

var (
	procID    = component.MustNewIDWithName("sdpshard", "a")
	tracesID  = pipeline.NewIDWithName(pipeline.SignalTraces, "in")
	scopeName = "componenttelemetry_test"
)

func TestDropPipelineAttributesKeepsTheComponentsOwn(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	core, logs := observer.New(zap.DebugLevel)
	ts := tel.NewTelemetrySettings()
	ts.Logger = zap.New(core)
	ts = componenttelemetrytest.Inject(ts, componenttelemetrytest.Processor(procID, tracesID))
	before := ts.Logger.With(zap.String("mine", "kept"))

	dropped := componenttelemetry.DropPipelineAttributes(component.TelemetrySettings{
		Logger: before, MeterProvider: ts.MeterProvider, TracerProvider: ts.TracerProvider,
	})
	dropped.Logger.Info("shared")
	before.Info("per pipeline")

	entries := logs.All()
	if len(entries) != 2 {
		t.Fatalf("got %d log entries, want 2", len(entries))
	}
	want := map[string]string{
		componenttelemetry.ComponentIDKey:   "sdpshard/a",
		componenttelemetry.ComponentKindKey: "processor",
		"mine":                              "kept",
	}
	if got := fieldCounts(entries[0]); !sameCounts(got, want) {
		t.Errorf("shared logger fields = %v, want each of %v once and nothing else", got, keys(want))
	}
	ctx := entries[0].ContextMap()
	for k, v := range want {
		if ctx[k] != v {
			t.Errorf("shared logger field %s = %v, want %q", k, ctx[k], v)
		}
	}
	// The logger it was derived from is untouched.
	if got := entries[1].ContextMap()[componenttelemetry.PipelineIDKey]; got != "traces/in" {
		t.Errorf("original logger lost %s: %v", componenttelemetry.PipelineIDKey, got)
	}

	counter, err := dropped.MeterProvider.Meter(scopeName).Int64Counter("c")
	if err != nil {
		t.Fatal(err)
	}
	counter.Add(context.Background(), 1)
	scope := scopeOf(t, tel, "c")
	if _, ok := scope.Value(componenttelemetry.ComponentIDKey); !ok {
		t.Errorf("scope attributes %v lost %s", scope.ToSlice(), componenttelemetry.ComponentIDKey)
	}
	for _, k := range []string{componenttelemetry.SignalKey, componenttelemetry.PipelineIDKey} {
		if v, ok := scope.Value(attribute.Key(k)); ok {
			t.Errorf("scope attribute %s = %v survived DropPipelineAttributes", k, v.Emit())
		}
	}
}

func TestDropPipelineAttributesLeavesPlainSettingsAlone(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	core, logs := observer.New(zap.DebugLevel)
	ts := tel.NewTelemetrySettings()
	ts.Logger = zap.New(core).With(zap.String("mine", "kept"))
	got := componenttelemetry.DropPipelineAttributes(ts)
	if got.MeterProvider != ts.MeterProvider {
		t.Error("the meter provider of plain settings was replaced")
	}
	got.Logger.Info("x")
	if f := fieldCounts(logs.All()[0]); !sameCounts(f, map[string]string{"mine": ""}) {
		t.Errorf("fields = %v, want only mine", f)
	}
}

func TestIdentityOnlyWhenTheMeterDoesNotInject(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	plain := tel.NewTelemetrySettings()
	got := attribute.NewSet(componenttelemetry.Identity(plain, procID, "traces")...)
	want := attribute.NewSet(
		attribute.String(componenttelemetry.ComponentIDKey, "sdpshard/a"),
		attribute.String(componenttelemetry.SignalKey, "traces"))
	if !got.Equals(&want) {
		t.Errorf("Identity without injection = %v, want %v", got.ToSlice(), want.ToSlice())
	}
	if got := componenttelemetry.Identity(plain, procID, ""); len(got) != 1 || got[0].Key != componenttelemetry.ComponentIDKey {
		t.Errorf("Identity without a signal = %v, want only %s", got, componenttelemetry.ComponentIDKey)
	}
	inj := componenttelemetrytest.Inject(plain, componenttelemetrytest.Processor(procID, tracesID))
	if got := componenttelemetry.Identity(inj, procID, "traces"); got != nil {
		t.Errorf("Identity with an injecting meter provider = %v, want nil", got)
	}
	if got := componenttelemetry.Identity(componenttelemetry.DropPipelineAttributes(inj), procID, ""); got != nil {
		t.Errorf("Identity after DropPipelineAttributes = %v, want nil: the component ID is still injected", got)
	}
}

func TestIsInjectedKey(t *testing.T) {
	for key, want := range map[string]bool{
		"otelcol.component.id":   true,
		"otelcol.component.kind": true,
		"otelcol.pipeline.id":    true,
		"otelcol.signal":         true,
		"otelcol.signal.output":  true,
		"otel.signal":            false,
		"processor":              false,
		"service.name":           false,
		"otelcol.signal.x":       false,
	} {
		if got := componenttelemetry.IsInjectedKey(key); got != want {
			t.Errorf("IsInjectedKey(%q) = %v, want %v", key, got, want)
		}
	}
}

// fieldCounts counts the context fields of an entry by key.
func fieldCounts(e observer.LoggedEntry) map[string]int {
	n := make(map[string]int)
	for _, f := range e.Context {
		n[f.Key]++
	}
	return n
}

// sameCounts reports whether got holds exactly the keys of want, once each.
func sameCounts(got map[string]int, want map[string]string) bool {
	if len(got) != len(want) {
		return false
	}
	for k := range want {
		if got[k] != 1 {
			return false
		}
	}
	return true
}

func keys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// scopeOf returns the scope attributes of the scope holding metric name.
func scopeOf(t *testing.T, tel *componenttest.Telemetry, name string) attribute.Set {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := tel.Reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				return sm.Scope.Attributes
			}
		}
	}
	t.Fatalf("metric %s not collected", name)
	return attribute.Set{}
}

func TestDropOnlyTheNamedKeys(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	core, logs := observer.New(zap.DebugLevel)
	ts := tel.NewTelemetrySettings()
	ts.Logger = zap.New(core)
	ts = componenttelemetrytest.Inject(ts, componenttelemetrytest.Processor(procID, tracesID))
	dropped := componenttelemetry.Drop(ts, componenttelemetry.PipelineIDKey)
	dropped.Logger.Info("x")
	want := map[string]string{
		componenttelemetry.ComponentIDKey:   "",
		componenttelemetry.ComponentKindKey: "",
		componenttelemetry.SignalKey:        "",
	}
	if got := fieldCounts(logs.All()[0]); !sameCounts(got, want) {
		t.Errorf("fields after dropping %s = %v, want each of %v once", componenttelemetry.PipelineIDKey, got, keys(want))
	}
	counter, err := dropped.MeterProvider.Meter(scopeName).Int64Counter("d")
	if err != nil {
		t.Fatal(err)
	}
	counter.Add(context.Background(), 1)
	scope := scopeOf(t, tel, "d")
	if v, ok := scope.Value(componenttelemetry.SignalKey); !ok || v.AsString() != "traces" {
		t.Errorf("scope %v lost %s", scope.ToSlice(), componenttelemetry.SignalKey)
	}
	if _, ok := scope.Value(componenttelemetry.PipelineIDKey); ok {
		t.Errorf("scope %v kept %s", scope.ToSlice(), componenttelemetry.PipelineIDKey)
	}
}
