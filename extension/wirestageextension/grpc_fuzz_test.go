// SPDX-License-Identifier: Apache-2.0

package wirestageextension

import (
	"bytes"
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/stats"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// How FuzzGRPCHandoff drives one RPC, as grpc-go does (pinned by
// TestPinGRPCUnaryOrder).
const (
	rpcOneMessage   = iota // codec, InPayload, interceptors, End
	rpcTwoMessages         // codec, InPayload, codec, End: cardinality violation
	rpcRefusedFirst        // codec, InPayload, End: an earlier interceptor refused
	rpcModes
)

// FuzzGRPCHandoff drives arbitrary request bytes through the gRPC side of
// the stage in-process (codec, stats handler, interceptor) with a diverting
// stage registered, the bytes split into one or several received buffers.
// Nothing may panic, the receiver is called only with a request that
// decodes to the kept resources, and after each RPC's End the hand-off
// holds nothing.
func FuzzGRPCHandoff(f *testing.F) {
	valid := marshal(f, traces(2, "a", "b", "c"))
	f.Add(valid, uint16(0), uint8(rpcOneMessage), uint64(0b101))
	f.Add(valid, uint16(7), uint8(rpcOneMessage), uint64(0))
	f.Add(valid, uint16(3), uint8(rpcTwoMessages), ^uint64(0))
	f.Add(valid, uint16(0), uint8(rpcRefusedFirst), uint64(1))
	f.Add(valid[:len(valid)-3], uint16(5), uint8(rpcOneMessage), uint64(1))
	f.Add([]byte{0x0a, 0x05, 0x01}, uint16(1), uint8(rpcOneMessage), uint64(1))
	f.Add([]byte{}, uint16(0), uint8(rpcOneMessage), uint64(1))

	w, mask := newMaskStage(f)
	g, err := w.newGRPCStage(context.Background())
	if err != nil {
		f.Fatal(err)
	}
	info := &grpc.UnaryServerInfo{FullMethod: methodTraces}

	f.Fuzz(func(t *testing.T, body []byte, split uint16, mode uint8, m uint64) {
		*mask = m
		ctx := g.TagRPC(context.Background(), &stats.RPCTagInfo{FullMethodName: methodTraces})
		msg := reflectNew(g.types[otlpwire.SignalTraces-1])
		if err := unmarshalReceived(g, body, int(split), msg); err != nil {
			t.Fatalf("the codec refused to keep a request: %v", err)
		}
		g.HandleRPC(ctx, &stats.InPayload{Payload: msg})
		var handled []byte
		var callErr error
		switch mode % rpcModes {
		case rpcOneMessage:
			_, callErr = g.intercept(ctx, msg, info, func(_ context.Context, req any) (any, error) {
				b, err := g.delegate.Marshal(req)
				if err != nil {
					t.Fatal(err)
				}
				handled = b.Materialize()
				return nil, nil
			})
		case rpcTwoMessages:
			if err := unmarshalReceived(g, body, int(split)/2, msg); err != nil {
				t.Fatal(err)
			}
		}
		g.HandleRPC(ctx, &stats.End{})
		if n, b := w.grpc.held.buffers.Load(), w.grpc.held.bytes.Load(); n != 0 || b != 0 {
			t.Fatalf("after End the hand-off holds %d buffers, %d bytes", n, b)
		}
		if mode%rpcModes != rpcOneMessage {
			return
		}
		items, err := otlpwire.NewRequest(otlpwire.SignalTraces, body).ItemCount()
		if err != nil {
			// Left untouched for the receiver: it gets exactly what pdata
			// decodes from the request, or an error.
			if handled != nil {
				whole := reflectNew(g.types[otlpwire.SignalTraces-1])
				if err := g.delegate.Unmarshal(mem.BufferSlice{mem.SliceBuffer(body)}, whole); err != nil {
					t.Fatalf("the receiver got a request pdata cannot decode: %v", err)
				}
				want, err := g.delegate.Marshal(whole)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(want.Materialize(), handled) {
					t.Fatal("the receiver got something else than the request the stage left untouched")
				}
			}
			return
		}
		if callErr != nil {
			// Valid framing that pdata still rejects (bytes inside an
			// item) is refused, never passed on.
			return
		}
		var want int
		i := 0
		for _, err := range otlpwire.NewRequest(otlpwire.SignalTraces, body).Resources() {
			if err != nil {
				t.Fatal(err)
			}
			if m&(1<<(i%64)) != 0 {
				want++
			}
			i++
		}
		if want == 0 {
			if len(handled) != 0 {
				t.Fatalf("nothing was kept, the receiver got %d bytes", len(handled))
			}
			return
		}
		got := 0
		for _, err := range otlpwire.NewRequest(otlpwire.SignalTraces, handled).Resources() {
			if err != nil {
				t.Fatal(err)
			}
			got++
		}
		if got != want {
			t.Fatalf("the receiver got %d resources, want %d (of %d items)", got, want, items)
		}
	})
}

// unmarshalReceived gives the codec body as gRPC does, and frees the
// received buffers when it returns, as gRPC does.
func unmarshalReceived(g *grpcStage, body []byte, at int, msg any) error {
	data := received(body, at)
	defer data.Free()
	return g.Unmarshal(data, msg)
}

// received splits body into buffers as gRPC may hand it to the codec: one
// buffer when at is 0, else pieces of at bytes, from a pool so that freeing
// them twice or too early shows up.
func received(body []byte, at int) mem.BufferSlice {
	pool := mem.DefaultBufferPool()
	if at <= 0 || at >= len(body) {
		return mem.BufferSlice{mem.Copy(body, pool)}
	}
	var s mem.BufferSlice
	for len(body) > 0 {
		n := min(at, len(body))
		s = append(s, mem.Copy(body[:n], pool))
		body = body[n:]
	}
	return s
}
