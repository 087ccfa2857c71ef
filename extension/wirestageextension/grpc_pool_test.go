// SPDX-License-Identifier: Apache-2.0

package wirestageextension

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/mem"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// countingPool is a mem.BufferPool that counts the buffers it hands out
// and those that come back, as grpc-go's pool would get them back.
type countingPool struct {
	mu   sync.Mutex
	gets int
	puts int
}

func (p *countingPool) Get(n int) *[]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gets++
	b := make([]byte, n)
	return &b
}

func (p *countingPool) Put(b *[]byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.puts++
}

func (p *countingPool) outstanding() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.gets - p.puts
}

// receivedFrom is received with buffers from pool, as grpc-go reads a
// message into buffers of its own pool.
func receivedFrom(pool mem.BufferPool, body []byte, at int) mem.BufferSlice {
	if at <= 0 || at >= len(body) {
		at = len(body)
	}
	var s mem.BufferSlice
	for len(body) > 0 {
		n := min(at, len(body))
		s = append(s, mem.Copy(body[:n], pool))
		body = body[n:]
	}
	return s
}

// TestReleaseReturnsBuffersToTheirPools: once gRPC has freed what it
// received and the hand-off has released what it kept, every buffer taken
// from a pool is back in it: a message kept by reference (one received
// buffer) goes back to gRPC's pool, a copied one (several received
// buffers) to the stage's own pool. Without release's Free the kept
// reference would hold gRPC's buffer, and the copy the stage's, forever:
// nothing breaks but pooling, so only counting shows it.
func TestReleaseReturnsBuffersToTheirPools(t *testing.T) {
	w, err := newWireStage(settingsFor(t), divertConfig())
	require.NoError(t, err)
	g, err := w.newGRPCStage(context.Background())
	require.NoError(t, err)
	body := bytes.Repeat([]byte("0123456789abcdef"), 8192) // 128 KiB
	for _, c := range []struct {
		name   string
		at     int
		copied bool
	}{{"one buffer, shared", 0, false}, {"16 KiB buffers, copied", 16 << 10, true}} {
		t.Run(c.name, func(t *testing.T) {
			var grpcPool countingPool
			data := receivedFrom(&grpcPool, body, c.at)
			require.Equal(t, len(data), grpcPool.outstanding(), "every received buffer is from the pool")
			k := g.keep(otlpwire.SignalTraces, data)
			data.Free() // gRPC frees what it received when Unmarshal returns
			if c.copied {
				assert.Zero(t, grpcPool.outstanding(), "a copied message holds none of gRPC's buffers")
				assert.Equal(t, int64(1), g.pool.out.Load(), "the copy is a buffer of the stage's pool")
			} else {
				assert.Equal(t, 1, grpcPool.outstanding(), "a shared message holds gRPC's buffer")
				assert.Zero(t, g.pool.out.Load(), "a shared message takes nothing from the stage's pool")
			}
			assert.Equal(t, body, k.buf.ReadOnlyData())
			g.release(k)
			assert.Zero(t, grpcPool.outstanding(), "gRPC's buffers not back in its pool after release")
			assert.Zero(t, g.pool.out.Load(), "the stage's buffers not back in its pool after release")
			assert.Zero(t, w.grpc.held.buffers.Load())
			assert.Zero(t, w.grpc.held.bytes.Load())
		})
	}
}
