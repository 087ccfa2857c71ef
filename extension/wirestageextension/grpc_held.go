// SPDX-License-Identifier: Apache-2.0

package wirestageextension

import (
	"context"
	"math/bits"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc/mem"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// kept is the decompressed bytes of one request message that the codec did
// not decode.
type kept struct {
	sig otlpwire.Signal
	buf mem.Buffer
	n   int
}

// heldCount is what the gRPC hand-off holds at a moment, across every
// server of one extension.
type heldCount struct {
	buffers atomic.Int64
	bytes   atomic.Int64
	// kept counts the buffers ever kept, so that a test can tell that a
	// path it drives did keep something.
	kept atomic.Int64
}

// keep takes a reference to data that outlives it: gRPC frees data when
// Unmarshal returns. A message in one buffer (most uncompressed requests)
// is shared, not copied; a message in several is copied once into a buffer
// from the stage's pool, which the copy overwrites entirely.
func (g *grpcStage) keep(sig otlpwire.Signal, data mem.BufferSlice) *kept {
	k := &kept{sig: sig, n: data.Len()}
	switch {
	case len(data) == 1:
		data[0].Ref()
		k.buf = data[0]
	case k.n == 0:
		k.buf = mem.SliceBuffer(nil)
	default:
		b := g.pool.Get(k.n)
		data.CopyTo(*b)
		k.buf = mem.NewBuffer(b, &g.pool)
	}
	g.w.grpc.held.kept.Add(1)
	g.w.grpc.held.buffers.Add(1)
	g.w.grpc.held.bytes.Add(int64(k.n))
	g.w.tb.ExtensionWirestageGrpcHeldBytes.Add(context.Background(), int64(k.n), g.w.idOpts...)
	return k
}

// release frees k's buffer; every kept buffer is released exactly once.
func (g *grpcStage) release(k *kept) {
	k.buf.Free()
	g.w.grpc.held.buffers.Add(-1)
	g.w.grpc.held.bytes.Add(-int64(k.n))
	g.w.tb.ExtensionWirestageGrpcHeldBytes.Add(context.Background(), -int64(k.n), g.w.idOpts...)
}

const (
	minPoolShift = 12 // 4 KiB
	maxPoolShift = 24 // 16 MiB, four times gRPC's default max_recv_msg_size
)

// sizeClassPool is a mem.BufferPool of power-of-two capacities that, unlike
// grpc-go's default pool, does not clear the buffers it hands out: keep
// overwrites every byte it uses, and clearing a 1 MiB-class buffer on every
// request cost a measurable share of the stage's CPU.
type sizeClassPool struct {
	classes [maxPoolShift - minPoolShift + 1]sync.Pool
}

// class returns the index of the smallest class holding n bytes, or -1.
func (p *sizeClassPool) class(n int) int {
	shift := minPoolShift
	if n > 1<<minPoolShift {
		shift = bits.Len(uint(n - 1))
	}
	if shift > maxPoolShift {
		return -1
	}
	return shift - minPoolShift
}

func (p *sizeClassPool) Get(n int) *[]byte {
	c := p.class(n)
	if c < 0 {
		b := make([]byte, n)
		return &b
	}
	if b, ok := p.classes[c].Get().(*[]byte); ok {
		*b = (*b)[:n]
		return b
	}
	b := make([]byte, n, 1<<(c+minPoolShift))
	return &b
}

func (p *sizeClassPool) Put(b *[]byte) {
	c := p.class(cap(*b))
	if c < 0 || cap(*b) != 1<<(c+minPoolShift) {
		return
	}
	p.classes[c].Put(b)
}
