// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-sdp/otelcol-sdp/internal/shard"
	"github.com/otelcol-sdp/otelcol-sdp/sdp"
	"github.com/otelcol-sdp/otelcol-sdp/sdp/transport"
)

// delivery is what the sidecars received, decoded.
type delivery struct {
	items       map[string]int // item name -> times received
	shardOf     map[string]int // service.name -> shard
	frames      int
	itemsByRes  map[string]int
	otlpResults []string // decode failures
}

func collect(t *testing.T, sc signalCase, recs []*recorder) delivery {
	t.Helper()
	d := delivery{items: map[string]int{}, shardOf: map[string]int{}, itemsByRes: map[string]int{}}
	for shard, rec := range recs {
		for _, r := range rec.snapshot() {
			d.frames++
			require.Equal(t, uint32(shard), r.helloShard, "frame arrived on the connection of another shard")
			require.Equal(t, uint32(shard), r.frame.Shard, "frame names another shard than the one it was sent to")
			service, names, resources, err := sc.decode(r.frame.OTLP)
			require.NoError(t, err, "frame OTLP does not unmarshal")
			require.Equal(t, 1, resources, "frame holds more than one resource")
			require.Equal(t, int(r.frame.ItemCount), len(names), "item_count disagrees with the payload")
			if prev, ok := d.shardOf[service]; ok {
				require.Equal(t, prev, shard, "resource %s landed on two shards", service)
			}
			d.shardOf[service] = shard
			for _, n := range names {
				d.items[n]++
				d.itemsByRes[service]++
			}
		}
	}
	return d
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestEveryItemIsAcknowledgedOnItsShard(t *testing.T) {
	for _, network := range []string{"unix", "tcp"} {
		for _, sc := range signalCases {
			t.Run(network+"/"+sc.name, func(t *testing.T) {
				const shards, batches, resources, items = 3, 5, 12, 7
				endpoints := newEndpoints(t, network, shards)
				recs := make([]*recorder, shards)
				for i := range recs {
					recs[i] = newRecorder()
					startSidecar(t, endpoints[i], recs[i])
				}
				tel := componenttest.NewTelemetry()
				t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
				cfg := testConfig(endpoints)
				cfg.WaitForAck = true
				p, passed := sc.create(t, NewFactory(), testSettings(tel), cfg)
				require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))

				sent := map[string][]string{}
				for b := range batches {
					got, err := sc.consume(context.Background(), p, b, resources, items)
					require.NoError(t, err)
					for svc, names := range got {
						sent[svc] = append(sent[svc], names...)
					}
				}
				// wait_for_ack: everything is acknowledged when Consume returns.
				d := collect(t, sc, recs)
				// The batches carry the same services (one per resource
				// index): each reached exactly one sidecar, and the
				// resources were spread over more than one shard.
				require.Len(t, sent, resources, "services sent")
				require.ElementsMatch(t, slices.Collect(maps.Keys(sent)), slices.Collect(maps.Keys(d.shardOf)), "services received")
				used := slices.Compact(slices.Sorted(maps.Values(d.shardOf)))
				require.Greater(t, len(used), 1, "every resource on shard %v", used)
				for svc, names := range sent {
					for _, n := range names {
						require.Equal(t, 1, d.items[n], "item %s of %s", n, svc)
					}
					require.Equal(t, len(names), d.itemsByRes[svc], "items of %s", svc)
				}
				require.Equal(t, batches*resources, d.frames, "one frame per resource per batch")
				// Each frame carries exactly its resource's data: what pdata
				// gives for that resource copied alone into a new request.
				want := map[string][]byte{}
				for b := range batches {
					maps.Copy(want, sc.alone(t, b, resources, items))
				}
				for _, rec := range recs {
					for _, r := range rec.snapshot() {
						_, names, _, err := sc.decode(r.frame.OTLP)
						require.NoError(t, err)
						require.NotEmpty(t, names)
						got, err := sc.canonical(r.frame.OTLP)
						require.NoError(t, err)
						require.Equal(t, want[names[0]], got, "frame of the resource whose first item is %s", names[0])
					}
				}
				assert.Equal(t, batches*resources*items, passed(), "tee passes every item on")

				// Telemetry agrees with what the sidecars saw. The writer
				// records a frame after its write returns, which may be
				// after the ack arrived, so wait for the counts to settle.
				total := int64(batches * resources * items)
				waitFor(t, "items_sent", func() bool {
					return sumMetric(t, tel, "otelcol_processor_sdpshard_items_sent", nil) == total
				})
				assert.Equal(t, int64(d.frames), sumMetric(t, tel, "otelcol_processor_sdpshard_frames_sent", nil))
				assert.Equal(t, int64(d.frames), sumMetric(t, tel, "otelcol_processor_sdpshard_acks", map[string]string{"status": "accepted"}))
				assert.Equal(t, int64(0), sumMetric(t, tel, "otelcol_processor_sdpshard_queue_bytes", nil))
				for shardIndex := range shards {
					perShard := sumMetric(t, tel, "otelcol_processor_sdpshard_items_sent", map[string]string{"shard": strconv.Itoa(shardIndex), "otelcol.component.id": "sdpshard/test"})
					want := 0
					for svc, s := range d.shardOf {
						if s == shardIndex {
							want += d.itemsByRes[svc]
						}
					}
					assert.Equal(t, int64(want), perShard, "items_sent of shard %d", shardIndex)
				}
				require.NoError(t, p.Shutdown(context.Background()))
			})
		}
	}
}

