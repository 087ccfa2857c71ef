// SPDX-License-Identifier: Apache-2.0

package wirestageextension

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/extensionmiddleware"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/otelcol-sdp/otelcol-sdp/extension/wirestageextension/internal/metadata"
	"github.com/otelcol-sdp/otelcol-sdp/internal/componenttelemetry"
	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// signals indexes per-signal tables: otlpwire.Signal - 1.
const signals = 4

// entry is one registered stage.
type entry struct {
	id    component.ID
	stage Stage
	// token identifies the registration (stages may be incomparable funcs).
	token *byte
}

// chain is the immutable, ordered list of the stages of one signal. ids
// holds the same IDs as entries so that a request's ran mark can share it.
type chain struct {
	entries []entry
	ids     []component.ID
}

// wireStage is the extension: a registry of stages and the middleware that
// runs them.
type wireStage struct {
	id     component.ID
	cfg    *Config
	logger *zap.Logger
	tb     *metadata.TelemetryBuilder
	order  map[component.ID]int

	mu     sync.Mutex // serialises registrations
	chains [signals]atomic.Pointer[chain]

	// Metric options built once, by signal, for the synchronous metrics.
	// Slices, passed on with ..., so that recording allocates nothing.
	sigOpts [signals][]metric.AddOption
	// counts holds the per-request metrics, which are asynchronous.
	counts requestCounts

	calls    sync.Pool
	callsOut atomic.Int64
	idAttrs  metric.MeasurementOption // the extension's identity alone, for metrics without a signal

	grpc grpcShared // the gRPC hand-off's count of held buffers, and test seams
}

var (
	_ extension.Extension            = (*wireStage)(nil)
	_ extensionmiddleware.HTTPServer = (*wireStage)(nil)
	_ extensionmiddleware.GRPCServer = (*wireStage)(nil)
	_ registrar                      = (*wireStage)(nil)
)

func newWireStage(set extension.Settings, cfg *Config) (*wireStage, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, fmt.Errorf("wirestage: creating telemetry: %w", err)
	}
	w := &wireStage{
		id:     set.ID,
		cfg:    cfg,
		logger: set.Logger,
		tb:     tb,
		order:  make(map[component.ID]int, len(cfg.Stages)),
	}
	for i, id := range cfg.Stages {
		w.order[id] = i
	}
	// One extension serves every signal, and the Collector injects no
	// signal for an extension (only its kind and ID, and those only with
	// telemetry.newPipelineTelemetry): the request's signal is recorded on
	// each data point, under the name the Collector uses for it.
	identity := componenttelemetry.Identity(set.TelemetrySettings, set.ID, "")
	with := func(kvs ...attribute.KeyValue) metric.MeasurementOption {
		return metric.WithAttributeSet(attribute.NewSet(append(slices.Clone(identity), kvs...)...))
	}
	w.idAttrs = with()
	for s := range signals {
		sig := attribute.String(componenttelemetry.SignalKey, otlpwire.Signal(s+1).String())
		sigAttrs := with(sig)
		w.sigOpts[s] = []metric.AddOption{sigAttrs}
		w.counts.sigAttrs[s] = []metric.ObserveOption{sigAttrs}
		for o, name := range outcomes {
			w.counts.outcomeAttrs[s][o] = []metric.ObserveOption{with(sig, attribute.String("outcome", name))}
		}
	}
	w.calls.New = func() any { return new(call) }
	return w, nil
}

// Start has the meter report the per-request counts.
func (w *wireStage) Start(context.Context, component.Host) error {
	err := errors.Join(w.counts.register(w.tb), w.tb.RegisterExtensionWirestageGrpcHeldBytesCallback(w.observeHeldBytes))
	if err != nil {
		return fmt.Errorf("wirestage: registering telemetry: %w", err)
	}
	return nil
}

// observeHeldBytes reports the bytes the gRPC hand-off holds, once it has
// held any (the series a synchronous counter would have, no more). keep and
// release change the count on every request, so they only add to an
// atomic.
func (w *wireStage) observeHeldBytes(_ context.Context, o metric.Int64Observer) error {
	if w.grpc.held.kept.Load() > 0 {
		o.Observe(w.grpc.held.bytes.Load(), w.idAttrs)
	}
	return nil
}

// Shutdown leaves the per-request counts reported: the Collector's
// telemetry shuts down after its components, and the last export of a push
// exporter must still carry the final counts, as it did with synchronous
// counters. The registrations end with the meter provider, which the
// Collector builds anew with every configuration it runs.
func (w *wireStage) Shutdown(context.Context) error {
	return nil
}

