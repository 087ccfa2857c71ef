// SPDX-License-Identifier: Apache-2.0

package shard

import (
	"fmt"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

// mixedTraces builds resources whose spans belong to traces shared across
// resources (trace t has spans in many of them), with every fifth span
// without a trace id.
func mixedTraces(resources, spans, traces int) ptrace.Traces {
	td := ptrace.NewTraces()
	n := 0
	for r := range resources {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", fmt.Sprintf("svc-%d", r))
		for sc := range 2 {
			ss := rs.ScopeSpans().AppendEmpty()
			ss.Scope().SetName(fmt.Sprintf("scope-%d", sc))
			for s := range spans {
				span := ss.Spans().AppendEmpty()
				span.SetName(fmt.Sprintf("span-%d-%d-%d", r, sc, s))
				if n%5 != 4 {
					span.SetTraceID(pcommon.TraceID{byte(n % traces), byte(n % traces * 7), 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 1})
				}
				span.SetSpanID(pcommon.SpanID{byte(n), byte(n >> 8), 1})
				n++
			}
		}
	}
	return td
}

// Routing by trace id, over a fleet and a static list: every span is in a
// frame of the member that owns its trace (a span without one, of the
// member that owns its resource), every frame keeps its resource's identity
// and a key that maps to its member, and nothing is lost or repeated.
func TestRouteByTraceID(t *testing.T) {
	td := mixedTraces(6, 10, 13)
	req := marshal(t, td)
	r, err := NewRouter(RouterSettings{Shards: 4, MaxFrameBytes: sdp.MaxArrayLen, HashVersion: otlpwire.HashV2, ByTraceID: true})
	if err != nil {
		t.Fatal(err)
	}
	identities := map[string]uint64{}
	for rd := range req.Resources() {
		res, _ := rd.Resource()
		v, _, _ := res.Attribute("service.name")
		h, _ := res.HashWith(otlpwire.HashV2)
		identities[string(v.Str())] = h
	}
	for name, members := range map[string]*Members{"fleet": FleetMembers(memberIDs(4)), "static": StaticMembers(memberIDs(4))} {
		t.Run(name, func(t *testing.T) {
			var f Frames
			if err := r.RouteTo(req, members, &f); err != nil {
				t.Fatal(err)
			}
			seen := map[string]int{}
			split := map[pcommon.TraceID]map[int]bool{}
			for _, d := range decodeAll(t, &f) {
				rs := d.td.ResourceSpans().At(0)
				svc, _ := rs.Resource().Attributes().Get("service.name")
				if d.frame.ResourceHash != identities[svc.Str()] {
					t.Errorf("frame of %s: resource_hash %x, want its identity %x", svc.Str(), d.frame.ResourceHash, identities[svc.Str()])
				}
				resOwner := members.Owner(identities[svc.Str()])
				for _, ss := range rs.ScopeSpans().All() {
					for _, sp := range ss.Spans().All() {
						seen[sp.Name()]++
						want := resOwner
						if !sp.TraceID().IsEmpty() {
							want = members.Owner(TraceKey(sp.TraceID()))
							if split[sp.TraceID()] == nil {
								split[sp.TraceID()] = map[int]bool{}
							}
							split[sp.TraceID()][d.shard] = true
						}
						if d.shard != want {
							t.Errorf("span %s of trace %x at member %d, want %d", sp.Name(), sp.TraceID(), d.shard, want)
						}
					}
				}
			}
			for shard, frames := range f.ByShard {
				for _, x := range frames {
					if members.Owner(x.Key) != shard {
						t.Errorf("member %d holds a frame whose key maps to %d", shard, members.Owner(x.Key))
					}
					key, err := r.FrameKey(x.Bytes)
					if err != nil || key != x.Key {
						t.Errorf("FrameKey %x (%v), routed with %x", key, err, x.Key)
					}
				}
			}
			if len(seen) != td.SpanCount() {
				t.Fatalf("%d distinct spans framed, %d sent", len(seen), td.SpanCount())
			}
			for n, c := range seen {
				if c != 1 {
					t.Fatalf("span %s framed %d times", n, c)
				}
			}
			for id, at := range split {
				if len(at) != 1 {
					t.Errorf("trace %x split over members %v", id, at)
				}
			}
			if f.Items != td.SpanCount() || f.Resources != 6 {
				t.Fatalf("Frames counts %d items of %d resources, want %d of 6", f.Items, f.Resources, td.SpanCount())
			}
		})
	}
}

// A part larger than MaxFrameBytes is cut as a resource is, each piece
// still holding one member's spans; metrics go by resource.
func TestRouteByTraceIDSplitsLargePartsAndRoutesMetricsByResource(t *testing.T) {
	td := mixedTraces(2, 200, 3)
	req := marshal(t, td)
	r, _ := NewRouter(RouterSettings{Shards: 3, MaxFrameBytes: 2048, HashVersion: otlpwire.HashV2, ByTraceID: true})
	members := FleetMembers(memberIDs(3))
	var f Frames
	if err := r.RouteTo(req, members, &f); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, d := range decodeAll(t, &f) {
		if len(d.frame.OTLP) > 2048 {
			t.Fatalf("frame of %d bytes", len(d.frame.OTLP))
		}
		for _, ss := range d.td.ResourceSpans().At(0).ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				total++
				if !sp.TraceID().IsEmpty() && members.Owner(TraceKey(sp.TraceID())) != d.shard {
					t.Fatalf("span of trace %x at member %d", sp.TraceID(), d.shard)
				}
			}
		}
	}
	if total != td.SpanCount() || f.Frames <= 6 {
		t.Fatalf("%d spans in %d frames, want %d spans cut into more than 6 frames", total, f.Frames, td.SpanCount())
	}

	// A limit of exactly the largest part frames every part whole.
	whole, err := NewRouter(RouterSettings{Shards: 3, MaxFrameBytes: 1_000_000, HashVersion: otlpwire.HashV2, ByTraceID: true})
	if err != nil {
		t.Fatal(err)
	}
	var all Frames
	if err := whole.RouteTo(req, members, &all); err != nil {
		t.Fatal(err)
	}
	largest := 0
	for _, d := range decodeAll(t, &all) {
		largest = max(largest, len(d.frame.OTLP))
	}
	exact, err := NewRouter(RouterSettings{Shards: 3, MaxFrameBytes: largest, HashVersion: otlpwire.HashV2, ByTraceID: true})
	if err != nil {
		t.Fatal(err)
	}
	var at Frames
	if err := exact.RouteTo(req, members, &at); err != nil {
		t.Fatal(err)
	}
	if at.Frames != all.Frames || at.Bytes != all.Bytes {
		t.Errorf("limit at the largest part (%d bytes): %d frames of %d bytes, want %d of %d", largest, at.Frames, at.Bytes, all.Frames, all.Bytes)
	}

	// Logs by trace id, records without one by resource.
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "logs")
	for i := range 30 {
		lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
		if i%3 != 0 {
			lr.SetTraceID(pcommon.TraceID{byte(i), 1})
		}
	}
	lb, _ := (&plog.ProtoMarshaler{}).MarshalLogs(ld)
	if err := r.RouteTo(otlpwire.NewRequest(otlpwire.SignalLogs, lb), members, &f); err != nil {
		t.Fatal(err)
	}
	if f.Items != 30 || f.Frames < 2 {
		t.Fatalf("logs: %d records in %d frames", f.Items, f.Frames)
	}
}