func TestSignalsShareOneConnectionPerShard(t *testing.T) {
	endpoints := newEndpoints(t, "unix", 2)
	recs := []*recorder{newRecorder(), newRecorder()}
	for i := range recs {
		startSidecar(t, endpoints[i], recs[i])
	}
	cfg := testConfig(endpoints)
	cfg.WaitForAck = true
	f := NewFactory()
	var procs []component.Component
	for _, sc := range signalCases {
		p, _ := sc.create(t, f, testSettings(nil), cfg)
		require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
		procs = append(procs, p)
	}
	for i, sc := range signalCases {
		_, err := sc.consume(context.Background(), procs[i], 0, 4, 2)
		require.NoError(t, err)
	}
	// Shutting one signal down must leave the shared clients to the others.
	require.NoError(t, procs[0].Shutdown(context.Background()))
	_, err := signalCases[1].consume(context.Background(), procs[1], 1, 4, 2)
	require.NoError(t, err)
	signals := map[uint8]int{}
	for _, rec := range recs {
		for _, r := range rec.snapshot() {
			signals[r.frame.Signal]++
		}
	}
	assert.Equal(t, map[uint8]int{1: 4, 2: 8, 3: 4, 4: 4}, signals)
	for _, p := range procs[1:] {
		require.NoError(t, p.Shutdown(context.Background()))
	}
}

