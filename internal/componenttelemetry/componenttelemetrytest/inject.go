// SPDX-License-Identifier: Apache-2.0

// Package componenttelemetrytest stands in for the Collector's service in
// tests: it wraps a component's telemetry settings so that they inject the
// component attributes the way Collector v0.165.0 does with the feature gate
// telemetry.newPipelineTelemetry (the service's own wrappers are internal to
// it). The behaviour it reproduces, checked against the Collector's sources:
//
//   - the logger's core adds the attributes as fields to every entry, and
//     answers DropInjectedAttributes(keys...) with a core built again from
//     the unwrapped one, with the remaining attributes and the fields added
//     by With since;
//   - the meter provider adds the attributes to the instrumentation scope
//     of every meter it creates (a meter's own scope attributes win), and
//     answers DropInjectedAttributes(keys...) with a provider adding only
//     the remaining ones.
package componenttelemetrytest

import (
	"slices"
	"strings"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pipeline"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/otelcol-sdp/otelcol-sdp/internal/componenttelemetry"
)

// Processor returns the attributes the Collector injects for processor id
// in pipeline p.
func Processor(id component.ID, p pipeline.ID) []attribute.KeyValue {
	return []attribute.KeyValue{
		attribute.String(componenttelemetry.ComponentKindKey, strings.ToLower(component.KindProcessor.String())),
		attribute.String(componenttelemetry.SignalKey, p.Signal().String()),
		attribute.String(componenttelemetry.PipelineIDKey, p.String()),
		attribute.String(componenttelemetry.ComponentIDKey, id.String()),
	}
}

// Extension returns the attributes the Collector injects for extension id.
func Extension(id component.ID) []attribute.KeyValue {
	return []attribute.KeyValue{
		attribute.String(componenttelemetry.ComponentKindKey, strings.ToLower(component.KindExtension.String())),
		attribute.String(componenttelemetry.ComponentIDKey, id.String()),
	}
}

// Inject returns ts with a logger and a meter provider that inject attrs.
func Inject(ts component.TelemetrySettings, attrs []attribute.KeyValue) component.TelemetrySettings {
	ts.Logger = ts.Logger.WithOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core {
		return newCore(c, attrs, nil)
	}))
	ts.MeterProvider = meterProvider{inner: ts.MeterProvider, attrs: attrs}
	return ts
}

func without(attrs []attribute.KeyValue, keys []string) []attribute.KeyValue {
	return slices.DeleteFunc(slices.Clone(attrs), func(kv attribute.KeyValue) bool {
		return slices.Contains(keys, string(kv.Key))
	})
}

// core injects attrs into every entry of unwrapped.
type core struct {
	zapcore.Core // unwrapped with the attributes and the With fields
	unwrapped    zapcore.Core
	attrs        []attribute.KeyValue
	with         []zapcore.Field
}

func newCore(unwrapped zapcore.Core, attrs []attribute.KeyValue, with []zapcore.Field) core {
	fields := make([]zapcore.Field, 0, len(attrs)+len(with))
	for _, kv := range attrs {
		fields = append(fields, zap.String(string(kv.Key), kv.Value.Emit()))
	}
	fields = append(fields, with...)
	return core{Core: unwrapped.With(fields), unwrapped: unwrapped, attrs: attrs, with: with}
}

func (c core) With(fields []zapcore.Field) zapcore.Core {
	c.with = append(slices.Clip(c.with), fields...)
	c.Core = c.Core.With(fields)
	return c
}

// DropInjectedAttributes is the method the Collector's core exposes.
func (c core) DropInjectedAttributes(keys ...string) zapcore.Core {
	return newCore(c.unwrapped, without(c.attrs, keys), c.with)
}

// meterProvider adds attrs to the scope of every meter of inner.
type meterProvider struct {
	metric.MeterProvider // never called: the methods below cover it
	inner                metric.MeterProvider
	attrs                []attribute.KeyValue
}

func (mp meterProvider) Meter(name string, opts ...metric.MeterOption) metric.Meter {
	own := metric.NewMeterConfig(opts...).InstrumentationAttributes()
	scope := append(slices.Clone(mp.attrs), own.ToSlice()...)
	return mp.inner.Meter(name, append(opts, metric.WithInstrumentationAttributes(scope...))...)
}

// DropInjectedAttributes is the method the Collector's meter provider
// exposes.
func (mp meterProvider) DropInjectedAttributes(keys ...string) metric.MeterProvider {
	return meterProvider{inner: mp.inner, attrs: without(mp.attrs, keys)}
}
