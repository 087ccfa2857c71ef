package wirestageextension

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/component"

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

// ran lists the processors whose stage ran on a request.
type ran struct {
	ids []component.ID
}

// Ran reports whether the stage of processor id already ran on the request
// that ctx belongs to, so that the processor's pdata path must neither count
// nor forward the request's data again. The receiver passes the request
// context on to the pipeline, and processorhelper to the processor; anything
// that detaches the context (batch processor, exporter queues) loses the
// mark, which is why a processor with a stage must sit before them.
func Ran(ctx context.Context, id component.ID) bool {
	r, _ := ctx.Value(ranKey{}).(*ran)
	return r != nil && slices.Contains(r.ids, id)
}

func withRan(ctx context.Context, r *ran) context.Context {
	if r == nil || len(r.ids) == 0 {
		return ctx
	}
	return context.WithValue(ctx, ranKey{}, r)
}
