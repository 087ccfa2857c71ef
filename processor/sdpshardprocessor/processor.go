// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"
	"go.opentelemetry.io/collector/processor/processorhelper/xprocessorhelper"
	"go.uber.org/zap"

	"github.com/otelcol-sdp/otelcol-sdp/extension/wirestageextension"
	"github.com/otelcol-sdp/otelcol-sdp/internal/shard"
	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
	"github.com/otelcol-sdp/otelcol-sdp/sdp/transport"
)

// Refusal reasons, the values of the refused_batches reason attribute.
const (
	reasonQueueFull   = "queue_full"
	reasonClosed      = "closed"
	reasonRejected    = "rejected"
	reasonUndelivered = "undelivered"
	reasonCanceled    = "canceled"
	reasonMalformed   = "malformed"
	reasonStorage     = "storage"
	reasonProtocol    = "protocol"
	reasonNoMembers   = "no_members"
)

// shardProcessor is one signal's sdpshard processor. Processors of the same
// component ID share their shardSet.
type shardProcessor struct {
	signal     otlpwire.Signal
	mode       Mode
	waitForAck bool
	registry   *registry
	shards     *shardSet
	router     *shard.Router
	stage      stageHook

	// frames recycles the routing scratch space (a *routed) between
	// batches.
	frames sync.Pool

	releaseOnce sync.Once
}

func (reg *registry) newProcessor(set processor.Settings, cfg *Config, signal otlpwire.Signal) (*shardProcessor, error) {
	router, err := shard.NewRouter(cfg.routerSettings())
	if err != nil {
		return nil, err
	}
	shards, err := reg.acquire(set, cfg)
	if err != nil {
		return nil, err
	}
	p := &shardProcessor{
		signal:     signal,
		mode:       cfg.Mode,
		waitForAck: cfg.WaitForAck,
		registry:   reg,
		shards:     shards,
		router:     router,
		stage:      stageHook{id: set.ID},
	}
	p.frames.New = func() any {
		r := new(routed)
		if m := shards.frameMemory; m != nil {
			r.Alloc = m.Get
		}
		return r
	}
	return p, nil
}

func (p *shardProcessor) options() []processorhelper.Option {
	return []processorhelper.Option{
		processorhelper.WithCapabilities(p.capabilities()),
		processorhelper.WithStart(p.start),
		processorhelper.WithShutdown(p.shutdown),
	}
}

// profilesOptions are options for profiles, whose helper has its own
// option type.
func (p *shardProcessor) profilesOptions() []xprocessorhelper.Option {
	return []xprocessorhelper.Option{
		xprocessorhelper.WithCapabilities(p.capabilities()),
		xprocessorhelper.WithStart(p.start),
		xprocessorhelper.WithShutdown(p.shutdown),
	}
}

// capabilities: tee only reads the batch; divert removes what it forwarded.
func (p *shardProcessor) capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: p.mode == ModeDivert}
}

func (p *shardProcessor) start(ctx context.Context, host component.Host) error {
	if err := p.shards.start(ctx, host); err != nil {
		return err
	}
	return p.startStage(host)
}

func (p *shardProcessor) shutdown(ctx context.Context) error {
	p.shutdownStage()
	p.releaseOnce.Do(func() { p.registry.release(ctx, p.shards) })
	return nil
}

// pdata (checked at v1.71.0, the version go.mod requires) has no way to
// marshal into a caller's buffer (ProtoMarshaler always allocates exactly
// the encoded size), so each batch costs one allocation for its OTLP bytes;
// the frames are encoded into one more.
var (
	tracesMarshaler   ptrace.ProtoMarshaler
	metricsMarshaler  pmetric.ProtoMarshaler
	logsMarshaler     plog.ProtoMarshaler
	profilesMarshaler pprofile.ProtoMarshaler
)

func (p *shardProcessor) processTraces(ctx context.Context, td ptrace.Traces) (ptrace.Traces, error) {
	if wirestageextension.StagedTraces(ctx, p.stage.id, td) {
		return td, nil
	}
	b, err := tracesMarshaler.MarshalTraces(td)
	if err != nil {
		return td, consumererror.NewPermanent(fmt.Errorf("marshalling traces: %w", err))
	}
	keep, err := p.forward(ctx, otlpwire.NewRequest(otlpwire.SignalTraces, b))
	if err != nil || p.mode == ModeTee {
		return td, err
	}
	if len(keep) == 0 {
		return td, processorhelper.ErrSkipProcessingData
	}
	td.ResourceSpans().RemoveIf(keepOnly[ptrace.ResourceSpans](keep))
	return td, nil
}

func (p *shardProcessor) processMetrics(ctx context.Context, md pmetric.Metrics) (pmetric.Metrics, error) {
	if wirestageextension.StagedMetrics(ctx, p.stage.id, md) {
		return md, nil
	}
	b, err := metricsMarshaler.MarshalMetrics(md)
	if err != nil {
		return md, consumererror.NewPermanent(fmt.Errorf("marshalling metrics: %w", err))
	}
	keep, err := p.forward(ctx, otlpwire.NewRequest(otlpwire.SignalMetrics, b))
	if err != nil || p.mode == ModeTee {
		return md, err
	}
	if len(keep) == 0 {
		return md, processorhelper.ErrSkipProcessingData
	}
	md.ResourceMetrics().RemoveIf(keepOnly[pmetric.ResourceMetrics](keep))
	return md, nil
}

