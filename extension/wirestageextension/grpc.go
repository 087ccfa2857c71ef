// SPDX-License-Identifier: Apache-2.0

package wirestageextension

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.uber.org/zap"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// On gRPC the stage is split in three, because the codec that sees the
// request bytes has no request context. None of this is a grpc-go or
// Collector contract; grpc_pin_test.go pins each behaviour it relies on
// (see the README, "What the gRPC side relies on"):
//
//  1. the codec, for an OTLP export request while stages are registered,
//     keeps the decompressed bytes instead of decoding them, keyed by the
//     message gRPC decodes into (a fresh one per RPC);
//  2. the stats handler gives every RPC a handoff (TagRPC) and, at the
//     message's InPayload, records in it which message is the RPC's and
//     that the codec kept it;
//  3. the unary interceptor, which runs after the Collector's own ones
//     (authentication included), takes the kept bytes of its message, runs
//     the stages with the request context and decodes only what stays.
//
// Ownership: a kept buffer belongs to the kept map until exactly one of
// these removes and frees it: the interceptor of its RPC (after the
// stages), the codec when the same RPC's message is decoded again (grpc-go
// decodes a second message of a unary RPC into the same message before
// refusing it), or the stats handler's End of its RPC (refused by an
// interceptor, cancelled, timed out, or any other path that never reaches
// ours). For a unary RPC grpc-go runs the codec, InPayload, the
// interceptors and End on the RPC's goroutine, one after the other.

// The full method names of the OTLP export RPCs.
const (
	methodTraces  = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
	methodMetrics = "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export"
	methodLogs    = "/opentelemetry.proto.collector.logs.v1.LogsService/Export"
)

// grpcShared is the gRPC side's state shared by every server the extension
// serves: what the hand-off holds, and the seams tests use (zero in
// production).
type grpcShared struct {
	held heldCount

	// findTypes replaces findRequestTypes.
	findTypes func() (requestTypes, error)
	// loseHandoff drops kept bytes at InPayload, to force a hand-off miss.
	loseHandoff bool
	// intercepted sees the context the interceptor is called with.
	intercepted func(context.Context)
}

// errHandoffMiss is the cause of the answer to a request whose bytes the
// codec kept but the interceptor did not find.
var errHandoffMiss = errors.New("wirestage: the request bytes the gRPC codec kept did not reach the stage; nothing was processed, retry")

// GetGRPCServerOptions returns the codec, stats handler and interceptor
// that run the stages on the otlp receiver's gRPC server. It fails, and
// with it the receiver's start, when this Collector build does not offer
// what the hook relies on.
func (w *wireStage) GetGRPCServerOptions(ctx context.Context) ([]grpc.ServerOption, error) {
	g, err := w.newGRPCStage(ctx)
	if err != nil {
		return nil, err
	}
	opts := []grpc.ServerOption{
		grpc.ForceServerCodecV2(g),
		grpc.StatsHandler(g),
		grpc.ChainUnaryInterceptor(g.intercept),
	}
	if n := w.cfg.GRPCStreamWorkers; n > 0 {
		// A new goroutine per request grows its stack again through the
		// server's, the interceptors' and the stages' frames: about 5-8%
		// of a diverting Collector's CPU (benchmarks/RESULTS.md).
		opts = append(opts, grpc.NumStreamWorkers(uint32(n)))
	}
	return opts, nil
}

// newGRPCStage checks what the hook relies on and builds one server's
// stage.
func (w *wireStage) newGRPCStage(ctx context.Context) (*grpcStage, error) {
	find := w.grpc.findTypes
	if find == nil {
		find = findRequestTypes
	}
	types, err := find()
	if err != nil {
		return nil, fmt.Errorf("%s cannot run the stages on gRPC; remove it from the gRPC server's middlewares (HTTP is unaffected): %w", w.id, err)
	}
	delegate := encoding.GetCodecV2("proto")
	if delegate == nil {
		return nil, fmt.Errorf("%s: %w: grpc-go has no proto codec registered", w.id, ErrGRPCUnsupported)
	}
	if err := probeGRPC(ctx, types); err != nil {
		return nil, fmt.Errorf("%s cannot run the stages on gRPC; remove it from the gRPC server's middlewares (HTTP is unaffected): %w: grpc-go does not call the server as the hand-off needs: %w", w.id, ErrGRPCUnsupported, err)
	}
	g := &grpcStage{w: w, types: types, delegate: delegate}
	return g, nil
}

// grpcStage is the codec, stats handler and interceptor of one server.
type grpcStage struct {
	w        *wireStage
	types    requestTypes
	delegate encoding.CodecV2
	pool     sizeClassPool

	// kept holds the bytes of the messages the codec did not decode,
	// keyed by the message.
	kept sync.Map // message -> *kept
}