func TestSidecarRestartLosesNothing(t *testing.T) {
	for _, network := range []string{"unix", "tcp"} {
		t.Run(network, func(t *testing.T) {
			const shards, batches, resources, items = 2, 40, 6, 5
			endpoints := newEndpoints(t, network, shards)
			recs := []*recorder{newRecorder(), newRecorder()}
			cars := []*sidecar{startSidecar(t, endpoints[0], recs[0]), startSidecar(t, endpoints[1], recs[1])}
			tel := componenttest.NewTelemetry()
			t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
			sc := signalCases[0]
			// Without wait_for_ack, batches are accepted while the sidecars
			// are down: this checks the client's resending.
			cfg := testConfig(endpoints)
			cfg.WaitForAck = false
			p, _ := sc.create(t, NewFactory(), testSettings(tel), cfg)
			require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))

			sent := map[string][]string{}
			for b := range batches {
				if b == batches/3 {
					// Kill both sidecars mid-stream; frames in flight are
					// unacknowledged and must be sent again. Each client
					// must have connected first, or its first connection
					// comes after the restart and is no reconnect.
					for _, rec := range recs {
						waitFor(t, "a frame on each shard", func() bool { return len(rec.snapshot()) > 0 })
					}
					for _, c := range cars {
						c.stop()
					}
				}
				if b == 2*batches/3 {
					for _, c := range cars {
						c.start()
					}
				}
				got, err := sc.consume(context.Background(), p, b, resources, items)
				require.NoError(t, err)
				for svc, names := range got {
					sent[svc] = append(sent[svc], names...)
				}
			}
			all := 0
			for _, names := range sent {
				all += len(names)
			}
			waitFor(t, "every item", func() bool {
				d := collect(t, sc, recs)
				return len(d.items) == all
			})
			d := collect(t, sc, recs)
			for svc, names := range sent {
				for _, n := range names {
					require.GreaterOrEqual(t, d.items[n], 1, "item %s of %s lost", n, svc)
				}
				require.GreaterOrEqual(t, d.itemsByRes[svc], len(names), "items of resource %s", svc)
			}
			require.NoError(t, p.Shutdown(context.Background()))
			assert.GreaterOrEqual(t, sumMetric(t, tel, "otelcol_processor_sdpshard_reconnects", nil), int64(shards))
			assert.Zero(t, sumMetric(t, tel, "otelcol_processor_sdpshard_undelivered_items", nil))
		})
	}
}

func TestStalledSidecarBoundsQueueAndRefusesRetryably(t *testing.T) {
	endpoints := newEndpoints(t, "unix", 1)
	rec := newRecorder()
	startSidecar(t, endpoints[0], rec)
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	cfg := testConfig(endpoints)
	cfg.QueueBytes = 64 << 10
	cfg.MaxFrameBytes = 8 << 10
	cfg.WaitForAck = false // batches are accepted until the queue is full
	sc := signalCases[0]
	p, _ := sc.create(t, NewFactory(), testSettings(tel), cfg)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))

	unblock := rec.block()
	defer unblock()
	sent := map[string]bool{}
	var refusal error
	batch := 0
	for ; batch < 1000 && refusal == nil; batch++ {
		got, err := sc.consume(context.Background(), p, batch, 4, 10)
		if err != nil {
			refusal = err
			break
		}
		for _, names := range got {
			for _, n := range names {
				sent[n] = true
			}
		}
		held := sumMetric(t, tel, "otelcol_processor_sdpshard_queue_bytes", nil)
		require.LessOrEqual(t, held, int64(cfg.QueueBytes), "queue exceeds queue_bytes")
	}
	require.Error(t, refusal, "a stalled sidecar never made the processor refuse")
	assert.ErrorIs(t, refusal, transport.ErrQueueFull)
	assert.False(t, consumererror.IsPermanent(refusal))
	var ce *consumererror.Error
	require.ErrorAs(t, refusal, &ce)
	assert.True(t, ce.IsRetryable())
	assert.Equal(t, int64(1), sumMetric(t, tel, "otelcol_processor_sdpshard_refused_batches", map[string]string{"reason": "queue_full"}))
	held := sumMetric(t, tel, "otelcol_processor_sdpshard_queue_bytes", nil)
	assert.LessOrEqual(t, held, int64(cfg.QueueBytes))
	assert.Greater(t, held, int64(cfg.QueueBytes/2), "the queue should be nearly full when it refuses")

	// The sidecar reads again: everything accepted arrives, and the
	// refused batch is accepted when the client retries it.
	unblock()
	require.Eventually(t, func() bool {
		got, err := sc.consume(context.Background(), p, batch, 4, 10)
		if err != nil {
			return false
		}
		for _, names := range got {
			for _, n := range names {
				sent[n] = true
			}
		}
		return true
	}, 10*time.Second, 10*time.Millisecond)
	waitFor(t, "accepted items", func() bool { return len(collect(t, sc, []*recorder{rec}).items) == len(sent) })
	d := collect(t, sc, []*recorder{rec})
	for n := range sent {
		require.Equal(t, 1, d.items[n], "item %s", n)
	}
	require.NoError(t, p.Shutdown(context.Background()))
}