func (p *shardProcessor) processLogs(ctx context.Context, ld plog.Logs) (plog.Logs, error) {
	if wirestageextension.StagedLogs(ctx, p.stage.id, ld) {
		return ld, nil
	}
	b, err := logsMarshaler.MarshalLogs(ld)
	if err != nil {
		return ld, consumererror.NewPermanent(fmt.Errorf("marshalling logs: %w", err))
	}
	keep, err := p.forward(ctx, otlpwire.NewRequest(otlpwire.SignalLogs, b))
	if err != nil || p.mode == ModeTee {
		return ld, err
	}
	if len(keep) == 0 {
		return ld, processorhelper.ErrSkipProcessingData
	}
	ld.ResourceLogs().RemoveIf(keepOnly[plog.ResourceLogs](keep))
	return ld, nil
}

func (p *shardProcessor) processProfiles(ctx context.Context, pd pprofile.Profiles) (pprofile.Profiles, error) {
	if wirestageextension.StagedProfiles(ctx, p.stage.id, pd) {
		return pd, nil
	}
	b, err := profilesMarshaler.MarshalProfiles(pd)
	if err != nil {
		return pd, consumererror.NewPermanent(fmt.Errorf("marshalling profiles: %w", err))
	}
	keep, err := p.forward(ctx, otlpwire.NewRequest(otlpwire.SignalProfiles, b))
	if err != nil || p.mode == ModeTee {
		return pd, err
	}
	if len(keep) == 0 {
		return pd, processorhelper.ErrSkipProcessingData
	}
	// The dictionary stays whole: what the kept resources reference is in it.
	pd.ResourceProfiles().RemoveIf(keepOnly[pprofile.ResourceProfiles](keep))
	return pd, nil
}

// keepOnly returns a RemoveIf predicate that keeps the resources at the
// ascending indexes in keep and removes every other one.
func keepOnly[T any](keep []int) func(T) bool {
	index, next := -1, 0
	return func(T) bool {
		index++
		if next < len(keep) && keep[next] == index {
			next++
			return false
		}
		return true
	}
}

// forward is the wire stage: it frames the request by resource, sends the
// frames to their shards and, with wait_for_ack, waits for the acks. It
// returns the indexes of the resources it could not frame, which divert mode
// passes on. It depends only on the request bytes, so a path that sees the
// raw OTLP request before the receiver decodes it can call it too.
func (p *shardProcessor) forward(ctx context.Context, req otlpwire.Request) (unroutable []int, err error) {
	frames := p.frames.Get().(*routed)
	defer p.frames.Put(frames)
	f := p.shards.fleet.Current()
	if err := p.router.RouteTo(req, f.Members, &frames.Frames); errors.Is(err, shard.ErrNoMembers) {
		// The resolver has found no member yet: backpressure, not loss.
		return nil, p.refuse(ctx, err)
	} else if err != nil {
		p.refused(ctx, reasonMalformed)
		err = fmt.Errorf("sdpshard: splitting %s by resource: %w", req.Signal(), err)
		p.shards.health.refused(reasonMalformed, err)
		return nil, consumererror.NewPermanent(err)
	}
	if len(frames.Unroutable) > 0 {
		items := 0
		for _, u := range frames.Unroutable {
			unroutable = append(unroutable, u.Index)
			items += u.Items
		}
		p.shards.telemetry.ProcessorSdpshardUnroutableItems.Add(ctx, int64(items), p.shards.obs.idAttrs)
		// forward also runs as the stage, once for every pipeline the
		// receiver feeds: the shard set's logger names no pipeline.
		p.shards.logger.Warn("Resources not forwarded to a sidecar: an item does not fit max_frame_bytes",
			zap.Stringer("signal", req.Signal()), zap.Int("resources", len(frames.Unroutable)),
			zap.Int("items", items), zap.Error(frames.Unroutable[0].Err))
	}
	frames.toTransport()
	defer frames.release()
	if err := p.send(ctx, f, frames.byShard); err != nil {
		return nil, err
	}
	return unroutable, nil
}

// routed is one batch's routing scratch: what the router framed and, by
// shard, the same frames as the transport's Frame values.
type routed struct {
	shard.Frames
	byShard [][]transport.Frame
	all     []transport.Frame // backs byShard
}

// toTransport lays the router's frames out as the transport's Frame values,
// without copying their bytes. The transport holds a frame until its
// sidecar acknowledges it, and queue_bytes counts len(Bytes): each frame
// owns its bytes and no more (see shard.Frame), so what a shard holds is
// what its queue counts plus size-class rounding (a pooled buffer is at
// most an eighth larger than its frame, and the Go allocator may round it
// up again: at most a quarter in all), and no held frame keeps the rest of
// its request alive. The transport.Frame values live in arrays reused
// across batches: Client.Send keeps only the bytes.
func (r *routed) toTransport() {
	if cap(r.all) < r.Frames.Frames {
		r.all = make([]transport.Frame, r.Frames.Frames)
	}
	if cap(r.byShard) < len(r.ByShard) {
		r.byShard = make([][]transport.Frame, len(r.ByShard))
	}
	r.byShard = r.byShard[:len(r.ByShard)]
	all := r.all[:0]
	for shard, fs := range r.ByShard {
		start := len(all)
		for _, f := range fs {
			all = append(all, transport.Frame{Bytes: f.Bytes, Items: f.Items, Key: f.Key})
		}
		r.byShard[shard] = all[start:len(all):len(all)]
	}
}

// release drops the scratch's references to the batch's frame bytes, so
// that the pooled scratch keeps none alive after the transport lets them go.
func (r *routed) release() {
	clear(r.all[:cap(r.all)])
	clear(r.byShard)
	r.Frames.Clear()
}
