// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/otelcol-sdp/otelcol-sdp/internal/componenttelemetry"
	"github.com/otelcol-sdp/otelcol-sdp/processor/sdpshardprocessor/internal/metadatatest"
	"github.com/otelcol-sdp/otelcol-sdp/sdp"
	"github.com/otelcol-sdp/otelcol-sdp/sdp/transport"
)

// TestObserverHotPathAllocatesNothing pins that the telemetry of a write
// and of an Ack, reported by the transport on every one, costs no
// allocation, for a static shard and for a fleet member.
func TestObserverHotPathAllocatesNothing(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	s, err := newShardSet(testSettings(tel), testConfig(newEndpoints(t, "unix", 2)), nil)
	require.NoError(t, err)
	t.Cleanup(func() { s.shutdown(context.Background()) })
	member := s.obs.forMember("consumer-0", "unix:///nowhere")
	sent := transport.Sent{Frames: 2, Bytes: 1800, Items: 6, Retransmissions: 1}
	for name, o := range map[string]transport.Observer{"shard": s.obs, "member": member} {
		assert.Zero(t, testing.AllocsPerRun(100, func() { o.FramesSent(1, sent) }), "%s: FramesSent", name)
		assert.Zero(t, testing.AllocsPerRun(100, func() { o.AckReceived(1, sdp.AckAccepted, 2) }), "%s: AckReceived", name)
	}
}

// sidecarCounts is a sidecar Handler that answers every retryEvery-th
// frame it handles with AckRetry (so that the client writes it again) and
// the others with AckAccepted, counting what it handled.
type sidecarCounts struct {
	retryEvery int

	mu                          sync.Mutex
	frames, bytes, items, retry int64
}

func (c *sidecarCounts) HandleFrame(_ *sdp.Hello, f *sdp.ResourceFrame) (sdp.AckStatus, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.frames++
	c.bytes += int64(f.FrameSize())
	c.items += int64(f.ItemCount)
	if c.frames%int64(c.retryEvery) == 0 {
		c.retry++
		return sdp.AckRetry, "test sidecar asks again"
	}
	return sdp.AckAccepted, ""
}

func (c *sidecarCounts) snapshot() (frames, bytes, items, retry int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.frames, c.bytes, c.items, c.retry
}

// serveHandler serves h on endpoint until the test ends.
func serveHandler(t *testing.T, endpoint string, h transport.Handler) {
	t.Helper()
	l, err := transport.Listen(endpoint)
	require.NoError(t, err)
	srv := &transport.Server{Handler: h}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	t.Cleanup(func() {
		_ = srv.Shutdown(context.Background())
		<-done
	})
}