func TestRefusedBatchAcrossShardsIsRetriedWhole(t *testing.T) {
	// Shard 1 stalls; the batch spans both shards. The capacity check
	// refuses the batch before any of it is queued, so shard 0 does not
	// receive the resources of a batch the client will send again.
	endpoints := newEndpoints(t, "tcp", 2)
	recs := []*recorder{newRecorder(), newRecorder()}
	startSidecar(t, endpoints[0], recs[0])
	startSidecar(t, endpoints[1], recs[1])
	cfg := testConfig(endpoints)
	cfg.QueueBytes = 32 << 10
	cfg.MaxFrameBytes = 4 << 10
	cfg.WaitForAck = false // batches are accepted until shard 1's queue is full
	sc := signalCases[2]
	p, _ := sc.create(t, NewFactory(), testSettings(nil), cfg)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	unblock := recs[1].block()
	defer unblock()

	var refused bool
	for b := range 500 {
		if _, err := sc.consume(context.Background(), p, b, 8, 5); err != nil {
			require.ErrorIs(t, err, transport.ErrQueueFull)
			// Nothing of the refused batch may have reached shard 0.
			prefix := "b" + strconv.Itoa(b) + "-"
			for _, r := range recs[0].snapshot() {
				_, names, _, _ := sc.decode(r.frame.OTLP)
				for _, n := range names {
					require.False(t, strings.HasPrefix(n, prefix), "refused batch %d reached shard 0 (%s)", b, n)
				}
			}
			refused = true
			break
		}
		// Let shard 0 settle so its queue never fills.
		waitFor(t, "shard 0 drained", func() bool { return len(recs[0].snapshot()) > 0 })
	}
	require.True(t, refused)
	unblock()
	require.NoError(t, p.Shutdown(context.Background()))
}

func TestWaitForAckRespectsContext(t *testing.T) {
	endpoints := newEndpoints(t, "unix", 1)
	rec := newRecorder()
	startSidecar(t, endpoints[0], rec)
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	cfg := testConfig(endpoints)
	cfg.WaitForAck = true
	sc := signalCases[1]
	p, _ := sc.create(t, NewFactory(), testSettings(tel), cfg)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	unblock := rec.block()

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := sc.consume(ctx, p, 0, 2, 2)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.False(t, consumererror.IsPermanent(err))
	assert.Equal(t, int64(1), sumMetric(t, tel, "otelcol_processor_sdpshard_refused_batches", map[string]string{"reason": "canceled"}))

	// The frames stay queued and arrive once the sidecar reads again.
	unblock()
	waitFor(t, "queued frames", func() bool { return len(collect(t, sc, []*recorder{rec}).items) == 4 })
	require.NoError(t, p.Shutdown(context.Background()))
}

func TestRejectedFramesArePermanentErrors(t *testing.T) {
	endpoints := newEndpoints(t, "unix", 1)
	rec := newRecorder()
	rec.status = sdp.AckRejected
	startSidecar(t, endpoints[0], rec)
	cfg := testConfig(endpoints)
	cfg.WaitForAck = true
	sc := signalCases[0]
	p, _ := sc.create(t, NewFactory(), testSettings(nil), cfg)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	_, err := sc.consume(context.Background(), p, 0, 3, 1)
	require.ErrorIs(t, err, transport.ErrRejected)
	assert.True(t, consumererror.IsPermanent(err))
	require.NoError(t, p.Shutdown(context.Background()))
}

