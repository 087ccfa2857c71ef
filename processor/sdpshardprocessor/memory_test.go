// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-sdp/otelcol-sdp/internal/bufpool"
	"github.com/otelcol-sdp/otelcol-sdp/internal/shard"
	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
	"github.com/otelcol-sdp/otelcol-sdp/sdp"
	"github.com/otelcol-sdp/otelcol-sdp/sdp/transport"
)

// heapSlack is the documented constant in the memory bound: what the
// process may hold beyond queue_bytes per shard under a stalled sidecar
// (connection buffers, the processor's pooled scratch space, allocator
// size-class rounding of held frames, test bookkeeping).
const heapSlack = 4 << 20

// TestStalledShardHeapStaysWithinQueueBytes stalls one of two sidecars and
// sends batches whose every request carries one small resource for the
// stalled shard next to a large one for the healthy shard. Without wait for
// acks, the stalled shard's queue fills with small frames; the heap must
// not keep the large rest of each request alive. It runs with send_linger
// at its default and with a linger far longer than the test, so that the
// stalled shard's frames are held lingering, unwritten, when its queue
// fills: the bound is the same.
func TestStalledShardHeapStaysWithinQueueBytes(t *testing.T) {
	long := 900 * time.Millisecond
	for name, linger := range map[string]*time.Duration{"default linger": nil, "long linger": &long} {
		t.Run(name, func(t *testing.T) { stalledShardHeap(t, linger) })
	}
}

func stalledShardHeap(t *testing.T, linger *time.Duration) {
	endpoints := newEndpoints(t, "unix", 2)
	var healthyFrames atomic.Int64
	stall := make(chan struct{})
	handlers := []transport.Handler{
		transport.HandlerFunc(func(*sdp.Hello, *sdp.ResourceFrame) (sdp.AckStatus, string) {
			healthyFrames.Add(1)
			return sdp.AckAccepted, ""
		}),
		transport.HandlerFunc(func(*sdp.Hello, *sdp.ResourceFrame) (sdp.AckStatus, string) {
			<-stall
			return sdp.AckAccepted, ""
		}),
	}
	for i, endpoint := range endpoints {
		l, err := transport.Listen(endpoint)
		require.NoError(t, err)
		srv := &transport.Server{Handler: handlers[i]}
		done := make(chan error, 1)
		go func() { done <- srv.Serve(l) }()
		t.Cleanup(func() {
			_ = srv.Shutdown(context.Background())
			<-done
		})
	}
	t.Cleanup(func() { close(stall) })

	cfg := testConfig(endpoints)
	cfg.RoutingKey = RoutingKeyAttributes
	cfg.Attributes = []string{"tenant"}
	cfg.WaitForAck = false
	cfg.SendLinger = linger
	cfg.MaxFrameBytes = 16 << 10
	cfg.QueueBytes = 256 << 10
	cfg.FlushTimeout = 50 * time.Millisecond // the stalled shard's frames are given up
	require.NoError(t, cfg.Validate())

	tenant := tenantOnShard(t, cfg, 1)
	td := ptrace.NewTraces()
	small := td.ResourceSpans().AppendEmpty()
	small.Resource().Attributes().PutStr("tenant", tenant)
	small.ScopeSpans().AppendEmpty().Spans().AppendEmpty().SetName("small")
	big := td.ResourceSpans().AppendEmpty() // no tenant: shard 0
	spans := big.ScopeSpans().AppendEmpty().Spans()
	for i := range 400 {
		s := spans.AppendEmpty()
		s.SetName(fmt.Sprintf("big-%d", i))
		s.SetSpanID(pcommon.SpanID{byte(i), byte(i >> 8), 1})
		s.Attributes().PutStr("payload", strings.Repeat("p", 64))
	}
	requestBytes := len(mustMarshal(t, td))

	p, err := NewFactory().CreateTraces(context.Background(), processorSettings(), cfg, consumertest.NewNop())
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, p.Shutdown(context.Background())) })

	before := heapInUse()
	batches := 0
	for ; batches < 100_000; batches++ {
		err := p.ConsumeTraces(context.Background(), td)
		if errors.Is(err, transport.ErrQueueFull) {
			if strings.Contains(err.Error(), "shard 1:") {
				break // the stalled shard is full
			}
			// The healthy shard's acks have not caught up yet.
			time.Sleep(time.Millisecond)
			continue
		}
		require.NoError(t, err)
	}
	require.Less(t, batches, 100_000, "the stalled shard's queue never filled")
	// Each accepted batch left a small frame held for the stalled shard: if
	// that frame shared memory with the rest of its request (as when the
	// router encoded a request's frames into one buffer), each of them would
	// keep its whole request alive.
	require.Greater(t, batches*requestBytes, 4*(2*cfg.QueueBytes+heapSlack),
		"the test must hold far more than the bound if frames kept their requests alive")
	after := heapInUse()
	bound := uint64(2*cfg.QueueBytes + heapSlack)
	t.Logf("%d batches of %d bytes accepted; heap grew by %d bytes (bound %d)", batches, requestBytes, int64(after)-int64(before), bound)
	require.LessOrEqual(t, int64(after)-int64(before), int64(bound), "heap exceeds queue_bytes per shard plus %d", heapSlack)
}

