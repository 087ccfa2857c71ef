// SPDX-License-Identifier: Apache-2.0

// Package componenttelemetry applies the Collector's conventions for the
// telemetry of a component to the components of this module.
//
// The Collector identifies the component behind each log line and metric
// itself: its service wraps the logger, tracer provider and meter provider
// it hands each component (component.TelemetrySettings) so that they carry
// the attributes named by the *Key constants below, as log fields and as
// instrumentation scope attributes. Components must not add attributes of
// their own for the same facts.
//
// Two gaps remain, and this package closes them:
//
//   - A component shared by several pipelines (one instance behind the
//     traces, metrics and logs processors of one ID) receives the settings
//     of whichever pipeline created it first; its telemetry must not carry
//     that pipeline's attributes. DropPipelineAttributes (or Drop, for
//     some of them) removes them, the way the Collector's own
//     memory_limiter processor does.
//
//   - In Collector v0.165.0 the meter provider carries the attributes only
//     with the alpha feature gate telemetry.newPipelineTelemetry; the logger
//     always does. Without the gate every instance of a component type
//     records into the same instruments, so their series would merge.
//     Identity returns, for that case only, the same attributes to record on
//     each data point; with the gate it returns nothing.
//
// The Collector's wrappers expose what is needed through one exported method,
// DropInjectedAttributes, on the zap core, tracer provider and meter provider
// they return; the interfaces naming it live in an internal package of the
// Collector. This package declares the same method sets and asserts them, so
// it depends only on exported behaviour, and does nothing when the settings
// come from elsewhere (tests, or a Collector that injects nothing).
package componenttelemetry

import (
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Names of the attributes the Collector injects into a component's
// telemetry (Collector v0.165.0, service/internal/attribute).
const (
	ComponentKindKey = "otelcol.component.kind"
	ComponentIDKey   = "otelcol.component.id"
	PipelineIDKey    = "otelcol.pipeline.id"
	SignalKey        = "otelcol.signal"
	SignalOutputKey  = "otelcol.signal.output"
)

// injectedKeys lists every *Key constant.
var injectedKeys = [...]string{ComponentKindKey, ComponentIDKey, PipelineIDKey, SignalKey, SignalOutputKey}

// pipelineKeys are the injected attributes that describe one pipeline rather
// than the component: what a component shared across pipelines drops.
var pipelineKeys = []string{PipelineIDKey, SignalKey, SignalOutputKey}

// IsInjectedKey reports whether key names an attribute the Collector injects
// (or Identity records in its place). A component must not record an
// attribute of its own under such a name.
func IsInjectedKey(key string) bool {
	for _, k := range injectedKeys {
		if k == key {
			return true
		}
	}
	return false
}

// The method sets of the Collector's attribute-injecting wrappers.
type (
	injectingCore interface {
		DropInjectedAttributes(keys ...string) zapcore.Core
	}
	injectingTracerProvider interface {
		DropInjectedAttributes(keys ...string) trace.TracerProvider
	}
	injectingMeterProvider interface {
		DropInjectedAttributes(keys ...string) metric.MeterProvider
	}
)

// DropPipelineAttributes returns ts without the injected attributes that
// name a pipeline (otelcol.pipeline.id, otelcol.signal,
// otelcol.signal.output); the component's own (otelcol.component.id and
// .kind) stay. It is for a component instance that serves several
// pipelines of any signal.
func DropPipelineAttributes(ts component.TelemetrySettings) component.TelemetrySettings {
	return Drop(ts, pipelineKeys...)
}

// Drop returns ts without the injected attributes named by keys in its
// logger, tracer provider and meter provider. Fields added to the logger
// with With before the call stay.
func Drop(ts component.TelemetrySettings, keys ...string) component.TelemetrySettings {
	if ts.Logger != nil {
		ts.Logger = ts.Logger.WithOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core {
			if ic, ok := c.(injectingCore); ok {
				return ic.DropInjectedAttributes(keys...)
			}
			return c
		}))
	}
	if itp, ok := ts.TracerProvider.(injectingTracerProvider); ok {
		ts.TracerProvider = itp.DropInjectedAttributes(keys...)
	}
	if imp, ok := ts.MeterProvider.(injectingMeterProvider); ok {
		ts.MeterProvider = imp.DropInjectedAttributes(keys...)
	}
	return ts
}

// MeterInjects reports whether ts's meter provider adds the Collector's
// component attributes to the meters it creates.
func MeterInjects(ts component.TelemetrySettings) bool {
	_, ok := ts.MeterProvider.(injectingMeterProvider)
	return ok
}

// Identity returns the attributes to record on every data point of a
// component's metrics so that the series of different instances stay apart:
// nil when ts's meter provider injects them already, otherwise
// otelcol.component.id set to id and, when signal is not empty,
// otelcol.signal set to signal. Pass a signal only for an instance that
// serves one pipeline (the Collector injects its signal then); a component
// that serves several signals and measures per signal records the signal
// itself, always.
func Identity(ts component.TelemetrySettings, id component.ID, signal string) []attribute.KeyValue {
	if MeterInjects(ts) {
		return nil
	}
	attrs := []attribute.KeyValue{attribute.String(ComponentIDKey, id.String())}
	if signal != "" {
		attrs = append(attrs, attribute.String(SignalKey, signal))
	}
	return attrs
}
