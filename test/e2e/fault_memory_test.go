// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/otelcol-sdp/otelcol-sdp/internal/shard"
	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
	"github.com/otelcol-sdp/otelcol-sdp/processor/sdpshardprocessor"
)

// Settings and bounds of the memory-bound scenario.
const (
	// memQueueBytes is the scenario's queue_bytes per shard.
	memQueueBytes = 4 << 20
	// memSlack is the documented constant of the bound: what the Collector
	// may hold beyond its queues once the load has stopped and a garbage
	// collection has run (pools, connection buffers, telemetry).
	memSlack = 16 << 20
	// memAbort stops the load early, to spare the machine, once the
	// Collector's RSS is this far above its baseline: the bound is then
	// broken anyway.
	memAbort = 512 << 20
	// memLoadLimit bounds the load phase: it ends earlier once shard 1's
	// queue is nearly full.
	memLoadLimit = 15 * time.Second
)

// TestFaultQueueBytesBoundsCollectorMemory freezes the sidecar of shard 1
// with SIGSTOP and sends requests that each hold a large resource for shard
// 0 (acked at once) and a small one for the frozen shard 1, until shard 1's
// queue is full and the Collector refuses more. With the load stopped and a
// garbage collection run, the Collector's heap
// (otelcol_process_runtime_heap_alloc_bytes) must stay within its baseline
// plus queue_bytes per shard plus memSlack: a small queued frame must not
// keep its whole request's buffer alive. Once shard 1 resumes, every span
// acked to the client must arrive.
func TestFaultQueueBytesBoundsCollectorMemory(t *testing.T) {
	e := newFaultEnv(t, 2)
	e.startSidecars()
	e.writeConfig(collectorSettings{Processor: fmt.Sprintf("    queue_bytes: %d\n", memQueueBytes)})
	e.startCollector()

	shape := []resourceShape{
		{Service: serviceOnShard(t, 0, 2), Spans: 60, Padding: 10_000}, // ~600 KB, shard 0
		{Service: serviceOnShard(t, 1, 2), Spans: 2, Padding: 8_000},   // ~16 KB, shard 1
	}
	warm := startLoad(t, e.grpcEndpoint, loadSettings{Senders: 1, Shape: shape, Requests: 2, Timeout: 5 * time.Second})
	<-warm.finished()
	warmRes := warm.stop()
	if tl := waitDelivered(t, warmRes, deliverTimeout, e.outDirs()...); tl.Acked == 0 || tl.Lost > 0 {
		t.Fatalf("warm-up before the stall: %s (%s)", tl, warmRes)
	}
	baseline := e.heapAfterGC()
	baseRSS := e.collector.RSS(t)

	e.sidecars[1].proc.Signal(t, syscall.SIGSTOP)
	l := startLoad(t, e.grpcEndpoint, loadSettings{Senders: 8, Shape: shape, Interval: 10 * time.Millisecond, Timeout: 200 * time.Millisecond})
	var peakRSS int64
	queued := 0.0
	for deadline := time.Now().Add(memLoadLimit); time.Now().Before(deadline); {
		time.Sleep(250 * time.Millisecond)
		rss := e.collector.RSS(t)
		peakRSS = max(peakRSS, rss)
		if rss-baseRSS > memAbort {
			t.Errorf("the Collector's RSS reached %d MiB above its baseline while one shard is stalled; load stopped early", (rss-baseRSS)>>20)
			break
		}
		if queued = e.metric(queueBytes, map[string]string{"shard": "1"}); queued >= 0.9*memQueueBytes {
			break
		}
	}
	res := l.stop()
	held := e.heapAfterGC()
	queued = e.metric(queueBytes, map[string]string{"shard": "1"})
	rss := e.collector.RSS(t)
	bound := baseline + 2*memQueueBytes + memSlack
	t.Logf("load while shard 1 is stalled: %s", res)
	t.Logf("heap: baseline %.1f MiB, held after GC %.1f MiB, bound %.1f MiB (baseline + 2 shards x queue_bytes %d + %d MiB); shard 1 queue gauge %.0f bytes; RSS baseline %d MiB, peak %d MiB, after GC %d MiB",
		baseline/(1<<20), held/(1<<20), bound/(1<<20), memQueueBytes, memSlack>>20, queued, baseRSS>>20, peakRSS>>20, rss>>20)
	if queued == 0 {
		t.Fatalf("shard 1's queue is empty although its sidecar is stopped: the scenario exercised nothing (%s)", res)
	}
	if held > bound {
		t.Errorf("with shard 1 stalled the Collector holds %.1f MiB of heap, more than baseline + queue_bytes per shard + %d MiB = %.1f MiB: "+
			"queued frames keep larger buffers alive (each small frame of shard 1 pins its whole request)",
			held/(1<<20), memSlack>>20, bound/(1<<20))
	}

	e.sidecars[1].proc.Signal(t, syscall.SIGCONT)
	tl := waitDelivered(t, res, deliverTimeout, e.outDirs()...)
	t.Logf("counts: %s", tl)
	if tl.Lost > 0 {
		t.Errorf("%d of %d spans acked to the client never reached a sidecar after shard 1 resumed", tl.Lost, tl.Acked)
	}
	e.stopAll()
}

// Metrics the scenario reads from the Collector's own telemetry.
const (
	heapAlloc  = "otelcol_process_runtime_heap_alloc_bytes"
	queueBytes = "otelcol_processor_sdpshard_queue_bytes"
)

// heapAfterGC runs two garbage collections in the Collector (the second
// empties what sync.Pools kept through the first) and returns its
// heap_alloc. The Collector reads its memory statistics at most once a
// second, so the read waits that long after the collections.
func (e *faultEnv) heapAfterGC() float64 {
	e.t.Helper()
	e.collectGarbage()
	e.collectGarbage()
	time.Sleep(1100 * time.Millisecond)
	return e.metric(heapAlloc, nil)
}

// serviceOnShard returns a service name whose resource (that one attribute,
// as the load client sends it) the sdpshard processor routes to shard of
// shards, asking the processor's own router with the processor's default
// hash_version (the scenario's configuration does not set it).
func serviceOnShard(t *testing.T, want, shards int) string {
	t.Helper()
	defaults := sdpshardprocessor.NewFactory().CreateDefaultConfig().(*sdpshardprocessor.Config)
	router, err := shard.NewRouter(shard.RouterSettings{Shards: shards, MaxFrameBytes: 1_000_000,
		HashVersion: otlpwire.HashVersion(defaults.HashVersion)})
	if err != nil {
		t.Fatal(err)
	}
	var frames shard.Frames
	for i := range 1000 {
		service := fmt.Sprintf("fault-mem-%d", i)
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", service)
		rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty().SetName("op")
		b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
		if err != nil {
			t.Fatal(err)
		}
		if err := router.Route(otlpwire.NewRequest(otlpwire.SignalTraces, b), &frames); err != nil {
			t.Fatal(err)
		}
		if len(frames.ByShard[want]) > 0 {
			return service
		}
	}
	t.Fatalf("no service name among 1000 routes to shard %d of %d", want, shards)
	return ""
}