// TestCollectedCountersEqualWhatSidecarsHandled sends batches to two
// sidecars that ask for some frames again, and checks that the collected
// frames, bytes, items, retransmissions and acks of each shard are exactly
// what the sidecar handled, with the instruments' names, units and
// cumulative monotonic sums as declared.
func TestCollectedCountersEqualWhatSidecarsHandled(t *testing.T) {
	const shards = 2
	endpoints := newEndpoints(t, "unix", shards)
	sidecars := make([]*sidecarCounts, shards)
	for i := range sidecars {
		sidecars[i] = &sidecarCounts{retryEvery: 3}
		serveHandler(t, endpoints[i], sidecars[i])
	}
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	cfg := testConfig(endpoints)
	cfg.WaitForAck = true
	sc := signalCases[0]
	p, _ := sc.create(t, NewFactory(), testSettings(tel), cfg)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	shutDown := false
	t.Cleanup(func() {
		if !shutDown {
			require.NoError(t, p.Shutdown(context.Background()))
		}
	})

	for b := range 4 {
		_, err := sc.consume(context.Background(), p, b, 10, 3)
		require.NoError(t, err)
	}
	var total int64
	for _, c := range sidecars {
		frames, _, _, retry := c.snapshot()
		require.Positive(t, retry, "the sidecar asked for no frame again")
		total += frames
	}
	// A write is reported after it returns, which may be after its Ack,
	// and an Ack after the frames it settled were settled.
	waitFor(t, "frames_sent and acks", func() bool {
		return sumMetric(t, tel, "otelcol_processor_sdpshard_frames_sent", nil) == total &&
			sumMetric(t, tel, "otelcol_processor_sdpshard_acks", nil) == total
	})

	var frames, bytes, items, retransmissions, acks []metricdata.DataPoint[int64]
	for shardIndex, c := range sidecars {
		f, b, i, r := c.snapshot()
		shardAttrs := []attribute.KeyValue{
			attribute.String(componenttelemetry.ComponentIDKey, "sdpshard/test"),
			attribute.Int("shard", shardIndex),
		}
		point := func(v int64, extra ...attribute.KeyValue) metricdata.DataPoint[int64] {
			return metricdata.DataPoint[int64]{Attributes: attribute.NewSet(append(shardAttrs, extra...)...), Value: v}
		}
		frames = append(frames, point(f))
		bytes = append(bytes, point(b))
		items = append(items, point(i))
		// Each frame asked for again was written once more.
		retransmissions = append(retransmissions, point(r))
		acks = append(acks,
			point(f-r, attribute.String("status", "accepted")),
			point(r, attribute.String("status", "retry")),
			point(0, attribute.String("status", "rejected")))
		t.Logf("shard %d: %d frames, %d retried", shardIndex, f, r)
	}
	metadatatest.AssertEqualProcessorSdpshardFramesSent(t, tel, frames, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualProcessorSdpshardBytesSent(t, tel, bytes, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualProcessorSdpshardItemsSent(t, tel, items, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualProcessorSdpshardRetransmissions(t, tel, retransmissions, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualProcessorSdpshardAcks(t, tel, acks, metricdatatest.IgnoreTimestamp())

	// The Collector's telemetry shuts down after its components: a push
	// exporter's last export must still carry the final counts.
	shutDown = true
	require.NoError(t, p.Shutdown(context.Background()))
	metadatatest.AssertEqualProcessorSdpshardFramesSent(t, tel, frames, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualProcessorSdpshardAcks(t, tel, acks, metricdatatest.IgnoreTimestamp())
}

// TestMemberCountersSurviveLeavingAndRejoining: a member's cumulative
// series stay while it is away and continue, not restart, when it comes
// back, as the synchronous counters did.
func TestMemberCountersSurviveLeavingAndRejoining(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	fleetMembers := startFleet(t, 2)
	p, s, src := startFleetProcessor(t, tel)
	ctx := context.Background()
	leaving := map[string]string{"member": "consumer-1"}
	leavingAccepted := map[string]string{"member": "consumer-1", "status": "accepted"}
	framesAt := func(m fleetMember) int64 { return int64(len(m.rec.snapshot())) }

	send := func(batch int) {
		t.Helper()
		td, _ := buildTraces(batch, 20, 2)
		require.NoError(t, p.ConsumeTraces(ctx, td))
		// Writes and Acks are reported after the batch settled.
		waitFor(t, "frames_sent and acks of every member", func() bool {
			for _, m := range fleetMembers {
				n := framesAt(m)
				if sumMetric(t, tel, "otelcol_processor_sdpshard_frames_sent", map[string]string{"member": m.ID}) != n ||
					sumMetric(t, tel, "otelcol_processor_sdpshard_acks", map[string]string{"member": m.ID, "status": "accepted"}) != n {
					return false
				}
			}
			return true
		})
	}
	src.set(members(fleetMembers...)...)
	applied(t, s, "consumer-0", "consumer-1")
	send(0)
	first := framesAt(fleetMembers[1])
	require.Positive(t, first, "consumer-1 received nothing")

	src.set(fleetMembers[0].member)
	applied(t, s, "consumer-0")
	send(1)
	for _, name := range []string{"otelcol_processor_sdpshard_frames_sent", "otelcol_processor_sdpshard_acks"} {
		assert.True(t, hasSeries(t, tel, name, leaving), "%s of consumer-1 vanished when it left", name)
	}
	assert.Equal(t, first, sumMetric(t, tel, "otelcol_processor_sdpshard_frames_sent", leaving))
	assert.Equal(t, first, sumMetric(t, tel, "otelcol_processor_sdpshard_acks", leavingAccepted))

	src.set(members(fleetMembers...)...)
	applied(t, s, "consumer-0", "consumer-1")
	send(2)
	again := framesAt(fleetMembers[1])
	require.Greater(t, again, first, "consumer-1 received nothing after it came back")
	// send waited until the counts equal every frame consumer-1 ever
	// received, which they could not if they had restarted from 0.
	assert.Equal(t, again, sumMetric(t, tel, "otelcol_processor_sdpshard_frames_sent", leaving))
	assert.Equal(t, again, sumMetric(t, tel, "otelcol_processor_sdpshard_acks", leavingAccepted))
}

// hasSeries reports whether metric name has a data point whose attributes
// include every key=value in match.
func hasSeries(t *testing.T, tel *componenttest.Telemetry, name string, match map[string]string) bool {
	t.Helper()
	m, err := tel.GetMetric(name)
	if err != nil {
		return false
	}
	sum, ok := m.Data.(metricdata.Sum[int64])
	require.True(t, ok, "%s has data %T", name, m.Data)
	for _, dp := range sum.DataPoints {
		found := true
		for k, v := range match {
			if got, ok := dp.Attributes.Value(attribute.Key(k)); !ok || got.Emit() != v {
				found = false
			}
		}
		if found {
			return true
		}
	}
	return false
}
