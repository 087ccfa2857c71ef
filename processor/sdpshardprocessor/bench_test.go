// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"fmt"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-sdp/otelcol-sdp/internal/fleet"
	"github.com/otelcol-sdp/otelcol-sdp/internal/shard"
	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

// benchTraces is the 10 x 100 x 10 fixture: 10 resources, 100 spans each,
// 10 attributes per span.
func benchTraces() ptrace.Traces {
	td := ptrace.NewTraces()
	for r := range 10 {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", fmt.Sprintf("service-%d", r))
		rs.Resource().Attributes().PutStr("host.name", fmt.Sprintf("host-%d.example.internal", r))
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName("io.opentelemetry.bench")
		for s := range 100 {
			span := ss.Spans().AppendEmpty()
			span.SetName(fmt.Sprintf("GET /api/v1/items/%d", s))
			span.SetTraceID(pcommon.TraceID{byte(r), byte(s), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14})
			span.SetSpanID(pcommon.SpanID{byte(s), 1, 2, 3, 4, 5, 6, 7})
			span.SetStartTimestamp(pcommon.Timestamp(1_700_000_000_000_000_000 + s))
			span.SetEndTimestamp(pcommon.Timestamp(1_700_000_000_000_100_000 + s))
			for a := range 10 {
				span.Attributes().PutStr(fmt.Sprintf("attr.%d", a), fmt.Sprintf("value-%d-%d", a, s))
			}
		}
	}
	return td
}

const benchShards = 4

// BenchmarkShardBatch is the processor's per-batch work without the
// socket: marshal the batch once, split it by resource on the wire, hash
// each resource (with the default hash_version) and encode its frames.
func BenchmarkShardBatch(b *testing.B) {
	td := benchTraces()
	router, err := shard.NewRouter(shard.RouterSettings{Shards: benchShards, MaxFrameBytes: MaxFrameBytes,
		HashVersion: otlpwire.HashVersion(defaultHashVersion)})
	if err != nil {
		b.Fatal(err)
	}
	var frames shard.Frames
	b.ReportAllocs()
	for b.Loop() {
		buf, err := tracesMarshaler.MarshalTraces(td)
		if err != nil {
			b.Fatal(err)
		}
		if err := router.Route(otlpwire.NewRequest(otlpwire.SignalTraces, buf), &frames); err != nil {
			b.Fatal(err)
		}
		if frames.Frames != 10 {
			b.Fatalf("%d frames, want 10", frames.Frames)
		}
	}
	b.ReportMetric(float64(testing.AllocsPerRun(10, func() {
		buf, _ := tracesMarshaler.MarshalTraces(td)
		_ = router.Route(otlpwire.NewRequest(otlpwire.SignalTraces, buf), &frames)
	}))/10, "allocs/resource")
}

// BenchmarkShardBatchPdataBaseline splits the way the loadbalancing
// exporter does: one new batch per resource (CopyTo), each marshalled on
// its own, routed by a hash of its attributes, then framed.
func BenchmarkShardBatchPdataBaseline(b *testing.B) {
	td := benchTraces()
	var out []byte
	b.ReportAllocs()
	run := func() {
		out = out[:0]
		rss := td.ResourceSpans()
		for i := range rss.Len() {
			single := ptrace.NewTraces()
			rss.At(i).CopyTo(single.ResourceSpans().AppendEmpty())
			buf, err := tracesMarshaler.MarshalTraces(single)
			if err != nil {
				b.Fatal(err)
			}
			key := pdataIdentity(single.ResourceSpans().At(0).Resource())
			frame := sdp.ResourceFrame{
				Signal: uint8(otlpwire.SignalTraces), Shard: uint32(shard.Jump(key, benchShards)),
				ResourceHash: key, ItemCount: uint32(single.SpanCount()), OTLP: buf,
			}
			if out, err = frame.AppendFrame(out); err != nil {
				b.Fatal(err)
			}
		}
	}
	for b.Loop() {
		run()
	}
	b.ReportMetric(testing.AllocsPerRun(10, run)/10, "allocs/resource")
}

// pdataIdentity is a cheap stand-in for the resource identity hash on the
// pdata side (FNV-1a over keys and values), so the baseline pays for
// routing too without favouring either side.
func pdataIdentity(r pcommon.Resource) uint64 {
	h := uint64(14695981039346656037)
	for k, v := range r.Attributes().All() {
		for _, s := range [2]string{k, v.AsString()} {
			for i := 0; i < len(s); i++ {
				h ^= uint64(s[i])
				h *= 1099511628211
			}
		}
	}
	return h
}