// handoff is one RPC's record of its request message.
type handoff struct {
	// msg is the message the RPC decodes into, set at its InPayload.
	msg any
	// kept reports that the codec kept msg's bytes instead of decoding
	// it: the receiver must never see msg unless the stages ran.
	kept bool
}

// handoffKey is the context key of an RPC's handoff: per server, so that
// two extensions never take each other's.
type handoffKey struct{ g *grpcStage }

func (g *grpcStage) handoff(ctx context.Context) *handoff {
	h, _ := ctx.Value(handoffKey{g}).(*handoff)
	return h
}

// Name is the codec name: the codec replaces "proto" on this server only.
func (g *grpcStage) Name() string { return "proto" }

func (g *grpcStage) Marshal(v any) (mem.BufferSlice, error) { return g.delegate.Marshal(v) }

func (g *grpcStage) Unmarshal(data mem.BufferSlice, v any) error {
	sig, ok := g.types.signal(v)
	if !ok || !g.w.active(sig) {
		return g.delegate.Unmarshal(data, v)
	}
	if old, loaded := g.kept.Swap(v, g.keep(sig, data)); loaded {
		// The same RPC's previous message (grpc-go decodes a unary RPC's
		// second message before refusing the RPC): nobody takes it now.
		g.release(old.(*kept))
	}
	return nil
}

// TagRPC gives every RPC a handoff, so that whatever the codec keeps for
// it is released when it ends.
func (g *grpcStage) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context {
	return context.WithValue(ctx, handoffKey{g}, &handoff{})
}

func (g *grpcStage) HandleRPC(ctx context.Context, s stats.RPCStats) {
	switch s := s.(type) {
	case *stats.InPayload:
		h := g.handoff(ctx)
		if h == nil {
			return
		}
		if _, ok := g.types.signal(s.Payload); !ok {
			return
		}
		h.msg = s.Payload
		if k, ok := g.kept.Load(s.Payload); ok {
			h.kept = true
			if g.w.grpc.loseHandoff && g.kept.CompareAndDelete(s.Payload, k) {
				g.release(k.(*kept))
			}
		}
	case *stats.End:
		h := g.handoff(ctx)
		if h == nil || h.msg == nil {
			return
		}
		if k, ok := g.kept.LoadAndDelete(h.msg); ok {
			g.release(k.(*kept))
		}
		h.msg = nil
	}
}

func (g *grpcStage) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }

func (g *grpcStage) HandleConn(context.Context, stats.ConnStats) {}

func (g *grpcStage) intercept(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if g.w.grpc.intercepted != nil {
		g.w.grpc.intercepted(ctx)
	}
	sig, ok := g.types.signal(req)
	if !ok {
		return handler(ctx, req)
	}
	v, ok := g.kept.LoadAndDelete(req)
	if !ok {
		if h := g.handoff(ctx); h == nil || h.kept {
			// The codec kept the RPC's bytes and they are not here, or the
			// RPC has no hand-off to tell: req may be undecoded. Fail
			// closed.
			return nil, g.miss(ctx, sig, h)
		}
		// The codec decoded req (no stage was registered then).
		return handler(ctx, req)
	}
	k := v.(*kept)
	defer g.release(k)
	c := g.w.getCall()
	defer g.w.putCall(c)
	res := g.w.run(ctx, k.sig, k.buf.ReadOnlyData(), c)
	if res.err != nil {
		return nil, g.w.grpcError(res.err)
	}
	if len(res.body) > 0 {
		if err := g.delegate.Unmarshal(mem.BufferSlice{mem.SliceBuffer(res.body)}, req); err != nil {
			// What gRPC answers when it cannot decode a request.
			return nil, status.Errorf(codes.Internal, "grpc: failed to unmarshal the received message: %v", err)
		}
	}
	return handler(withRan(ctx, res.ran), req)
}

// miss counts, logs and answers a request the stage can neither process
// nor hand to the receiver. It is retryable: nothing was processed, and
// the next attempt is a new RPC with a new hand-off.
func (g *grpcStage) miss(ctx context.Context, sig otlpwire.Signal, h *handoff) error {
	g.w.tb.ExtensionWirestageGrpcHandoffMisses.Add(context.WithoutCancel(ctx), 1, g.w.sigOpts[sig-1]...)
	g.w.logger.Error("gRPC request refused: its bytes did not reach the stage (hand-off miss); the client is told to retry",
		zap.Stringer("signal", sig), zap.Bool("rpc_tagged", h != nil))
	return g.w.grpcError(errHandoffMiss)
}

// grpcError turns a stage's refusal into the status OTLP exporters expect:
// UNAVAILABLE with RetryInfo to retry, INVALID_ARGUMENT to give up.
func (w *wireStage) grpcError(err error) error {
	if consumererror.IsPermanent(err) {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	st := status.New(codes.Unavailable, err.Error())
	if withInfo, e := st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(w.cfg.RetryAfter)}); e == nil {
		st = withInfo
	}
	return st.Err()
}