// heapInUse returns the bytes of live heap objects after a full collection
// (two, so that sync.Pool's victim cache is freed too).
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// tenantOnShard returns a tenant attribute value that the router of cfg
// (which routes by the tenant attribute) sends to shard want.
func tenantOnShard(t *testing.T, cfg *Config, want int) string {
	t.Helper()
	router, err := shard.NewRouter(cfg.routerSettings())
	require.NoError(t, err)
	var frames shard.Frames
	for i := range 1000 {
		td := ptrace.NewTraces()
		tenant := fmt.Sprintf("tenant-%d", i)
		td.ResourceSpans().AppendEmpty().Resource().Attributes().PutStr("tenant", tenant)
		require.NoError(t, router.Route(otlpwire.NewRequest(otlpwire.SignalTraces, mustMarshal(t, td)), &frames))
		if len(frames.ByShard[want]) > 0 {
			return tenant
		}
	}
	t.Fatalf("no tenant routes to shard %d", want)
	return ""
}

func mustMarshal(t *testing.T, td ptrace.Traces) []byte {
	t.Helper()
	b, err := tracesMarshaler.MarshalTraces(td)
	require.NoError(t, err)
	return b
}

// TestRoutedFramesCostOneAllocationEach pins what framing a batch for the
// transport allocates with a reused scratch: each frame's own bytes, once,
// and nothing else; the transport's frames are the router's bytes, not
// copies of them, and after release the scratch holds none of them.
func TestRoutedFramesCostOneAllocationEach(t *testing.T) {
	router, err := shard.NewRouter(shard.RouterSettings{Shards: benchShards, MaxFrameBytes: MaxFrameBytes,
		HashVersion: otlpwire.HashVersion(defaultHashVersion)})
	require.NoError(t, err)
	req := otlpwire.NewRequest(otlpwire.SignalTraces, mustMarshal(t, benchTraces()))
	members := shard.StaticMembers(make([]string, benchShards))
	var frames routed
	run := func() {
		require.NoError(t, router.RouteTo(req, members, &frames.Frames))
		frames.toTransport()
		frames.release()
	}
	run()
	require.Equal(t, 10.0, testing.AllocsPerRun(20, run), "allocations per batch of 10 resources")

	require.NoError(t, router.RouteTo(req, members, &frames.Frames))
	frames.toTransport()
	n := 0
	for s, fs := range frames.byShard {
		for i, f := range fs {
			require.Equal(t, len(f.Bytes), cap(f.Bytes), "frame bytes hold exactly the frame")
			require.Same(t, &frames.ByShard[s][i].Bytes[0], &f.Bytes[0], "the transport's frame is the router's")
			n++
		}
	}
	require.Equal(t, 10, n)
	frames.release()
	for _, f := range frames.all[:cap(frames.all)] {
		require.Nil(t, f.Bytes)
	}
	require.Empty(t, frames.ByShard[0])
}

// With the shard set's frame pool, and frames given back as the transport
// does once their sidecar answered, framing a batch allocates nothing once
// the pool is warm: the stage's allocations per request stay constant
// whatever the frames' bytes.
func TestPooledFramesAllocateNothingOnceWarm(t *testing.T) {
	router, err := shard.NewRouter(shard.RouterSettings{Shards: benchShards, MaxFrameBytes: MaxFrameBytes,
		HashVersion: otlpwire.HashVersion(defaultHashVersion)})
	require.NoError(t, err)
	req := otlpwire.NewRequest(otlpwire.SignalTraces, mustMarshal(t, benchTraces()))
	members := shard.StaticMembers(make([]string, benchShards))
	var pool bufpool.Pool
	frames := routed{Frames: shard.Frames{Alloc: pool.Get}}
	run := func() {
		require.NoError(t, router.RouteTo(req, members, &frames.Frames))
		frames.toTransport()
		for _, fs := range frames.byShard {
			for _, f := range fs {
				pool.Put(f.Bytes)
			}
		}
		frames.release()
	}
	run()
	// A garbage collection during the run may empty the pool once. Under
	// -race, sync.Pool drops a quarter of its puts by design: the pool must
	// then still save most of the 10 allocations a batch costs without it.
	limit := 0.5
	if raceEnabled {
		limit = 5
	}
	require.LessOrEqual(t, testing.AllocsPerRun(50, run), limit, "allocations per batch of 10 resources")
}
