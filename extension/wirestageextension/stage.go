// SPDX-License-Identifier: Apache-2.0

package wirestageextension

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/xconsumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// Stage processes the bytes of one OTLP export request before the receiver
// decodes them. It must not keep req's bytes after it returns.
//
// An error marked permanent (consumererror.NewPermanent) refuses the
// request for good (HTTP 400, gRPC INVALID_ARGUMENT); any other error asks
// the client to retry (HTTP 503 with Retry-After, gRPC UNAVAILABLE).
type Stage interface {
	ProcessRequest(ctx context.Context, req otlpwire.Request) (Result, error)
}

// StageFunc adapts a function to Stage.
type StageFunc func(ctx context.Context, req otlpwire.Request) (Result, error)

// ProcessRequest calls f.
func (f StageFunc) ProcessRequest(ctx context.Context, req otlpwire.Request) (Result, error) {
	return f(ctx, req)
}

// Result says what stays in the request after a stage.
type Result struct {
	// Divert reports that the stage removed resources: only those at the
	// (ascending, 0-based) indexes in Keep stay in the request. When Divert
	// is false the whole request stays.
	Divert bool
	// Keep lists the resources that stay when Divert is set.
	Keep []int
}

// ErrDivertNotAcknowledged is returned by Register for a diverting stage
// when the extension does not set divert_all_pipelines.
var ErrDivertNotAcknowledged = errors.New("wirestage: a diverting stage needs divert_all_pipelines: true")

// registrar is what a wirestage extension offers the processors.
type registrar interface {
	// register returns nil, nil when id is not one of its stages.
	register(id component.ID, sig otlpwire.Signal, s Stage, diverts bool) (unregister func(), err error)
}

// Register registers s as the stage of processor id for requests of signal
// sig with every wirestage extension of host that lists id in its stages.
// diverts says whether s may remove resources (Result.Divert). Processors
// call it from Start; the returned function undoes it and belongs in
// Shutdown. It reports how many extensions took the stage.
func Register(host component.Host, id component.ID, sig otlpwire.Signal, s Stage, diverts bool) (unregister func(), n int, err error) {
	var done []func()
	undo := func() {
		for _, u := range done {
			u()
		}
	}
	exts := host.GetExtensions()
	// Register in a stable order so that errors are reproducible.
	ids := make([]component.ID, 0, len(exts))
	for extID := range exts {
		ids = append(ids, extID)
	}
	slices.SortFunc(ids, func(a, b component.ID) int { return strings.Compare(a.String(), b.String()) })
	for _, extID := range ids {
		r, ok := exts[extID].(registrar)
		if !ok {
			continue
		}
		u, err := r.register(id, sig, s, diverts)
		if err != nil {
			undo()
			return nil, 0, fmt.Errorf("%s: %w", extID, err)
		}
		if u != nil {
			done = append(done, u)
		}
	}
	return undo, len(done), nil
}

// ranKey is the context key of the stages that ran on a request.
type ranKey struct{}

// ran is the mark the stages leave in the context of the request they
// handled. It names the request exactly: the processors whose stage ran,
// the signal, and what the receiver decodes of the request (its resources
// and items), so that data which merely travels with the request's context
// (what a connector emits into another pipeline, what any component
// creates) is not taken for the request's own.
type ran struct {
	sig otlpwire.Signal
	ids []component.ID
	// resources and items describe the bytes the receiver decodes, after
	// every stage.
	resources, items int
}

// StagedTraces reports whether the stage of processor id already handled
// td, so that the processor's pdata path must neither count nor forward it
// again: ctx belongs to a traces request on which that stage ran, the mark
// was not passed on by the processor itself (see PassOnTraces), and td is
// what the receiver decoded of it.
//
// The receiver passes the request context on to the pipeline, and
// processorhelper to the processor; anything that detaches the context
// (batch processor, exporter queues) loses the mark, which is why a
// processor with a stage must sit before them.
func StagedTraces(ctx context.Context, id component.ID, td ptrace.Traces) bool {
	m := markOf(ctx, id, otlpwire.SignalTraces)
	return m != nil && td.ResourceSpans().Len() == m.resources && td.SpanCount() == m.items
}

