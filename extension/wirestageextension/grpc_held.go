// SPDX-License-Identifier: Apache-2.0

package wirestageextension

import (
	"sync/atomic"

	"google.golang.org/grpc/mem"

	"github.com/otelcol-sdp/otelcol-sdp/internal/bufpool"
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
	return k
}

// release frees k's buffer; every kept buffer is released exactly once.
func (g *grpcStage) release(k *kept) {
	k.buf.Free()
	g.w.grpc.held.buffers.Add(-1)
	g.w.grpc.held.bytes.Add(-int64(k.n))
}

// sizeClassPool is the mem.BufferPool that keep copies multi-buffer
// messages into: bufpool's classes, which unlike grpc-go's default pool do
// not clear the buffers they hand out. keep overwrites every byte it uses,
// and clearing a 1 MiB-class buffer on every request cost a measurable
// share of the stage's CPU.
type sizeClassPool struct {
	classes bufpool.Pool
	// out counts the buffers handed out and not yet put back, so that a
	// test can tell that every buffer taken comes back (release frees it).
	out atomic.Int64
}

// Get boxes the buffer, as mem.BufferPool wants: one small allocation per
// kept request.
func (p *sizeClassPool) Get(n int) *[]byte {
	p.out.Add(1)
	b := p.classes.Get(n)
	return &b
}

func (p *sizeClassPool) Put(b *[]byte) {
	p.out.Add(-1)
	p.classes.Put(*b)
}
