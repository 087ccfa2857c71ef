// SPDX-License-Identifier: Apache-2.0

package wirestageextension

import (
	"context"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/extension/extensionauth"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

var authID = component.MustNewID("testauth")

// authedKey marks a context the test authenticator accepted.
type authedKey struct{}

// tokenAuth accepts "Bearer good", holds "Bearer slow" until the RPC is
// cancelled or times out, and refuses anything else.
type tokenAuth struct {
	component.StartFunc
	component.ShutdownFunc
}

var _ extensionauth.Server = tokenAuth{}

func (tokenAuth) Authenticate(ctx context.Context, headers map[string][]string) (context.Context, error) {
	switch v := headers["authorization"]; {
	case len(v) == 1 && v[0] == "Bearer good":
		return context.WithValue(ctx, authedKey{}, true), nil
	case len(v) == 1 && v[0] == "Bearer slow":
		<-ctx.Done()
		return ctx, status.FromContextError(ctx.Err()).Err()
	}
	return ctx, errors.New("bad token")
}

// authRig is a real otlp receiver (configgrpc) with the test authenticator
// before wirestage, at most 1 MiB per message, feeding sink.
type authRig struct {
	*rig
	sink consumertest.TracesSink
}

func newAuthRig(t *testing.T, s Stage) *authRig {
	t.Helper()
	a := &authRig{rig: newRig(t, divertConfig())}
	a.host.exts[authID] = tokenAuth{}
	if s != nil {
		register(t, a.rig, stageID, s, true)
	}
	return a
}

func (a *authRig) start() error {
	t := a.t
	t.Helper()
	a.grpcAddr = freeAddr(t)
	f := otlpreceiver.NewFactory()
	cfg := f.CreateDefaultConfig()
	require.NoError(t, confmap.NewFromStringMap(map[string]any{
		"protocols": map[string]any{
			"grpc": map[string]any{
				"endpoint":              a.grpcAddr,
				"max_recv_msg_size_mib": 1,
				"auth":                  map[string]any{"authenticator": authID.String()},
				"middlewares":           []any{map[string]any{"id": extID.String()}},
			},
		},
	}).Unmarshal(&cfg))
	set := receivertest.NewNopSettings(f.Type())
	set.TelemetrySettings = a.tel.NewTelemetrySettings()
	recv, err := f.CreateTraces(context.Background(), set, cfg, &a.sink)
	require.NoError(t, err)
	if err := recv.Start(context.Background(), a.host); err != nil {
		return err
	}
	t.Cleanup(func() { require.NoError(t, recv.Shutdown(context.Background())) })
	return nil
}

func (a *authRig) conn(opts ...grpc.DialOption) *grpc.ClientConn {
	conn, err := grpc.NewClient(a.grpcAddr, append([]grpc.DialOption{grpc.WithTransportCredentials(insecureCreds())}, opts...)...)
	require.NoError(a.t, err)
	a.t.Cleanup(func() { _ = conn.Close() })
	return conn
}

func withToken(ctx context.Context, token string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
}

// export sends body as one raw Export message.
func (a *authRig) export(ctx context.Context, conn *grpc.ClientConn, body []byte) error {
	return conn.Invoke(ctx, methodTraces, rawMessage(body), new(rawMessage), grpc.ForceCodecV2(rawCodec{}))
}

// exportMessages sends the messages on one Export stream, as a client that
// ignores that Export is unary.
func exportMessages(ctx context.Context, conn *grpc.ClientConn, msgs ...[]byte) error {
	desc := &grpc.StreamDesc{StreamName: "Export", ClientStreams: true}
	cs, err := conn.NewStream(ctx, desc, methodTraces, grpc.ForceCodecV2(rawCodec{}))
	if err != nil {
		return err
	}
	for _, m := range msgs {
		if err := cs.SendMsg(rawMessage(m)); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
	}
	if err := cs.CloseSend(); err != nil {
		return err
	}
	return cs.RecvMsg(new(rawMessage))
}

// requireReleased waits for the hand-off to hold nothing: End runs after
// the client has its answer.
func requireReleased(t *testing.T, w *wireStage) {
	t.Helper()
	require.Eventually(t, func() bool {
		return w.grpc.held.buffers.Load() == 0 && w.grpc.held.bytes.Load() == 0
	}, 5*time.Second, 5*time.Millisecond, "held %d buffers, %d bytes", w.grpc.held.buffers.Load(), w.grpc.held.bytes.Load())
}

// heldBytesMetric reads otelcol_extension_wirestage_grpc_held_bytes.
func (r *rig) heldBytesMetric() int64 {
	m, err := r.tel.GetMetric("otelcol_extension_wirestage_grpc_held_bytes")
	if err != nil {
		return -1
	}
	var n int64
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		n += dp.Value
	}
	return n
}

func (r *rig) handoffMisses() int64 {
	m, err := r.tel.GetMetric("otelcol_extension_wirestage_grpc_handoff_misses")
	if err != nil {
		return 0
	}
	var n int64
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		n += dp.Value
	}
	return n
}

// blockingStage holds each request until its context ends.
type blockingStage struct{ started chan struct{} }

