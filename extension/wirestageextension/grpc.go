package wirestageextension

import (
	"context"
	"reflect"
	"sync"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
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
// request bytes has no request context:
//
//  1. the codec, for an OTLP export request with stages, keeps the
//     decompressed bytes instead of decoding them (pending, keyed by the
//     message the server will hand to the handler);
//  2. the stats handler, told right after that the message was received
//     (InPayload, same goroutine, with the RPC's context), moves the bytes
//     into the RPC's context;
//  3. the unary interceptor, which runs after the Collector's own ones
//     (authentication included), runs the stages with the request context,
//     decodes what stays into the message and calls the receiver.
//
// A call that ends before the interceptor (authentication refused) releases
// its bytes at the stats handler's End.

// The full method names of the OTLP export RPCs.
const (
	methodTraces  = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
	methodMetrics = "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export"
	methodLogs    = "/opentelemetry.proto.collector.logs.v1.LogsService/Export"
)

// The Go types gRPC decodes OTLP export requests into: pdata's internal
// messages, reachable only as the type of the orig field of the exported
// ExportRequest wrappers.
var (
	tracesRequestType  = origType(reflect.TypeFor[ptraceotlp.ExportRequest]())
	metricsRequestType = origType(reflect.TypeFor[pmetricotlp.ExportRequest]())
	logsRequestType    = origType(reflect.TypeFor[plogotlp.ExportRequest]())
)

func origType(t reflect.Type) reflect.Type {
	if f, ok := t.FieldByName("orig"); ok {
		return f.Type
	}
	return nil
}

// requestSignal reports the signal of a message gRPC is about to decode.
func requestSignal(v any) (otlpwire.Signal, bool) {
	switch reflect.TypeOf(v) {
	case nil:
		return 0, false
	case tracesRequestType:
		return otlpwire.SignalTraces, true
	case metricsRequestType:
		return otlpwire.SignalMetrics, true
	case logsRequestType:
		return otlpwire.SignalLogs, true
	}
	return 0, false
}

// pending is a received request whose stages have not run yet.
type pending struct {
	sig otlpwire.Signal
	buf mem.Buffer
}

// grpcCall travels in the RPC context from the stats handler to the
// interceptor.
type grpcCall struct {
	pending *pending
}

// grpcCallKey is the context key of one extension's grpcCall: per
// extension, so that two extensions on one server never take each other's.
type grpcCallKey struct{ g *grpcStage }

// GetGRPCServerOptions returns the codec, stats handler and interceptor
// that run the stages on the otlp receiver's gRPC server.
func (w *wireStage) GetGRPCServerOptions(context.Context) ([]grpc.ServerOption, error) {
	g := &grpcStage{w: w, delegate: encoding.GetCodecV2("proto")}
	return []grpc.ServerOption{
		grpc.ForceServerCodecV2(g),
		grpc.StatsHandler(g),
		grpc.ChainUnaryInterceptor(g.intercept),
	}, nil
}

type grpcStage struct {
	w        *wireStage
	delegate encoding.CodecV2
	// received holds, between the codec and the stats handler of the same
	// RPC, the bytes of messages that were not decoded.
	received sync.Map // message -> *pending
}

// Name is the codec name: the codec replaces "proto" on this server only.
func (g *grpcStage) Name() string { return "proto" }

func (g *grpcStage) Marshal(v any) (mem.BufferSlice, error) { return g.delegate.Marshal(v) }

func (g *grpcStage) Unmarshal(data mem.BufferSlice, v any) error {
	sig, ok := requestSignal(v)
	if !ok || !g.w.active(sig) {
		return g.delegate.Unmarshal(data, v)
	}
	// One contiguous buffer; it takes its own reference, so it outlives
	// data, which gRPC frees when Unmarshal returns.
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	g.received.Store(v, &pending{sig: sig, buf: buf})
	return nil
}

// TagRPC gives OTLP export RPCs a place for their pending bytes.
func (g *grpcStage) TagRPC(ctx context.Context, info *stats.RPCTagInfo) context.Context {
	switch info.FullMethodName {
	case methodTraces, methodMetrics, methodLogs:
		return context.WithValue(ctx, grpcCallKey{g}, &grpcCall{})
	}
	return ctx
}

func (g *grpcStage) HandleRPC(ctx context.Context, s stats.RPCStats) {
	switch s := s.(type) {
	case *stats.InPayload:
		p, ok := g.received.LoadAndDelete(s.Payload)
		if !ok {
			return
		}
		if gc, _ := ctx.Value(grpcCallKey{g}).(*grpcCall); gc != nil {
			gc.pending = p.(*pending)
		} else {
			p.(*pending).buf.Free()
		}
	case *stats.End:
		if gc, _ := ctx.Value(grpcCallKey{g}).(*grpcCall); gc != nil && gc.pending != nil {
			gc.pending.buf.Free()
			gc.pending = nil
		}
	}
}

func (g *grpcStage) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }

func (g *grpcStage) HandleConn(context.Context, stats.ConnStats) {}

func (g *grpcStage) intercept(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	gc, _ := ctx.Value(grpcCallKey{g}).(*grpcCall)
	if gc == nil || gc.pending == nil {
		return handler(ctx, req)
	}
	p := gc.pending
	gc.pending = nil
	defer p.buf.Free()
	c := g.w.getCall()
	defer g.w.putCall(c)
	res := g.w.run(ctx, p.sig, p.buf.ReadOnlyData(), c)
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
