// SPDX-License-Identifier: Apache-2.0

package e2ebench

import (
	"context"
	"net"
	"sync/atomic"

	"google.golang.org/grpc"

	"github.com/otelcol-sdp/otelcol-sdp/internal/sidecar"
)

// Sink is the OTLP/gRPC server behind the Collector's exporter. It counts the
// items of every request on the wire (no decode, so that its own cost stays
// small: it shares the machine with the system under test) and answers with
// an empty success response. It serves the export service of every signal
// in Signals, profiles included.
type Sink struct {
	srv    *grpc.Server
	lis    net.Listener
	items  [len(signalNames)]atomic.Int64 // by index in Signals
	errors atomic.Int64
}

// NewSink listens on a free port of 127.0.0.1 and serves until Stop.
func NewSink() (*Sink, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Sink{lis: lis, srv: grpc.NewServer(grpc.ForceServerCodecV2(sidecar.RawCodec{}))}
	for i, signal := range Signals {
		s.srv.RegisterService(&grpc.ServiceDesc{
			ServiceName: grpcServices[signal],
			HandlerType: (*any)(nil),
			Methods: []grpc.MethodDesc{{
				MethodName: "Export",
				Handler: func(_ any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
					var b []byte
					if err := dec(&b); err != nil {
						s.errors.Add(1)
						return nil, err
					}
					n, err := CountItems(signal, b)
					if err != nil {
						s.errors.Add(1)
						return nil, err
					}
					s.items[i].Add(int64(n))
					return []byte{}, nil
				},
			}},
		}, nil)
	}
	go s.srv.Serve(lis)
	return s, nil
}

// Endpoint is the host:port the sink listens on.
func (s *Sink) Endpoint() string { return s.lis.Addr().String() }

// Items returns the items of a signal received so far.
func (s *Sink) Items(signal string) int64 {
	for i, name := range Signals {
		if name == signal {
			return s.items[i].Load()
		}
	}
	return 0
}

// Errors returns the requests the sink could not read.
func (s *Sink) Errors() int64 { return s.errors.Load() }

// Stop stops serving.
func (s *Sink) Stop() { s.srv.Stop() }