func (s *blockingStage) ProcessRequest(ctx context.Context, _ otlpwire.Request) (Result, error) {
	s.started <- struct{}{}
	<-ctx.Done()
	return Result{}, ctx.Err()
}

// TestGRPCHandoffReleasesEveryPath drives every way an Export RPC can end
// through a real otlp receiver and checks that the hand-off holds nothing
// afterwards, and that the path kept (or, for the paths refused before the
// codec, did not keep) the request's bytes.
func TestGRPCHandoffReleasesEveryPath(t *testing.T) {
	body := marshal(t, traces(4, "a", "b"))
	good := withToken(context.Background(), "good")

	t.Run("one_message", func(t *testing.T) {
		s := &stageRecorder{divert: true, keep: []int{1}}
		a := newAuthRig(t, s)
		require.NoError(t, a.start())
		require.NoError(t, a.export(good, a.conn(), body))
		requireReleased(t, a.ext)
		assert.Equal(t, int64(1), a.ext.grpc.held.kept.Load())
		assert.Len(t, s.seen(), 1)
		assert.Equal(t, 4, a.sink.SpanCount(), "the kept resource reached the receiver")
		assert.Zero(t, a.heldBytesMetric())
	})
	t.Run("two_messages_on_unary", func(t *testing.T) {
		s := &stageRecorder{divert: true}
		a := newAuthRig(t, s)
		require.NoError(t, a.start())
		conn := a.conn()
		for range 3 {
			err := exportMessages(good, conn, body, body)
			require.Equal(t, codes.Internal, status.Code(err), "%v", err)
			assert.Contains(t, status.Convert(err).Message(), "cardinality violation")
		}
		requireReleased(t, a.ext)
		assert.Equal(t, int64(6), a.ext.grpc.held.kept.Load(), "grpc-go decodes both messages")
		assert.Empty(t, s.seen(), "a refused RPC never reaches the stage")
		assert.Zero(t, a.sink.SpanCount())
		assert.Zero(t, a.heldBytesMetric())
	})
	t.Run("refused_by_authentication", func(t *testing.T) {
		s := &stageRecorder{divert: true}
		a := newAuthRig(t, s)
		require.NoError(t, a.start())
		conn := a.conn()
		for _, ctx := range []context.Context{context.Background(), withToken(context.Background(), "bad")} {
			err := a.export(ctx, conn, body)
			require.Equal(t, codes.Unauthenticated, status.Code(err), "%v", err)
		}
		err := exportMessages(withToken(context.Background(), "bad"), conn, body, body)
		require.Error(t, err)
		requireReleased(t, a.ext)
		assert.Equal(t, int64(4), a.ext.grpc.held.kept.Load(), "the codec runs before authentication")
		assert.Empty(t, s.seen())
	})
	t.Run("deadline_exceeded_before_the_stage", func(t *testing.T) {
		s := &stageRecorder{divert: true}
		a := newAuthRig(t, s)
		require.NoError(t, a.start())
		// The authenticator holds the RPC until this deadline; it is long
		// enough for the request to reach the server's codec on a loaded
		// machine (100 ms was not, once).
		ctx, cancel := context.WithTimeout(withToken(context.Background(), "slow"), 2*time.Second)
		defer cancel()
		err := a.export(ctx, a.conn(), body)
		require.Equal(t, codes.DeadlineExceeded, status.Code(err), "%v", err)
		requireReleased(t, a.ext)
		assert.Equal(t, int64(1), a.ext.grpc.held.kept.Load())
		assert.Empty(t, s.seen())
	})
	t.Run("cancelled_in_the_stage", func(t *testing.T) {
		s := &blockingStage{started: make(chan struct{}, 1)}
		a := newAuthRig(t, s)
		require.NoError(t, a.start())
		ctx, cancel := context.WithCancel(good)
		go func() { <-s.started; cancel() }()
		err := a.export(ctx, a.conn(), body)
		require.Equal(t, codes.Canceled, status.Code(err), "%v", err)
		requireReleased(t, a.ext)
		assert.Equal(t, int64(1), a.ext.grpc.held.kept.Load())
	})
	t.Run("deadline_exceeded_in_the_stage", func(t *testing.T) {
		s := &blockingStage{started: make(chan struct{}, 1)}
		a := newAuthRig(t, s)
		require.NoError(t, a.start())
		ctx, cancel := context.WithTimeout(good, 200*time.Millisecond)
		defer cancel()
		err := a.export(ctx, a.conn(), body)
		// The client's timer and the stage's refusal (UNAVAILABLE) race.
		require.Contains(t, []codes.Code{codes.DeadlineExceeded, codes.Unavailable}, status.Code(err), "%v", err)
		requireReleased(t, a.ext)
		assert.Equal(t, int64(1), a.ext.grpc.held.kept.Load())
	})
	t.Run("decompression_error", func(t *testing.T) {
		s := &stageRecorder{divert: true}
		a := newAuthRig(t, s)
		require.NoError(t, a.start())
		err := a.export(good, a.conn(grpc.WithCompressor(brokenGzip{})), body)
		require.Equal(t, codes.Internal, status.Code(err), "%v", err)
		requireReleased(t, a.ext)
		assert.Zero(t, a.ext.grpc.held.kept.Load(), "nothing reaches the codec")
		assert.Empty(t, s.seen())
	})
	t.Run("oversized", func(t *testing.T) {
		s := &stageRecorder{divert: true}
		a := newAuthRig(t, s)
		require.NoError(t, a.start())
		big := marshal(t, traces(1, strings.Repeat("x", 1<<20+1)))
		err := a.export(good, a.conn(), big)
		require.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
		requireReleased(t, a.ext)
		assert.Zero(t, a.ext.grpc.held.kept.Load(), "nothing reaches the codec")
	})
	t.Run("malformed", func(t *testing.T) {
		s := &stageRecorder{divert: true}
		a := newAuthRig(t, s)
		require.NoError(t, a.start())
		err := a.export(good, a.conn(), []byte{0x0a, 0x05, 0x01})
		require.Equal(t, codes.Internal, status.Code(err), "%v", err)
		requireReleased(t, a.ext)
		assert.Equal(t, int64(1), a.ext.grpc.held.kept.Load())
	})
}

