// SPDX-License-Identifier: Apache-2.0

package wirestageextension

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/encoding/gzip"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// probeGRPC checks, on an in-memory server of the grpc-go this binary is
// built with, the calls the hand-off relies on: for a gzip-compressed
// traces Export the codec is given the decompressed message and a message
// of the traces request type, then InPayload, the interceptor and End see
// that same message in that order; a second message on the same unary RPC
// reaches the codec again, with no InPayload and no interceptor, and the
// RPC fails. It runs when a gRPC server asks for the extension's options,
// so a grpc-go that behaves otherwise refuses to start the receiver.
func probeGRPC(ctx context.Context, types requestTypes) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	p := &probe{types: types, delegate: encoding.GetCodecV2("proto")}
	lis := bufconn.Listen(1 << 16)
	srv := grpc.NewServer(grpc.ForceServerCodecV2(p), grpc.StatsHandler(p), grpc.ChainUnaryInterceptor(p.intercept))
	ptraceotlp.RegisterGRPCServer(srv, &probeServer{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis)
	}()
	defer func() {
		srv.Stop()
		<-done
	}()
	conn, err := grpc.NewClient("passthrough:///wirestage-probe",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("probe client: %w", err)
	}
	defer conn.Close()

	td := ptrace.NewTraces()
	td.ResourceSpans().AppendEmpty().Resource().Attributes().PutStr("service.name", "wirestage-probe")
	req := ptraceotlp.NewExportRequestFromTraces(td)
	body, err := req.MarshalProto()
	if err != nil {
		return err
	}
	if _, err := ptraceotlp.NewGRPCClient(conn).Export(ctx, req, grpc.UseCompressor(gzip.Name)); err != nil {
		return fmt.Errorf("probe Export: %w", err)
	}
	if err := p.expect(ctx, body, "codec", "in_payload", "interceptor", "end"); err != nil {
		return fmt.Errorf("one message: %w", err)
	}

	cs, err := conn.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true}, methodTraces, grpc.ForceCodecV2(probeRawCodec{}))
	if err != nil {
		return fmt.Errorf("probe stream: %w", err)
	}
	for range 2 {
		if cs.SendMsg(body) != nil {
			break
		}
	}
	_ = cs.CloseSend()
	if err := cs.RecvMsg(new([]byte)); status.Code(err) != codes.Internal {
		return fmt.Errorf("two messages on a unary RPC were answered %v, want Internal", err)
	}
	if err := p.expect(ctx, body, "codec", "in_payload", "codec", "end"); err != nil {
		return fmt.Errorf("two messages: %w", err)
	}
	return nil
}

// probe records what grpc-go calls, and with which message.
type probe struct {
	types    requestTypes
	delegate encoding.CodecV2

	mu     sync.Mutex
	events []string
	msgs   []any
	bodies [][]byte
}

func (p *probe) record(what string, msg any, body []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.events = append(p.events, what)
	p.msgs = append(p.msgs, msg)
	if body != nil {
		p.bodies = append(p.bodies, body)
	}
}

// expect waits for the events of one RPC (End may follow the client's
// answer) and checks them, then forgets them.
func (p *probe) expect(ctx context.Context, body []byte, want ...string) error {
	for {
		p.mu.Lock()
		n := len(p.events)
		p.mu.Unlock()
		if n >= len(want) {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("grpc-go called %v, want %v", p.events, want)
		case <-time.After(time.Millisecond):
		}
	}
	p.mu.Lock()
	defer func() {
		p.events, p.msgs, p.bodies = nil, nil, nil
		p.mu.Unlock()
	}()
	if !slices.Equal(p.events, want) {
		return fmt.Errorf("grpc-go called %v, want %v", p.events, want)
	}
	for i, m := range p.msgs {
		if p.events[i] == "end" {
			continue
		}
		if m != p.msgs[0] {
			return fmt.Errorf("%s saw another message than the codec", p.events[i])
		}
	}
	if sig, ok := p.types.signal(p.msgs[0]); !ok || sig != otlpwire.SignalTraces {
		return fmt.Errorf("the codec decodes into %T, not the traces request type", p.msgs[0])
	}
	for _, b := range p.bodies {
		if !bytes.Equal(b, body) {
			return fmt.Errorf("the codec was given %d bytes, not the %d-byte decompressed request", len(b), len(body))
		}
	}
	return nil
}

func (p *probe) Name() string                           { return "proto" }
func (p *probe) Marshal(v any) (mem.BufferSlice, error) { return p.delegate.Marshal(v) }

func (p *probe) Unmarshal(data mem.BufferSlice, v any) error {
	p.record("codec", v, data.Materialize())
	return nil
}

func (p *probe) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }

func (p *probe) HandleRPC(_ context.Context, s stats.RPCStats) {
	switch s := s.(type) {
	case *stats.InPayload:
		p.record("in_payload", s.Payload, nil)
	case *stats.End:
		p.record("end", nil, nil)
	}
}

func (p *probe) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }

func (p *probe) HandleConn(context.Context, stats.ConnStats) {}

func (p *probe) intercept(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	p.record("interceptor", req, nil)
	return handler(ctx, req)
}

type probeServer struct {
	ptraceotlp.UnimplementedGRPCServer
}

func (*probeServer) Export(context.Context, ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	return ptraceotlp.NewExportResponse(), nil
}

// probeRawCodec sends []byte messages as they are.
type probeRawCodec struct{}

func (probeRawCodec) Name() string { return "proto" }

func (probeRawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(v.([]byte))}, nil
}

func (probeRawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	*v.(*[]byte) = data.Materialize()
	return nil
}