// BenchmarkShardBatchFleet is BenchmarkShardBatch over a resolver's fleet
// of the same size: the snapshot the request path loads and the rendezvous
// step from key to member, against the static list's jump hash. Compare
// allocations with BenchmarkShardBatch (timings on a loaded machine say
// little):
//
//	go test -run '^$' -bench 'ShardBatch(Fleet)?$' -benchmem ./processor/sdpshardprocessor
func BenchmarkShardBatchFleet(b *testing.B) {
	td := benchTraces()
	router, err := shard.NewRouter(shard.RouterSettings{Shards: 1, MaxFrameBytes: MaxFrameBytes,
		HashVersion: otlpwire.HashVersion(defaultHashVersion)})
	if err != nil {
		b.Fatal(err)
	}
	var current atomic.Pointer[fleet.Snapshot]
	current.Store(&fleet.Snapshot{Members: shard.FleetMembers([]string{"consumer-0", "consumer-1", "consumer-2", "consumer-3"})})
	var frames shard.Frames
	route := func() error {
		buf, err := tracesMarshaler.MarshalTraces(td)
		if err != nil {
			return err
		}
		return router.RouteTo(otlpwire.NewRequest(otlpwire.SignalTraces, buf), current.Load().Members, &frames)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := route(); err != nil {
			b.Fatal(err)
		}
		if frames.Frames != 10 {
			b.Fatalf("%d frames, want 10", frames.Frames)
		}
	}
	b.ReportMetric(testing.AllocsPerRun(10, func() { _ = route() })/10, "allocs/resource")
}

// divertTraces is the shape of issue 17's divert profile: 10 resources of
// 10 spans of about 1.1 KB each.
func divertTraces() ptrace.Traces {
	td := ptrace.NewTraces()
	for r := range 10 {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", fmt.Sprintf("service-%d", r))
		spans := rs.ScopeSpans().AppendEmpty().Spans()
		for s := range 10 {
			span := spans.AppendEmpty()
			span.SetName(fmt.Sprintf("GET /api/v1/items/%d", s))
			span.SetTraceID(pcommon.TraceID{byte(r), byte(s), 1})
			span.SetSpanID(pcommon.SpanID{byte(s), 1})
			for a := range 10 {
				span.Attributes().PutStr(fmt.Sprintf("attr.%d", a), fmt.Sprintf("%090d", a*s))
			}
		}
	}
	return td
}

// BenchmarkFrameForTransport is the stage's per-request work up to the
// transport's Send, on an already marshalled request: route it by resource
// into frames, lay them out as transport frames, and release the scratch.
// Unlike BenchmarkShardBatch it leaves marshalling out and includes every
// copy and allocation the frames cost before the socket:
//
//	go test -run '^$' -bench FrameForTransport -benchmem ./processor/sdpshardprocessor
func BenchmarkFrameForTransport(b *testing.B) {
	// The pdata fixtures are built inside each sub-benchmark and dropped
	// once marshalled: kept alive, their pointers would make every
	// collection the loop triggers scan them, and the profile would show
	// the fixture's cost rather than the frames'.
	for _, c := range []struct {
		name   string
		traces func() ptrace.Traces
		shards int
	}{{"10x10x1KB/shards=2", divertTraces, 2}, {"10x100/shards=4", benchTraces, benchShards}} {
		b.Run(c.name, func(b *testing.B) {
			router, err := shard.NewRouter(shard.RouterSettings{Shards: c.shards, MaxFrameBytes: MaxFrameBytes,
				HashVersion: otlpwire.HashVersion(defaultHashVersion)})
			if err != nil {
				b.Fatal(err)
			}
			buf, err := tracesMarshaler.MarshalTraces(c.traces())
			if err != nil {
				b.Fatal(err)
			}
			req := otlpwire.NewRequest(otlpwire.SignalTraces, buf)
			members := shard.StaticMembers(make([]string, c.shards))
			var frames routed
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			for b.Loop() {
				if err := router.RouteTo(req, members, &frames.Frames); err != nil {
					b.Fatal(err)
				}
				frames.toTransport()
				if frames.Frames.Frames != 10 {
					b.Fatalf("%d frames, want 10", frames.Frames.Frames)
				}
				frames.release()
			}
		})
	}
}
