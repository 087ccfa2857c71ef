// SPDX-License-Identifier: Apache-2.0

package wirestageextension

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/mem"

	"github.com/otelcol-sdp/otelcol-sdp/internal/bufpool"
	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

func TestSizeClassPool(t *testing.T) {
	var p sizeClassPool
	for _, n := range []int{1, 4096, 4097, 1 << 20, 1<<20 + 1, 16 << 20, bufpool.MaxSize + 1} {
		b := p.Get(n)
		assert.Len(t, *b, n)
		assert.LessOrEqual(t, cap(*b), max(n+n/8, bufpool.MinSize), "Get(%d)", n)
		p.Put(b)
	}
	// A buffer that is not of a class is dropped, never handed out short.
	odd := make([]byte, 5000)
	p.Put(&odd)
	assert.GreaterOrEqual(t, cap(*p.Get(5000)), 5000)
}

// TestKeepOutlivesReceivedBuffers: what keep returns stays intact after
// gRPC frees the received buffers, for one buffer (shared) and several
// (copied).
func TestKeepOutlivesReceivedBuffers(t *testing.T) {
	w, err := newWireStage(settingsFor(t), divertConfig())
	require.NoError(t, err)
	g, err := w.newGRPCStage(context.Background())
	require.NoError(t, err)
	body := bytes.Repeat([]byte("0123456789abcdef"), 8192) // 128 KiB
	for _, at := range []int{0, 16 << 10, 1000} {
		data := received(body, at)
		k := g.keep(otlpwire.SignalTraces, data)
		data.Free()
		// Reuse the pool's buffers, as the next request would.
		for range 4 {
			received(bytes.Repeat([]byte{'x'}, len(body)), at).Free()
		}
		assert.Equal(t, body, k.buf.ReadOnlyData(), "split every %d bytes", at)
		assert.Equal(t, int64(len(body)), w.grpc.held.bytes.Load())
		g.release(k)
		assert.Zero(t, w.grpc.held.buffers.Load())
	}
}

// BenchmarkKeep compares keep with what the codec did before
// (MaterializeToBuffer into grpc-go's default pool, which clears the
// buffer it hands out) for a 1 MiB message in one received buffer and in
// 16 KiB pieces (a large or decompressed message).
func BenchmarkKeep(b *testing.B) {
	w, err := newWireStage(settingsFor(b), divertConfig())
	require.NoError(b, err)
	g, err := w.newGRPCStage(context.Background())
	require.NoError(b, err)
	body := bytes.Repeat([]byte{7}, 1<<20)
	for _, c := range []struct {
		name string
		at   int
	}{{"one_buffer", 0}, {"16KiB_buffers", 16 << 10}} {
		data := received(body, c.at)
		b.Run(c.name+"/materialize_default_pool", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				data.MaterializeToBuffer(mem.DefaultBufferPool()).Free()
			}
		})
		b.Run(c.name+"/keep", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				g.release(g.keep(otlpwire.SignalTraces, data))
			}
		})
		data.Free()
	}
}