func TestDivertPassesOnOnlyWhatWasNotForwarded(t *testing.T) {
	endpoints := newEndpoints(t, "unix", 2)
	recs := []*recorder{newRecorder(), newRecorder()}
	for i := range recs {
		startSidecar(t, endpoints[i], recs[i])
	}
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	cfg := testConfig(endpoints)
	cfg.Mode = ModeDivert
	cfg.WaitForAck = true
	cfg.MaxFrameBytes = MinFrameBytes * 2
	sink := new(consumertest.TracesSink)
	p, err := NewFactory().CreateTraces(context.Background(), testSettings(tel), cfg, sink)
	require.NoError(t, err)
	assert.True(t, p.Capabilities().MutatesData, "divert removes forwarded resources")
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))

	td, _ := buildTraces(0, 5, 3)
	require.NoError(t, p.ConsumeTraces(context.Background(), td))
	assert.Zero(t, len(sink.AllTraces()), "a fully forwarded batch must not be passed on")

	// Resource 2 holds a span that fits no frame: it is passed on whole,
	// and only it.
	td, _ = buildTraces(1, 5, 3)
	td.ResourceSpans().At(2).ScopeSpans().At(0).Spans().At(0).SetName(strings.Repeat("z", 4*MinFrameBytes))
	require.NoError(t, p.ConsumeTraces(context.Background(), td))
	require.Len(t, sink.AllTraces(), 1)
	passed := sink.AllTraces()[0]
	require.Equal(t, 1, passed.ResourceSpans().Len())
	assert.Equal(t, "svc-2", resourceService(passed.ResourceSpans().At(0).Resource()))
	assert.Equal(t, 3, passed.SpanCount())
	assert.Equal(t, int64(3), sumMetric(t, tel, "otelcol_processor_sdpshard_unroutable_items", nil))
	d := collect(t, signalCases[0], recs)
	assert.Equal(t, 5*3+4*3, len(d.items))
	require.NoError(t, p.Shutdown(context.Background()))
}

