// SPDX-License-Identifier: Apache-2.0

package wirestageextension

// The gRPC hook stands on behaviour of grpc-go and the Collector that no API
// promises. Each test here pins one piece of it for the versions go.mod
// pins, so that an upgrade that changes it fails CI rather than users.

import (
	"bytes"
	"context"
	"net"
	"reflect"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

const (
	defaultWait = 5 * time.Second
	pollEvery   = 5 * time.Millisecond
)

// reflectNew returns a new value of the pointer type typ.
func reflectNew(typ reflect.Type) any { return reflect.New(typ.Elem()).Interface() }

// goroutineID reads the current goroutine's number from its stack header.
func goroutineID() uint64 {
	var b [64]byte
	s := b[:runtime.Stack(b[:], false)]
	s = bytes.TrimPrefix(s, []byte("goroutine "))
	id, _ := strconv.ParseUint(string(s[:bytes.IndexByte(s, ' ')]), 10, 64)
	return id
}

type event struct {
	what string
	gid  uint64
}

// tracer records the calls into the stage's codec, stats handler and
// interceptor, and the service handler, in order.
type tracer struct {
	g      *grpcStage
	mu     sync.Mutex
	events []event
	// decoded lists the signal of each message the codec was given.
	decoded []otlpwire.Signal
}

func (tr *tracer) add(what string) {
	tr.mu.Lock()
	tr.events = append(tr.events, event{what, goroutineID()})
	tr.mu.Unlock()
}

func (tr *tracer) take() (whats []string, gids map[uint64]bool) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	gids = map[uint64]bool{}
	for _, e := range tr.events {
		whats = append(whats, e.what)
		gids[e.gid] = true
	}
	tr.events = nil
	return whats, gids
}

func (tr *tracer) Name() string                           { return tr.g.Name() }
func (tr *tracer) Marshal(v any) (mem.BufferSlice, error) { return tr.g.Marshal(v) }

func (tr *tracer) Unmarshal(data mem.BufferSlice, v any) error {
	tr.add("codec")
	if sig, ok := tr.g.types.signal(v); ok {
		tr.mu.Lock()
		tr.decoded = append(tr.decoded, sig)
		tr.mu.Unlock()
	}
	return tr.g.Unmarshal(data, v)
}

func (tr *tracer) TagRPC(ctx context.Context, info *stats.RPCTagInfo) context.Context {
	return tr.g.TagRPC(ctx, info)
}

func (tr *tracer) HandleRPC(ctx context.Context, s stats.RPCStats) {
	switch s.(type) {
	case *stats.InPayload:
		tr.add("in_payload")
	case *stats.End:
		tr.add("end")
	}
	tr.g.HandleRPC(ctx, s)
}

func (tr *tracer) TagConn(ctx context.Context, i *stats.ConnTagInfo) context.Context {
	return tr.g.TagConn(ctx, i)
}
func (tr *tracer) HandleConn(ctx context.Context, s stats.ConnStats) { tr.g.HandleConn(ctx, s) }

func (tr *tracer) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	tr.add("interceptor")
	return handler(ctx, req)
}

type traceServer struct {
	ptraceotlp.UnimplementedGRPCServer
	tr *tracer
}

func (s *traceServer) Export(context.Context, ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	s.tr.add("handler")
	return ptraceotlp.NewExportResponse(), nil
}

type metricsServer struct {
	pmetricotlp.UnimplementedGRPCServer
}

func (*metricsServer) Export(context.Context, pmetricotlp.ExportRequest) (pmetricotlp.ExportResponse, error) {
	return pmetricotlp.NewExportResponse(), nil
}

type logsServer struct {
	plogotlp.UnimplementedGRPCServer
}

func (*logsServer) Export(context.Context, plogotlp.ExportRequest) (plogotlp.ExportResponse, error) {
	return plogotlp.NewExportResponse(), nil
}

