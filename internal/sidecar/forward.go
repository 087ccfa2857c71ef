// SPDX-License-Identifier: Apache-2.0

package sidecar

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
	"github.com/otelcol-sdp/otelcol-sdp/sdp"
	"github.com/otelcol-sdp/otelcol-sdp/sdp/transport"
)

// Export methods of the OTLP/gRPC services, by SDP signal number.
var exportMethods = map[uint8]string{
	1: "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
	2: "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export",
	3: "/opentelemetry.proto.collector.logs.v1.LogsService/Export",
	4: "/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export",
}

// profilesVersion is the metadata that names the development version of
// the profiles layout a request is encoded in, as pdata's profiles client
// sends it: the one otlpwire pins (see otlpwire.ProfilesProtoVersion), so
// a server of another version refuses the request instead of misreading it.
var profilesVersion = metadata.Pairs("otlp-profiles-development-version", "1")

// RawCodec is a gRPC codec that passes messages through as bytes: Marshal
// takes a *[]byte (or []byte) and Unmarshal fills a *[]byte with a copy.
// Its name is "proto" so that the content type is application/grpc+proto,
// which an OTLP server expects: the bytes are a protobuf message, only not
// decoded here.
type RawCodec struct{}

// Marshal returns the bytes of v, a []byte or *[]byte, without copying.
func (RawCodec) Marshal(v any) (mem.BufferSlice, error) {
	switch m := v.(type) {
	case []byte:
		return mem.BufferSlice{mem.SliceBuffer(m)}, nil
	case *[]byte:
		return mem.BufferSlice{mem.SliceBuffer(*m)}, nil
	}
	return nil, fmt.Errorf("raw codec cannot marshal %T", v)
}

// Unmarshal copies data into v, a *[]byte.
func (RawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(*[]byte)
	if !ok {
		return fmt.Errorf("raw codec cannot unmarshal into %T", v)
	}
	*m = data.Materialize()
	return nil
}

// Name returns "proto".
func (RawCodec) Name() string { return "proto" }

// forwardSink sends each payload as the request of the signal's Export
// method.
type forwardSink struct {
	conn    *grpc.ClientConn
	timeout time.Duration
}

func newForwardSink(endpoint string, timeout time.Duration) (*forwardSink, error) {
	conn, err := grpc.NewClient(endpoint,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(RawCodec{})))
	if err != nil {
		return nil, fmt.Errorf("forward endpoint %q: %w", endpoint, err)
	}
	return &forwardSink{conn: conn, timeout: timeout}, nil
}

func (s *forwardSink) consume(f *sdp.ResourceFrame) (sdp.AckStatus, string) {
	method, ok := exportMethods[f.Signal]
	if !ok {
		return sdp.AckRejected, fmt.Sprintf("forward mode cannot export %s", signalName(f.Signal))
	}
	// f.OTLP is only valid during the Handler call; gRPC may still hold the
	// request buffer when a failed call returns, so it gets its own copy.
	req := append([]byte(nil), f.OTLP...)
	var resp []byte
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	if f.Signal == uint8(otlpwire.SignalProfiles) {
		ctx = metadata.NewOutgoingContext(ctx, profilesVersion)
	}
	err := s.conn.Invoke(ctx, method, &req, &resp)
	if err == nil {
		return sdp.AckAccepted, ""
	}
	st := status.Convert(err)
	// The message is the OTLP server's; it is cut well within the Ack
	// detail limit.
	detail := fmt.Sprintf("forwarding to OTLP/gRPC: %s: %s", st.Code(), transport.Truncate(st.Message()))
	if retryable(st.Code()) {
		return sdp.AckRetry, detail
	}
	return sdp.AckRejected, detail
}

// retryable follows the OTLP/gRPC specification's retryable codes, with
// ResourceExhausted counted as retryable (a throttled server).
func retryable(c codes.Code) bool {
	switch c {
	case codes.Canceled, codes.DeadlineExceeded, codes.Aborted, codes.OutOfRange,
		codes.Unavailable, codes.DataLoss, codes.ResourceExhausted:
		return true
	}
	return false
}

func (s *forwardSink) close() error { return s.conn.Close() }