// brokenGzip claims gzip and sends bytes no gzip reader accepts.
type brokenGzip struct{}

func (brokenGzip) Do(w io.Writer, _ []byte) error {
	_, err := w.Write([]byte("not gzip at all"))
	return err
}

func (brokenGzip) Type() string { return "gzip" }

// TestGRPCHandoffMissFailsClosed forces the hand-off to lose a request's
// bytes: the client must get a retryable error, never OK, the receiver
// must see nothing, and the miss is counted.
func TestGRPCHandoffMissFailsClosed(t *testing.T) {
	s := &stageRecorder{divert: true, keep: []int{0}}
	a := newAuthRig(t, s)
	a.ext.grpc.loseHandoff = true
	core, logs := observer.New(zap.InfoLevel)
	a.ext.logger = zap.New(core)
	require.NoError(t, a.start())
	client := ptraceotlp.NewGRPCClient(a.conn())
	for range 3 {
		_, err := client.Export(withToken(context.Background(), "good"), ptraceotlp.NewExportRequestFromTraces(traces(2, "a", "b")))
		require.Equal(t, codes.Unavailable, status.Code(err), "a miss is never OK: %v", err)
		assert.Contains(t, status.Convert(err).Message(), "did not reach the stage")
	}
	requireReleased(t, a.ext)
	assert.Empty(t, s.seen())
	assert.Zero(t, a.sink.SpanCount(), "the receiver never sees an undecoded request")
	assert.Equal(t, int64(3), a.handoffMisses())
	missed := logs.FilterMessageSnippet("hand-off miss").All()
	require.Len(t, missed, 3)
	assert.Equal(t, zap.ErrorLevel, missed[0].Level)
	assert.Equal(t, "traces", missed[0].ContextMap()["signal"])
}

// TestGRPCRefusesToStartWithoutRequestTypes: when pdata no longer has the
// field the request types are read from, the receiver, and with it the
// Collector, refuses to start with wirestage on gRPC, saying why.
func TestGRPCRefusesToStartWithoutRequestTypes(t *testing.T) {
	type renamedWrapper struct{ state int } //nolint:unused // stands for a changed pdata wrapper
	broken := [signals]reflect.Type{reflect.TypeFor[ptraceotlp.ExportRequest](), reflect.TypeFor[renamedWrapper](), reflect.TypeFor[ptraceotlp.ExportRequest]()}
	_, err := requestTypesOf(broken)
	require.ErrorIs(t, err, ErrGRPCUnsupported)

	a := newAuthRig(t, &stageRecorder{})
	a.ext.grpc.findTypes = func() (requestTypes, error) { return requestTypesOf(broken) }
	_, err = a.ext.GetGRPCServerOptions(context.Background())
	require.ErrorIs(t, err, ErrGRPCUnsupported)
	err = a.start()
	require.ErrorIs(t, err, ErrGRPCUnsupported)
	assert.ErrorContains(t, err, "wirestage/test cannot run the stages on gRPC")
	assert.ErrorContains(t, err, "renamedWrapper has no orig field")
}

// TestGRPCProbe: the start-up probe passes on the grpc-go this module pins,
// and refuses, with the receiver's start, a build where grpc-go does not
// decode export requests into the request types the hook looks for.
func TestGRPCProbe(t *testing.T) {
	rt, err := findRequestTypes()
	require.NoError(t, err)
	require.NoError(t, probeGRPC(context.Background(), rt))

	swapped := rt
	swapped[0], swapped[1] = rt[1], rt[0]
	err = probeGRPC(context.Background(), swapped)
	require.Error(t, err)
	assert.ErrorContains(t, err, "not the traces request type")

	a := newAuthRig(t, &stageRecorder{})
	a.ext.grpc.findTypes = func() (requestTypes, error) { return swapped, nil }
	err = a.start()
	require.ErrorIs(t, err, ErrGRPCUnsupported)
	assert.ErrorContains(t, err, "grpc-go does not call the server as the hand-off needs")
}