// StagedMetrics is StagedTraces for metrics; items are data points.
func StagedMetrics(ctx context.Context, id component.ID, md pmetric.Metrics) bool {
	m := markOf(ctx, id, otlpwire.SignalMetrics)
	return m != nil && md.ResourceMetrics().Len() == m.resources && md.DataPointCount() == m.items
}

// StagedLogs is StagedTraces for logs.
func StagedLogs(ctx context.Context, id component.ID, ld plog.Logs) bool {
	m := markOf(ctx, id, otlpwire.SignalLogs)
	return m != nil && ld.ResourceLogs().Len() == m.resources && ld.LogRecordCount() == m.items
}

// StagedProfiles is StagedTraces for profiles; items are samples.
func StagedProfiles(ctx context.Context, id component.ID, pd pprofile.Profiles) bool {
	m := markOf(ctx, id, otlpwire.SignalProfiles)
	return m != nil && pd.ResourceProfiles().Len() == m.resources && pd.SampleCount() == m.items
}

// markOf returns the mark of ctx when the stage of id ran on it for sig.
func markOf(ctx context.Context, id component.ID, sig otlpwire.Signal) *ran {
	m, _ := ctx.Value(ranKey{}).(*ran)
	if m == nil || m.sig != sig || !slices.Contains(m.ids, id) {
		return nil
	}
	return m
}

// PassOnTraces returns a consumer that calls next with the context it is
// given, less the mark of id's stage. A processor with a stage wraps its
// next consumer with it: once the data has gone past the processor, it is
// no longer the request as it entered the receiver's pipelines, and a
// processor with the same id further on (in a pipeline a connector feeds)
// must process it like data from any receiver.
func PassOnTraces(next consumer.Traces, id component.ID) consumer.Traces {
	c, _ := consumer.NewTraces(func(ctx context.Context, td ptrace.Traces) error {
		return next.ConsumeTraces(passOn(ctx, id), td)
	}, consumer.WithCapabilities(next.Capabilities()))
	return c
}

// PassOnMetrics is PassOnTraces for metrics.
func PassOnMetrics(next consumer.Metrics, id component.ID) consumer.Metrics {
	c, _ := consumer.NewMetrics(func(ctx context.Context, md pmetric.Metrics) error {
		return next.ConsumeMetrics(passOn(ctx, id), md)
	}, consumer.WithCapabilities(next.Capabilities()))
	return c
}

// PassOnLogs is PassOnTraces for logs.
func PassOnLogs(next consumer.Logs, id component.ID) consumer.Logs {
	c, _ := consumer.NewLogs(func(ctx context.Context, ld plog.Logs) error {
		return next.ConsumeLogs(passOn(ctx, id), ld)
	}, consumer.WithCapabilities(next.Capabilities()))
	return c
}

// PassOnProfiles is PassOnTraces for profiles.
func PassOnProfiles(next xconsumer.Profiles, id component.ID) xconsumer.Profiles {
	c, _ := xconsumer.NewProfiles(func(ctx context.Context, pd pprofile.Profiles) error {
		return next.ConsumeProfiles(passOn(ctx, id), pd)
	}, consumer.WithCapabilities(next.Capabilities()))
	return c
}

// passOn returns ctx without id in its mark. The mark is shared by every
// pipeline the receiver feeds, so it is replaced, never changed.
func passOn(ctx context.Context, id component.ID) context.Context {
	m, _ := ctx.Value(ranKey{}).(*ran)
	if m == nil || !slices.Contains(m.ids, id) {
		return ctx
	}
	rest := *m
	rest.ids = make([]component.ID, 0, len(m.ids)-1)
	for _, other := range m.ids {
		if other != id {
			rest.ids = append(rest.ids, other)
		}
	}
	return context.WithValue(ctx, ranKey{}, &rest)
}

func withRan(ctx context.Context, r *ran) context.Context {
	if r == nil || len(r.ids) == 0 {
		return ctx
	}
	return context.WithValue(ctx, ranKey{}, r)
}