// Routing by trace id allocates one frame's memory per frame, nothing else.
func TestRouteByTraceIDAllocationsPerRequest(t *testing.T) {
	req := marshal(t, mixedTraces(10, 10, 50))
	r, _ := NewRouter(RouterSettings{Shards: 1, MaxFrameBytes: sdp.MaxArrayLen, HashVersion: otlpwire.HashV2, ByTraceID: true})
	members := FleetMembers(memberIDs(8))
	var f Frames
	if err := r.RouteTo(req, members, &f); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(20, func() {
		if err := r.RouteTo(req, members, &f); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != float64(f.Frames) {
		t.Fatalf("RouteTo by trace id allocated %.1f times for %d frames, want one per frame", allocs, f.Frames)
	}
}

// TraceKey's values are part of the routing contract.
func TestTraceKeyIsStable(t *testing.T) {
	for id, want := range map[[16]byte]uint64{
		{}:                          0,
		{1}:                         mix64(1),
		{0, 0, 0, 0, 0, 0, 0, 0, 1}: mix64(1 << 32),
	} {
		if got := TraceKey(id); got != want {
			t.Errorf("TraceKey(%x) = %#x, want %#x", id, got, want)
		}
	}
	if got := TraceKey([16]byte{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}); got != 0x85a25457e83b6d8a {
		t.Errorf("TraceKey of the W3C example id = %#x", got)
	}
}

// BenchmarkRouteByKey compares routing one request (10 resources of 20
// spans of 50 traces) by resource and by trace id, over fleets of 4 and 16:
// go test -run '^$' -bench RouteByKey -benchmem -count 6 ./internal/shard
func BenchmarkRouteByKey(b *testing.B) {
	req := marshal(b, mixedTraces(10, 10, 50))
	for _, n := range []int{4, 16} {
		members := FleetMembers(memberIDs(n))
		for _, byTrace := range []bool{false, true} {
			name := map[bool]string{false: "resource", true: "traceID"}[byTrace]
			b.Run(fmt.Sprintf("%s/members=%d", name, n), func(b *testing.B) {
				r, _ := NewRouter(RouterSettings{Shards: 1, MaxFrameBytes: sdp.MaxArrayLen, HashVersion: otlpwire.HashV2, ByTraceID: byTrace})
				var f Frames
				b.SetBytes(int64(len(req.Bytes())))
				b.ReportAllocs()
				for b.Loop() {
					if err := r.RouteTo(req, members, &f); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// Routing by metric name: every metric, with all its points, at the member
// of its name, whatever resource it is in; frame keys map back.
func TestRouteByMetricName(t *testing.T) {
	md := pmetric.NewMetrics()
	points := 0
	for r := range 5 {
		rm := md.ResourceMetrics().AppendEmpty()
		rm.Resource().Attributes().PutStr("service.name", fmt.Sprintf("svc-%d", r))
		sm := rm.ScopeMetrics().AppendEmpty()
		for m := range 12 {
			metric := sm.Metrics().AppendEmpty()
			metric.SetName(fmt.Sprintf("metric.%d", m))
			g := metric.SetEmptyGauge()
			for p := range m%3 + 1 {
				g.DataPoints().AppendEmpty().SetIntValue(int64(p))
				points++
			}
		}
	}
	b, _ := (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
	req := otlpwire.NewRequest(otlpwire.SignalMetrics, b)
	r, _ := NewRouter(RouterSettings{Shards: 1, MaxFrameBytes: sdp.MaxArrayLen, HashVersion: otlpwire.HashV2, ByMetricName: true})
	for name, members := range map[string]*Members{"fleet": FleetMembers(memberIDs(4)), "static": StaticMembers(memberIDs(4))} {
		t.Run(name, func(t *testing.T) {
			var f Frames
			if err := r.RouteTo(req, members, &f); err != nil {
				t.Fatal(err)
			}
			got := 0
			for shard, frames := range f.ByShard {
				for _, x := range frames {
					msg, _, err := sdp.Decode(x.Bytes)
					if err != nil {
						t.Fatal(err)
					}
					rf := msg.(*sdp.ResourceFrame)
					sent, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(rf.OTLP)
					if err != nil {
						t.Fatal(err)
					}
					for _, m := range sent.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().All() {
						if want := members.Owner(MetricKey([]byte(m.Name()))); want != shard {
							t.Errorf("%s at member %d, want %d", m.Name(), shard, want)
						}
					}
					got += sent.DataPointCount()
					if int(rf.ItemCount) != sent.DataPointCount() {
						t.Errorf("item_count %d, %d points", rf.ItemCount, sent.DataPointCount())
					}
					if key, err := r.FrameKey(x.Bytes); err != nil || key != x.Key || members.Owner(key) != shard {
						t.Errorf("FrameKey %x (%v), routed with %x at member %d", key, err, x.Key, shard)
					}
				}
			}
			if got != points || f.Items != points {
				t.Fatalf("%d points framed (Frames.Items %d), want %d", got, f.Items, points)
			}
		})
	}
	// Spans go by resource with ByMetricName.
	var f Frames
	if err := r.RouteTo(marshal(t, mixedTraces(4, 5, 3)), FleetMembers(memberIDs(4)), &f); err != nil {
		t.Fatal(err)
	}
	if f.Frames != 4 {
		t.Fatalf("traces by resource: %d frames for 4 resources", f.Frames)
	}
}

// MetricKey's values are part of the routing contract.
func TestMetricKeyIsStable(t *testing.T) {
	for name, want := range map[string]uint64{
		"":                     mix64(14695981039346656037), // FNV-1a's offset basis
		"http.server.duration": 0x9c5172a45c6c0028,
	} {
		if got := MetricKey([]byte(name)); got != want {
			t.Errorf("MetricKey(%q) = %#x, want %#x", name, got, want)
		}
	}
}

// Routing by stream: every point of a stream (resource, scope, metric,
// attributes) at one member, the points of one metric spread over several.
func TestRouteByStream(t *testing.T) {
	md := pmetric.NewMetrics()
	points := 0
	for r := range 3 {
		rm := md.ResourceMetrics().AppendEmpty()
		rm.Resource().Attributes().PutStr("service.name", fmt.Sprintf("svc-%d", r))
		sm := rm.ScopeMetrics().AppendEmpty()
		sm.Scope().SetName("scope")
		for m := range 4 {
			metric := sm.Metrics().AppendEmpty()
			metric.SetName(fmt.Sprintf("metric.%d", m))
			metric.SetUnit("1")
			sum := metric.SetEmptySum()
			sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
			for round := range 2 { // two points of every stream
				for h := range 8 {
					dp := sum.DataPoints().AppendEmpty()
					dp.Attributes().PutStr("host", fmt.Sprintf("host-%d", h))
					dp.SetIntValue(int64(round))
					points++
				}
			}
		}
	}
	b, _ := (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
	req := otlpwire.NewRequest(otlpwire.SignalMetrics, b)
	r, _ := NewRouter(RouterSettings{Shards: 1, MaxFrameBytes: sdp.MaxArrayLen, HashVersion: otlpwire.HashV2, ByStream: true, ByMetricName: true})
	for name, members := range map[string]*Members{"fleet": FleetMembers(memberIDs(4)), "static": StaticMembers(memberIDs(4))} {
		t.Run(name, func(t *testing.T) {
			var f Frames
			if err := r.RouteTo(req, members, &f); err != nil {
				t.Fatal(err)
			}
			streams := map[string]map[int]bool{}
			metrics := map[string]map[int]bool{}
			got := 0
			for shard, frames := range f.ByShard {
				for _, x := range frames {
					msg, _, _ := sdp.Decode(x.Bytes)
					rf := msg.(*sdp.ResourceFrame)
					sent, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(rf.OTLP)
					if err != nil {
						t.Fatal(err)
					}
					rm := sent.ResourceMetrics().At(0)
					svc, _ := rm.Resource().Attributes().Get("service.name")
					for _, m := range rm.ScopeMetrics().At(0).Metrics().All() {
						if m.Unit() != "1" || m.Sum().AggregationTemporality() != pmetric.AggregationTemporalityCumulative {
							t.Fatal("metric envelope lost")
						}
						for _, dp := range m.Sum().DataPoints().All() {
							host, _ := dp.Attributes().Get("host")
							id := svc.Str() + "/" + m.Name() + "/" + host.Str()
							if streams[id] == nil {
								streams[id] = map[int]bool{}
							}
							streams[id][shard] = true
							if metrics[m.Name()] == nil {
								metrics[m.Name()] = map[int]bool{}
							}
							metrics[m.Name()][shard] = true
							got++
						}
					}
					if key, err := r.FrameKey(x.Bytes); err != nil || key != x.Key || members.Owner(key) != shard {
						t.Errorf("FrameKey %x (%v), routed with %x at member %d", key, err, x.Key, shard)
					}
				}
			}
			if got != points || len(streams) != 3*4*8 {
				t.Fatalf("%d points of %d streams, want %d of %d", got, len(streams), points, 3*4*8)
			}
			for id, at := range streams {
				if len(at) != 1 {
					t.Errorf("stream %s on members %v", id, at)
				}
			}
			for name, at := range metrics {
				if len(at) < 2 {
					t.Errorf("metric %s on %d member: streams do not spread", name, len(at))
				}
			}
		})
	}
}

// StreamKey's values are part of the routing contract.
func TestStreamKeyIsStable(t *testing.T) {
	if got := StreamKey(0, 0); got != 0 {
		t.Errorf("StreamKey(0, 0) = %#x, want 0", got)
	}
	if got, want := StreamKey(1, 1<<47), mix64(1^1); got != want {
		t.Errorf("StreamKey(1, 1<<47) = %#x, want %#x", got, want)
	}
	if got := StreamKey(0x0123456789abcdef, 0xfedcba9876543210); got != 0xbe6b97b8eae0ad5a {
		t.Errorf("StreamKey = %#x, want 0xbe6b97b8eae0ad5a", got)
	}
}

// Routing by trace with parts cut to max_frame_bytes allocates one frame's
// memory per frame once warm: the split's scratch is kept.
func TestRouteByTraceIDAllocationsWhenSplitting(t *testing.T) {
	req := marshal(t, mixedTraces(2, 200, 3))
	r, _ := NewRouter(RouterSettings{Shards: 1, MaxFrameBytes: 2048, HashVersion: otlpwire.HashV2, ByTraceID: true})
	members := FleetMembers(memberIDs(3))
	var f Frames
	if err := r.RouteTo(req, members, &f); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(10, func() {
		if err := r.RouteTo(req, members, &f); err != nil {
			t.Fatal(err)
		}
	})
	if f.Frames <= 6 || allocs != float64(f.Frames) {
		t.Fatalf("%.1f allocations for %d frames, want one per frame (and more than 6 frames)", allocs, f.Frames)
	}
}

// Log records by trace: a stored frame's key is its first record's trace,
// or its resource's when no record has one.
func TestFrameKeyOfLogsByTrace(t *testing.T) {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "logs")
	sl := rl.ScopeLogs().AppendEmpty()
	sl.LogRecords().AppendEmpty() // no trace id
	sl.LogRecords().AppendEmpty().SetTraceID(pcommon.TraceID{5, 1})
	sl.LogRecords().AppendEmpty().SetTraceID(pcommon.TraceID{6, 1})
	lb, _ := (&plog.ProtoMarshaler{}).MarshalLogs(ld)
	r, _ := NewRouter(RouterSettings{Shards: 1, MaxFrameBytes: sdp.MaxArrayLen, HashVersion: otlpwire.HashV2, ByTraceID: true})
	members := FleetMembers(memberIDs(5))
	var f Frames
	if err := r.RouteTo(otlpwire.NewRequest(otlpwire.SignalLogs, lb), members, &f); err != nil {
		t.Fatal(err)
	}
	keys := map[uint64]bool{}
	for shard, frames := range f.ByShard {
		for _, x := range frames {
			key, err := r.FrameKey(x.Bytes)
			if err != nil || key != x.Key || members.Owner(key) != shard {
				t.Errorf("FrameKey %x (%v), routed with %x at member %d", key, err, x.Key, shard)
			}
			keys[key] = true
		}
	}
	if f.Items != 3 || len(keys) != f.Frames {
		t.Fatalf("%d records in %d frames with %d keys", f.Items, f.Frames, len(keys))
	}
	// The record without a trace id goes with its resource.
	res := otlpwire.NewRequest(otlpwire.SignalLogs, lb)
	for rd := range res.Resources() {
		rs, _ := rd.Resource()
		id, _ := rs.HashWith(otlpwire.HashV2)
		owner := members.Owner(id)
		found := false
		for _, x := range f.ByShard[owner] {
			found = found || x.Key == id || members.Owner(x.Key) == owner
		}
		if !found {
			t.Errorf("no frame at the resource's member %d", owner)
		}
	}
}

// Exclusion moves keys to the same members in every release: the
// assignment of sample keys with members 1 and 3 of 5 excluded, pinned, at
// least a few of them moved from an excluded member.
func TestExcludingAssignmentIsStable(t *testing.T) {
	keys := SampleKeys(16)
	for name, c := range map[string]struct {
		all  *Members
		want string
	}{
		"fleet":  {FleetMembers(memberIDs(5)), "4422402024440404"},
		"static": {StaticMembers(memberIDs(5)), "4402402000242224"},
	} {
		x := c.all.Excluding([]int{1, 3})
		got, moved := "", 0
		for _, k := range keys {
			got += fmt.Sprint(x.Owner(k))
			if o := c.all.Owner(k); o == 1 || o == 3 {
				moved++
			}
		}
		if got != c.want {
			t.Errorf("%s: owners %s, want %s", name, got, c.want)
		}
		if moved < 4 {
			t.Errorf("%s: only %d of the keys moved: the pin covers too little", name, moved)
		}
	}
}
