// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"

	"github.com/otelcol-sdp/otelcol-sdp/sdp"
	"github.com/otelcol-sdp/otelcol-sdp/sdp/transport"
)

// benchObserver returns the observer of a shard set of benchShards static
// endpoints (never started: nothing connects) metering into the OTel SDK,
// as in the Collector.
func benchObserver(b *testing.B) *observer {
	b.Helper()
	tel := componenttest.NewTelemetry()
	b.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	cfg := testConfig(newEndpoints(b, "unix", benchShards))
	s, err := newShardSet(testSettings(tel), cfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.shutdown(context.Background()) })
	return s.obs
}

// benchSent is one write of a small request's frame, a retransmission
// among them every 8th time so that that counter is exercised too.
func benchSent(i int) transport.Sent {
	s := transport.Sent{Frames: 1, Bytes: 900, Items: 3}
	if i%8 == 0 {
		s.Retransmissions = 1
	}
	return s
}

// BenchmarkObserverFramesSent is what the transport's writer pays for the
// telemetry of one write to a sidecar (static endpoints).
func BenchmarkObserverFramesSent(b *testing.B) {
	o := benchObserver(b)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		o.FramesSent(uint32(i%benchShards), benchSent(i))
		i++
	}
}

// BenchmarkObserverAckReceived is what the transport's reader pays for the
// telemetry of one Ack.
func BenchmarkObserverAckReceived(b *testing.B) {
	o := benchObserver(b)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		o.AckReceived(uint32(i%benchShards), sdp.AckAccepted, 1)
		i++
	}
}

// BenchmarkObserverMemberFramesSent is FramesSent of a resolver's member.
func BenchmarkObserverMemberFramesSent(b *testing.B) {
	m := benchObserver(b).forMember("consumer-0", "unix:///nowhere")
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		m.FramesSent(0, benchSent(i))
		i++
	}
}

// BenchmarkObserverFramesSentParallel is FramesSent from several writers
// at once, as with one writer goroutine per shard.
func BenchmarkObserverFramesSentParallel(b *testing.B) {
	o := benchObserver(b)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			o.FramesSent(uint32(i%benchShards), benchSent(i))
			i++
		}
	})
}