// TestTeeLeavesTheBatchUntouched hands the tee processors of the three
// signals batches marked read-only, as the Collector's fan-out does for
// consumers that declare they do not mutate (pdata panics on any change to
// read-only data): every resource reaches a sidecar, and the next consumer
// receives each batch unchanged, byte for byte.
func TestTeeLeavesTheBatchUntouched(t *testing.T) {
	endpoints := newEndpoints(t, "unix", 2)
	recs := []*recorder{newRecorder(), newRecorder()}
	for i := range recs {
		startSidecar(t, endpoints[i], recs[i])
	}
	cfg := testConfig(endpoints)
	cfg.Mode = ModeTee
	cfg.WaitForAck = true
	ctx := context.Background()
	f, set := NewFactory(), processorSettings()
	traces, metrics, logs := new(consumertest.TracesSink), new(consumertest.MetricsSink), new(consumertest.LogsSink)
	tp, err := f.CreateTraces(ctx, set, cfg, traces)
	require.NoError(t, err)
	mp, err := f.CreateMetrics(ctx, set, cfg, metrics)
	require.NoError(t, err)
	lp, err := f.CreateLogs(ctx, set, cfg, logs)
	require.NoError(t, err)
	for _, p := range []interface {
		component.Component
		Capabilities() consumer.Capabilities
	}{tp, mp, lp} {
		// The fan-out marks a batch read-only only for consumers that say
		// so; the rest of the test checks that the claim holds.
		require.False(t, p.Capabilities().MutatesData)
		require.NoError(t, p.Start(ctx, componenttest.NewNopHost()))
	}

	const resources, items = 4, 3
	td, _ := buildTraces(0, resources, items)
	wantTraces, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	require.NoError(t, err)
	td.MarkReadOnly()
	require.NotPanics(t, func() { require.NoError(t, tp.ConsumeTraces(ctx, td)) })
	md, _ := buildMetrics(0, resources, items)
	wantMetrics, err := (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
	require.NoError(t, err)
	md.MarkReadOnly()
	require.NotPanics(t, func() { require.NoError(t, mp.ConsumeMetrics(ctx, md)) })
	ld, _ := buildLogs(0, resources, items)
	wantLogs, err := (&plog.ProtoMarshaler{}).MarshalLogs(ld)
	require.NoError(t, err)
	ld.MarkReadOnly()
	require.NotPanics(t, func() { require.NoError(t, lp.ConsumeLogs(ctx, ld)) })

	require.Len(t, traces.AllTraces(), 1)
	gotTraces, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(traces.AllTraces()[0])
	require.NoError(t, err)
	assert.Equal(t, wantTraces, gotTraces, "traces passed on")
	require.Len(t, metrics.AllMetrics(), 1)
	gotMetrics, err := (&pmetric.ProtoMarshaler{}).MarshalMetrics(metrics.AllMetrics()[0])
	require.NoError(t, err)
	assert.Equal(t, wantMetrics, gotMetrics, "metrics passed on")
	require.Len(t, logs.AllLogs(), 1)
	gotLogs, err := (&plog.ProtoMarshaler{}).MarshalLogs(logs.AllLogs()[0])
	require.NoError(t, err)
	assert.Equal(t, wantLogs, gotLogs, "logs passed on")

	frames := 0
	for _, rec := range recs {
		frames += len(rec.snapshot())
	}
	assert.Equal(t, 3*resources, frames, "one frame per resource of each signal")
	for _, p := range []component.Component{tp, mp, lp} {
		require.NoError(t, p.Shutdown(ctx))
	}
}

func TestAttributeRoutingUsesDefaultShard(t *testing.T) {
	endpoints := newEndpoints(t, "unix", 4)
	recs := make([]*recorder, 4)
	for i := range recs {
		recs[i] = newRecorder()
		startSidecar(t, endpoints[i], recs[i])
	}
	cfg := testConfig(endpoints)
	cfg.RoutingKey = RoutingKeyAttributes
	cfg.Attributes = []string{"tenant"}
	cfg.WaitForAck = true
	p, err := NewFactory().CreateTraces(context.Background(), processorSettings(), cfg, consumertest.NewNop())
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	td := ptrace.NewTraces()
	for i := range 8 {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", "svc-"+strconv.Itoa(i))
		if i%2 == 0 {
			rs.Resource().Attributes().PutStr("tenant", "acme")
		}
		rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty().SetName("s" + strconv.Itoa(i))
	}
	require.NoError(t, p.ConsumeTraces(context.Background(), td))
	d := collect(t, signalCases[0], recs)
	var tenantShards []int
	for svc, s := range d.shardOf {
		i, _ := strconv.Atoi(strings.TrimPrefix(svc, "svc-"))
		if i%2 == 1 {
			assert.Equal(t, shard.DefaultShard, s, "%s has no tenant", svc)
		} else {
			tenantShards = append(tenantShards, s)
		}
	}
	slices.Sort(tenantShards)
	assert.Len(t, tenantShards, 4)
	assert.Len(t, slices.Compact(tenantShards), 1, "one tenant, one shard")
	require.NoError(t, p.Shutdown(context.Background()))
}

func TestShutdownCountsUndelivered(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	// Nothing listens: frames stay queued until shutdown gives up.
	cfg := testConfig(newEndpoints(t, "unix", 2))
	cfg.FlushTimeout = 100 * time.Millisecond
	cfg.WaitForAck = false // the batch is accepted with no sidecar listening
	sc := signalCases[2]
	p, _ := sc.create(t, NewFactory(), testSettings(tel), cfg)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	_, err := sc.consume(context.Background(), p, 0, 6, 4)
	require.NoError(t, err)
	start := time.Now()
	require.NoError(t, p.Shutdown(context.Background()))
	assert.Less(t, time.Since(start), 5*time.Second, "shutdown must give up at flush_timeout")
	assert.Equal(t, int64(24), sumMetric(t, tel, "otelcol_processor_sdpshard_undelivered_items", nil))

	// After shutdown nothing is accepted, and the refusal is retryable.
	_, err = sc.consume(context.Background(), p, 1, 1, 1)
	require.ErrorIs(t, err, transport.ErrClosed)
	assert.False(t, consumererror.IsPermanent(err))
}

func TestShardPartLargerThanQueueIsDeliveredWhole(t *testing.T) {
	// One shard's part of a batch is several times queue_bytes: it goes out
	// in queue-sized Sends, each after the previous one has made room, so
	// the batch is accepted whole instead of being refused (after part of
	// it was queued) every time the client retries it.
	for _, waitForAck := range []bool{false, true} {
		t.Run("wait_for_ack="+strconv.FormatBool(waitForAck), func(t *testing.T) {
			endpoints := newEndpoints(t, "unix", 1)
			rec := newRecorder()
			startSidecar(t, endpoints[0], rec)
			cfg := testConfig(endpoints)
			cfg.MaxFrameBytes = MinFrameBytes
			cfg.QueueBytes = 4 * MinFrameBytes
			cfg.WaitForAck = waitForAck
			sc := signalCases[0]
			p, _ := sc.create(t, NewFactory(), testSettings(nil), cfg)
			require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))

			const resources, items = 40, 4
			sent, err := sc.consume(context.Background(), p, 0, resources, items)
			require.NoError(t, err)
			want := 0
			for _, names := range sent {
				want += len(names)
			}
			waitFor(t, "every item", func() bool { return len(collect(t, sc, []*recorder{rec}).items) == want })
			d := collect(t, sc, []*recorder{rec})
			require.Greater(t, d.frames*MinFrameBytes/2, cfg.QueueBytes, "the batch must not fit the queue at once")
			for _, names := range sent {
				for _, n := range names {
					require.Equal(t, 1, d.items[n], "item %s", n)
				}
			}
			require.NoError(t, p.Shutdown(context.Background()))
		})
	}
}