// pinServer serves pdata's own OTLP services with the stage wrapped in a
// tracer, as configgrpc orders the options (its interceptors first).
func pinServer(t *testing.T) (*tracer, *grpc.ClientConn, map[otlpwire.Signal]*stageRecorder) {
	t.Helper()
	w, err := newWireStage(settingsFor(t), divertConfig())
	require.NoError(t, err)
	stages := map[otlpwire.Signal]*stageRecorder{}
	for _, sig := range []otlpwire.Signal{otlpwire.SignalTraces, otlpwire.SignalMetrics, otlpwire.SignalLogs} {
		stages[sig] = &stageRecorder{}
		_, err := w.register(stageID, sig, stages[sig], false)
		require.NoError(t, err)
	}
	g, err := w.newGRPCStage(context.Background())
	require.NoError(t, err)
	tr := &tracer{g: g}
	s := grpc.NewServer(grpc.ChainUnaryInterceptor(tr.intercept), grpc.ForceServerCodecV2(tr), grpc.StatsHandler(tr), grpc.ChainUnaryInterceptor(g.intercept))
	ptraceotlp.RegisterGRPCServer(s, &traceServer{tr: tr})
	pmetricotlp.RegisterGRPCServer(s, &metricsServer{})
	plogotlp.RegisterGRPCServer(s, &logsServer{})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = s.Serve(l) }()
	t.Cleanup(s.Stop)
	conn, err := grpc.NewClient(l.Addr().String(), grpc.WithTransportCredentials(insecureCreds()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	t.Cleanup(func() { require.Zero(t, w.grpc.held.buffers.Load(), "held buffers") })
	return tr, conn, stages
}

// TestPinGRPCUnaryOrder pins grpc-go's sequence for a unary RPC: the codec,
// then InPayload, then the interceptors, then End, all on the RPC's
// goroutine; and for a second message on a unary RPC: the codec again,
// without InPayload, and no interceptor.
func TestPinGRPCUnaryOrder(t *testing.T) {
	tr, conn, _ := pinServer(t)
	_, err := ptraceotlp.NewGRPCClient(conn).Export(context.Background(), ptraceotlp.NewExportRequestFromTraces(traces(1, "a")))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		return len(tr.events) == 5
	}, defaultWait, pollEvery)
	whats, gids := tr.take()
	assert.Equal(t, []string{"codec", "in_payload", "interceptor", "handler", "end"}, whats)
	assert.Len(t, gids, 1, "one goroutine")

	body := marshal(t, traces(1, "a"))
	err = exportMessages(context.Background(), conn, body, body)
	require.Equal(t, codes.Internal, status.Code(err), "%v", err)
	require.Eventually(t, func() bool {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		return len(tr.events) == 4
	}, defaultWait, pollEvery)
	whats, gids = tr.take()
	assert.Equal(t, []string{"codec", "in_payload", "codec", "end"}, whats, "the second message reaches the codec, with no InPayload")
	assert.Len(t, gids, 1, "one goroutine")
}

// TestPinGRPCCodecSeesDecompressedRequests pins that the server codec is
// given each export RPC's decompressed message, decoded into the request
// types read from pdata.
func TestPinGRPCCodecSeesDecompressedRequests(t *testing.T) {
	tr, conn, stages := pinServer(t)
	td, md, ld := traces(2, "a", "b"), metrics("m"), logs("l")
	gz := grpc.UseCompressor("gzip")
	_, err := ptraceotlp.NewGRPCClient(conn).Export(context.Background(), ptraceotlp.NewExportRequestFromTraces(td), gz)
	require.NoError(t, err)
	_, err = pmetricotlp.NewGRPCClient(conn).Export(context.Background(), pmetricotlp.NewExportRequestFromMetrics(md), gz)
	require.NoError(t, err)
	_, err = plogotlp.NewGRPCClient(conn).Export(context.Background(), plogotlp.NewExportRequestFromLogs(ld), gz)
	require.NoError(t, err)

	tr.mu.Lock()
	decoded := tr.decoded
	tr.mu.Unlock()
	assert.Equal(t, []otlpwire.Signal{otlpwire.SignalTraces, otlpwire.SignalMetrics, otlpwire.SignalLogs}, decoded)
	mb, err := pmetricotlp.NewExportRequestFromMetrics(md).MarshalProto()
	require.NoError(t, err)
	lb, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	require.NoError(t, err)
	assert.Equal(t, [][]byte{marshal(t, td)}, stages[otlpwire.SignalTraces].seen())
	assert.Equal(t, [][]byte{mb}, stages[otlpwire.SignalMetrics].seen())
	assert.Equal(t, [][]byte{lb}, stages[otlpwire.SignalLogs].seen())
}

// TestPinConfiggrpcAuthBeforeMiddleware pins that configgrpc (through the
// real otlp receiver) runs its authentication interceptor before the
// middleware's: the stage runs only on authenticated requests, with the
// authenticator's context.
func TestPinConfiggrpcAuthBeforeMiddleware(t *testing.T) {
	s := &stageRecorder{}
	a := newAuthRig(t, s)
	var mu sync.Mutex
	var authed []bool
	a.ext.grpc.intercepted = func(ctx context.Context) {
		mu.Lock()
		authed = append(authed, ctx.Value(authedKey{}) != nil)
		mu.Unlock()
	}
	require.NoError(t, a.start())
	conn := a.conn()
	body := marshal(t, traces(1, "a"))
	require.NoError(t, a.export(withToken(context.Background(), "good"), conn, body))
	err := a.export(withToken(context.Background(), "bad"), conn, body)
	require.Equal(t, codes.Unauthenticated, status.Code(err))
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []bool{true}, authed, "our interceptor runs once, after authentication accepted")
	assert.Len(t, s.seen(), 1)
}

// TestPinRequestTypes pins that pdata still exposes the request types.
func TestPinRequestTypes(t *testing.T) {
	rt, err := findRequestTypes()
	require.NoError(t, err)
	for i, typ := range rt {
		require.NotNil(t, typ, "signal %d", i+1)
		sig, ok := rt.signal(reflectNew(typ))
		assert.True(t, ok)
		assert.Equal(t, otlpwire.Signal(i+1), sig)
	}
}