// register adds s for sig if id is one of the configured stages.
func (w *wireStage) register(id component.ID, sig otlpwire.Signal, s Stage, diverts bool) (func(), error) {
	pos, listed := w.order[id]
	if !listed || !sig.Valid() {
		return nil, nil
	}
	if diverts && !w.cfg.DivertAllPipelines {
		return nil, divertNotAcknowledged(id)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	slot := &w.chains[sig-1]
	old := slot.Load()
	next := &chain{}
	if old != nil {
		for _, e := range old.entries {
			if e.id == id {
				// The same processor in several pipelines shares one
				// stage: a request is forwarded or counted once.
				return func() {}, nil
			}
		}
		next.entries = append(next.entries, old.entries...)
	}
	token := new(byte)
	next.entries = append(next.entries, entry{id: id, stage: s, token: token})
	// Keep the configured order.
	for i := len(next.entries) - 1; i > 0 && w.order[next.entries[i-1].id] > pos; i-- {
		next.entries[i-1], next.entries[i] = next.entries[i], next.entries[i-1]
	}
	for _, e := range next.entries {
		next.ids = append(next.ids, e.id)
	}
	slot.Store(next)
	w.logger.Debug("Stage registered", zap.Stringer("processor", id), zap.Stringer("signal", sig))
	return func() { w.unregister(sig, token) }, nil
}

func (w *wireStage) unregister(sig otlpwire.Signal, token *byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	slot := &w.chains[sig-1]
	old := slot.Load()
	if old == nil {
		return
	}
	next := &chain{}
	for _, e := range old.entries {
		if e.token == token {
			continue
		}
		next.entries = append(next.entries, e)
		next.ids = append(next.ids, e.id)
	}
	if len(next.entries) == 0 {
		next = nil
	}
	slot.Store(next)
}

// active reports whether any stage is registered for sig.
func (w *wireStage) active(sig otlpwire.Signal) bool {
	c := w.chains[sig-1].Load()
	return c != nil && len(c.entries) > 0
}

// call is the per-request scratch space, pooled.
type call struct {
	bufs [2][]byte
}

// result is what run did with a request.
type result struct {
	// body is what the receiver decodes: the request itself, or what the
	// diverting stages left of it (empty when nothing stays). It may alias
	// the call's buffers.
	body []byte
	// ran marks the request for the processors' pdata path; nil when no
	// stage ran.
	ran *ran
	// err refuses the request; see retryable.
	err error
}

// run runs the stages of sig on body.
func (w *wireStage) run(ctx context.Context, sig otlpwire.Signal, body []byte, c *call) result {
	ch := w.chains[sig-1].Load()
	if ch == nil || len(ch.entries) == 0 {
		return result{body: body}
	}
	s := int(sig) - 1
	req := otlpwire.NewRequest(sig, body)
	// Validate the request down to its items before any stage acts on it:
	// malformed bytes are the receiver's to reject, exactly as without the
	// stage, and must not be half counted or half forwarded.
	items, resources, err := req.ItemAndResourceCount()
	if err != nil {
		w.counts.request(s, malformed)
		return result{body: body}
	}
	w.counts.items[s].Add(int64(items))
	cur, flip := body, 0
	for i, e := range ch.entries {
		res, err := e.stage.ProcessRequest(ctx, otlpwire.NewRequest(sig, cur))
		if err != nil {
			o := refusedRetryable
			if consumererror.IsPermanent(err) {
				o = refusedPermanent
			}
			w.counts.request(s, o)
			return result{err: fmt.Errorf("%s: %w", e.id, err)}
		}
		if !res.Divert {
			continue
		}
		next, err := reassemble(c.bufs[flip][:0], sig, cur, res.Keep)
		if err != nil {
			// Cannot happen after the validation above; refuse rather
			// than decode something else than what was staged.
			w.counts.request(s, refusedPermanent)
			return result{err: consumererror.NewPermanent(fmt.Errorf("%s: %w", e.id, err))}
		}
		c.bufs[flip] = next
		cur, flip = next, 1-flip
		resources = len(res.Keep)
		if len(cur) == 0 {
			// Nothing stays: the later stages would see nothing.
			w.counts.diverted[s].Add(int64(items))
			w.counts.request(s, diverted)
			return result{body: cur[:0:0], ran: &ran{sig: sig, ids: ch.ids[: i+1 : i+1]}}
		}
	}
	left := items
	if len(cur) != len(body) {
		left, _ = otlpwire.NewRequest(sig, cur).ItemCount()
		w.counts.diverted[s].Add(int64(items - left))
	}
	w.counts.request(s, passed)
	return result{body: cur, ran: &ran{sig: sig, ids: ch.ids, resources: resources, items: left}}
}

// errKeepOutOfRange reports a stage result naming resources the request
// does not have.
var errKeepOutOfRange = errors.New("wirestage: stage kept a resource the request does not have")

// reassemble appends to dst the request holding only the resources of cur
// at the ascending indexes in keep, copying their bytes verbatim; a
// profiles request keeps its dictionary, once, after them.
func reassemble(dst []byte, sig otlpwire.Signal, cur []byte, keep []int) ([]byte, error) {
	if len(keep) == 0 {
		return dst, nil
	}
	index, next := -1, 0
	var kept otlpwire.ResourceData
	for rd, err := range otlpwire.NewRequest(sig, cur).Resources() {
		if err != nil {
			return dst, err
		}
		index++
		if next < len(keep) && keep[next] == index {
			dst = otlpwire.AppendResource(dst, rd)
			kept = rd
			next++
		}
	}
	if next < len(keep) {
		return dst, errKeepOutOfRange
	}
	return otlpwire.AppendDictionary(dst, kept), nil
}

// getCall takes a call's scratch space from the pool; putCall gives it
// back. callsOut counts the calls between the two, so that tests can check
// that no request keeps its buffers after it was answered.
func (w *wireStage) getCall() *call {
	w.callsOut.Add(1)
	return w.calls.Get().(*call)
}

// putCall recycles c unless its buffers grew beyond what is worth keeping.
func (w *wireStage) putCall(c *call) {
	w.callsOut.Add(-1)
	const maxPooled = 4 << 20
	for i := range c.bufs {
		if cap(c.bufs[i]) > maxPooled {
			c.bufs[i] = nil
		}
	}
	w.calls.Put(c)
}