func TestRejectedMultiPartBatchDoesNotWedgeTheClient(t *testing.T) {
	// With wait_for_ack, a batch sent in several Sends per shard fails at
	// the first rejection; the settled callbacks of the Sends nobody waits
	// for any more must still find room, or a client's ack reader blocks
	// and Shutdown never returns.
	endpoints := newEndpoints(t, "unix", 2)
	for _, endpoint := range endpoints {
		rec := newRecorder()
		rec.status = sdp.AckRejected
		startSidecar(t, endpoint, rec)
	}
	cfg := testConfig(endpoints)
	cfg.MaxFrameBytes = MinFrameBytes
	cfg.QueueBytes = 4 * MinFrameBytes
	cfg.WaitForAck = true
	cfg.FlushTimeout = time.Second
	sc := signalCases[0]
	p, _ := sc.create(t, NewFactory(), testSettings(nil), cfg)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	for b := range 6 {
		resources := 80 // several Sends per shard
		if b%2 == 1 {
			resources = 4 // one Send per shard
		}
		_, err := sc.consume(context.Background(), p, b, resources, 4)
		require.ErrorIs(t, err, transport.ErrRejected)
	}
	done := make(chan error, 1)
	go func() { done <- p.Shutdown(context.Background()) }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown did not return: a settled callback blocked the client")
	}
}

// serveRawFrames serves endpoint with a bare SDP reader on a real socket:
// after each connection's Hello it hands every frame to answer, from one
// goroutine per connection, and writes the Ack answer returns, if any.
// Connections are closed when the test ends.
func serveRawFrames(t *testing.T, endpoint string, answer func(f *sdp.ResourceFrame) (sdp.Ack, bool)) {
	t.Helper()
	l, err := transport.Listen(endpoint)
	require.NoError(t, err)
	var conns sync.WaitGroup
	stop := make(chan struct{})
	conns.Add(1)
	go func() {
		defer conns.Done()
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer conns.Done()
				go func() { <-stop; conn.Close() }()
				r := sdp.NewReader(conn, sdp.DefaultMaxFrameSize)
				if _, _, err := r.Next(); err != nil { // Hello
					return
				}
				var f sdp.ResourceFrame
				for {
					_, payload, err := r.Next()
					if err != nil || f.DecodePayload(payload) != nil {
						return
					}
					ack, ok := answer(&f)
					if !ok {
						continue
					}
					b, _ := ack.AppendFrame(nil)
					if _, err := conn.Write(b); err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		close(stop)
		conns.Wait()
	})
}

// startRawSidecar serves endpoint with serveRawFrames: it answers each
// frame whose sequence is at most rejectUpTo with a reject Ack and never
// answers the others. It returns the count of frames read.
func startRawSidecar(t *testing.T, endpoint string, rejectUpTo uint64) (framesRead func() int) {
	t.Helper()
	var mu sync.Mutex
	read := 0
	serveRawFrames(t, endpoint, func(f *sdp.ResourceFrame) (sdp.Ack, bool) {
		mu.Lock()
		read++
		mu.Unlock()
		return sdp.Ack{Sequence: f.Sequence, Status: sdp.AckRejected, Detail: "test sidecar rejects"}, f.Sequence <= rejectUpTo
	})
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return read
	}
}

func TestPartlyRejectedUndeliveredBatchIsRetryable(t *testing.T) {
	// With wait_for_ack, a batch of which some frames were rejected and the
	// others never acknowledged (here: given up at shutdown) must be refused
	// retryably: a permanent error would make the caller drop frames that
	// never reached a sidecar.
	for _, tc := range []struct {
		name       string
		shards     int
		rejectUpTo []uint64 // per shard
	}{
		// One Send whose settle error joins ErrRejected and ErrUndelivered.
		{name: "one shard", shards: 1, rejectUpTo: []uint64{1}},
		// Shard 0 rejects everything, shard 1 never acknowledges.
		{name: "two shards", shards: 2, rejectUpTo: []uint64{1 << 62, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			endpoints := newEndpoints(t, "unix", tc.shards)
			var reads []func() int
			for i, endpoint := range endpoints {
				reads = append(reads, startRawSidecar(t, endpoint, tc.rejectUpTo[i]))
			}
			tel := componenttest.NewTelemetry()
			t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
			cfg := testConfig(endpoints)
			cfg.WaitForAck = true
			cfg.FlushTimeout = 100 * time.Millisecond
			sc := signalCases[0]
			p, _ := sc.create(t, NewFactory(), testSettings(tel), cfg)
			require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))

			const resources = 8
			consumed := make(chan error, 1)
			go func() {
				_, err := sc.consume(context.Background(), p, 0, resources, 1)
				consumed <- err
			}()
			waitFor(t, "every frame read by a sidecar", func() bool {
				n := 0
				for _, read := range reads {
					n += read()
				}
				return n == resources
			})
			for i, read := range reads {
				require.NotZero(t, read(), "shard %d got no frame; the test needs both kinds", i)
			}
			require.NoError(t, p.Shutdown(context.Background()))
			err := <-consumed
			require.ErrorIs(t, err, transport.ErrUndelivered)
			assert.False(t, consumererror.IsPermanent(err), "undelivered frames must be retried: %v", err)
			assert.Equal(t, int64(1), sumMetric(t, tel, "otelcol_processor_sdpshard_refused_batches", map[string]string{"reason": "undelivered"}))
			assert.Zero(t, sumMetric(t, tel, "otelcol_processor_sdpshard_refused_batches", map[string]string{"reason": "rejected"}))
		})
	}
}

func TestRefusalReasonOfJoinedSettleErrors(t *testing.T) {
	rejected := fmt.Errorf("%w (shard 0): no", transport.ErrRejected)
	for _, tc := range []struct {
		err    error
		reason string
	}{
		{rejected, reasonRejected},
		{errors.Join(errors.Join(rejected, rejected), rejected), reasonRejected},
		{errors.Join(rejected, fmt.Errorf("%w: 2 frames", transport.ErrUndelivered)), reasonUndelivered},
		{errors.Join(rejected, transport.ErrClosed), reasonClosed},
		{errors.Join(rejected, context.Canceled), reasonCanceled},
		{errors.Join(rejected, transport.ErrQueueFull), reasonQueueFull},
		{fmt.Errorf("%w: %w", transport.ErrRejected, transport.ErrQueueFull), reasonQueueFull},
		{fmt.Errorf("%w: over-long Ack", transport.ErrProtocol), reasonProtocol},
		{errors.Join(rejected, fmt.Errorf("%w: over-long Ack", transport.ErrProtocol)), reasonProtocol},
	} {
		assert.Equal(t, tc.reason, reasonOf(tc.err), "%v", tc.err)
	}
}
