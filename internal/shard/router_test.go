// SPDX-License-Identifier: Apache-2.0

package shard

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

// makeTraces builds resources with distinct service names, each holding
// spans with a few attributes; pad lengthens every span's name.
func makeTraces(resources, spans int, pad int) ptrace.Traces {
	td := ptrace.NewTraces()
	for r := range resources {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", fmt.Sprintf("svc-%d", r))
		rs.Resource().Attributes().PutInt("host.index", int64(r))
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName("scope")
		for s := range spans {
			span := ss.Spans().AppendEmpty()
			span.SetName(fmt.Sprintf("span-%d-%d%s", r, s, strings.Repeat("x", pad)))
			span.SetTraceID(pcommon.TraceID{byte(r), byte(s), 1})
			span.SetSpanID(pcommon.SpanID{byte(s), 2})
			span.Attributes().PutStr("k", "v")
		}
	}
	return td
}

func marshal(t testing.TB, td ptrace.Traces) otlpwire.Request {
	b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	return otlpwire.NewRequest(otlpwire.SignalTraces, b)
}

// decoded is a frame of Frames.ByShard, decoded.
type decoded struct {
	shard int
	frame sdp.ResourceFrame
	td    ptrace.Traces
}

func decodeAll(t *testing.T, f *Frames) []decoded {
	t.Helper()
	var out []decoded
	for shard, frames := range f.ByShard {
		for _, fr := range frames {
			msg, n, err := sdp.Decode(fr.Bytes)
			if err != nil || n != len(fr.Bytes) {
				t.Fatalf("shard %d: decoding frame: n=%d of %d, %v", shard, n, len(fr.Bytes), err)
			}
			rf, ok := msg.(*sdp.ResourceFrame)
			if !ok {
				t.Fatalf("shard %d: got %T, want *sdp.ResourceFrame", shard, msg)
			}
			td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(rf.OTLP)
			if err != nil {
				t.Fatalf("shard %d: frame OTLP does not unmarshal: %v", shard, err)
			}
			if int(rf.Shard) != shard || int(rf.ItemCount) != td.SpanCount() || fr.Items != td.SpanCount() {
				t.Fatalf("shard %d: frame says shard %d, %d items (Frame.Items %d), payload holds %d",
					shard, rf.Shard, rf.ItemCount, fr.Items, td.SpanCount())
			}
			out = append(out, decoded{shard: shard, frame: *rf, td: td})
		}
	}
	return out
}

func TestRouteOneFramePerResource(t *testing.T) {
	td := makeTraces(20, 5, 0)
	r, err := NewRouter(RouterSettings{Shards: 4, MaxFrameBytes: sdp.MaxArrayLen, HashVersion: otlpwire.HashV2})
	if err != nil {
		t.Fatal(err)
	}
	var f Frames
	if err := r.Route(marshal(t, td), &f); err != nil {
		t.Fatal(err)
	}
	got := decodeAll(t, &f)
	if len(got) != 20 || f.Frames != 20 || f.Resources != 20 || f.Items != 100 {
		t.Fatalf("got %d frames (Frames=%d Resources=%d Items=%d), want 20 frames of 5 items", len(got), f.Frames, f.Resources, f.Items)
	}
	shardsUsed := map[int]bool{}
	for _, d := range got {
		if d.td.ResourceSpans().Len() != 1 {
			t.Fatalf("frame holds %d resources, want 1", d.td.ResourceSpans().Len())
		}
		name, _ := d.td.ResourceSpans().At(0).Resource().Attributes().Get("service.name")
		var want ptrace.ResourceSpans
		for i := range td.ResourceSpans().Len() {
			if v, _ := td.ResourceSpans().At(i).Resource().Attributes().Get("service.name"); v.Str() == name.Str() {
				want = td.ResourceSpans().At(i)
			}
		}
		wantTD := ptrace.NewTraces()
		want.CopyTo(wantTD.ResourceSpans().AppendEmpty())
		wantBytes, _ := (&ptrace.ProtoMarshaler{}).MarshalTraces(wantTD)
		gotBytes, _ := (&ptrace.ProtoMarshaler{}).MarshalTraces(d.td)
		if string(wantBytes) != string(gotBytes) {
			t.Errorf("%s: frame payload differs from the resource's own data", name.Str())
		}
		shardsUsed[d.shard] = true
	}
	if len(shardsUsed) < 2 {
		t.Errorf("20 resources all landed on %v of 4 shards", shardsUsed)
	}
}

func TestRouteIsStableAndMatchesJump(t *testing.T) {
	r, _ := NewRouter(RouterSettings{Shards: 7, MaxFrameBytes: sdp.MaxArrayLen, HashVersion: otlpwire.HashV2})
	var f Frames
	first := map[uint64]int{}
	for round := range 3 {
		// Different batches, different resource order: same placement.
		td := makeTraces(10+round*5, 1+round, 0)
		if err := r.Route(marshal(t, td), &f); err != nil {
			t.Fatal(err)
		}
		for _, d := range decodeAll(t, &f) {
			if d.shard != Jump(d.frame.ResourceHash, 7) {
				t.Fatalf("resource hash %#x on shard %d, Jump says %d", d.frame.ResourceHash, d.shard, Jump(d.frame.ResourceHash, 7))
			}
			if prev, ok := first[d.frame.ResourceHash]; ok && prev != d.shard {
				t.Fatalf("resource %#x moved from shard %d to %d", d.frame.ResourceHash, prev, d.shard)
			}
			first[d.frame.ResourceHash] = d.shard
		}
	}
}

func TestRouteByAttributes(t *testing.T) {
	td := ptrace.NewTraces()
	for i := range 12 {
		rs := td.ResourceSpans().AppendEmpty()
		// Two tenants, many hosts each: routing by tenant must ignore host.
		if i < 10 {
			rs.Resource().Attributes().PutStr("tenant", fmt.Sprintf("t%d", i%2))
		}
		rs.Resource().Attributes().PutStr("host.name", fmt.Sprintf("h%d", i))
		rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty().SetName("s")
	}
	r, _ := NewRouter(RouterSettings{Shards: 16, Attributes: []string{"tenant"}, MaxFrameBytes: sdp.MaxArrayLen, HashVersion: otlpwire.HashV2})
	var f Frames
	if err := r.Route(marshal(t, td), &f); err != nil {
		t.Fatal(err)
	}
	tenantShard := map[string]int{}
	defaults := 0
	for _, d := range decodeAll(t, &f) {
		tenant, ok := d.td.ResourceSpans().At(0).Resource().Attributes().Get("tenant")
		if !ok {
			defaults++
			if d.shard != DefaultShard {
				t.Errorf("resource without tenant on shard %d, want DefaultShard %d", d.shard, DefaultShard)
			}
			continue
		}
		if prev, seen := tenantShard[tenant.Str()]; seen && prev != d.shard {
			t.Errorf("tenant %s on shards %d and %d", tenant.Str(), prev, d.shard)
		}
		tenantShard[tenant.Str()] = d.shard
	}
	if defaults != 2 || len(tenantShard) != 2 {
		t.Fatalf("got %d default-routed resources and tenants %v, want 2 and 2", defaults, tenantShard)
	}
}

func TestRouteSplitsLargeResources(t *testing.T) {
	// One resource of 200 spans of ~1 KiB each cannot fit a 16 KiB frame.
	td := makeTraces(2, 200, 1000)
	r, _ := NewRouter(RouterSettings{Shards: 3, MaxFrameBytes: 16 << 10, HashVersion: otlpwire.HashV2})
	var f Frames
	if err := r.Route(marshal(t, td), &f); err != nil {
		t.Fatal(err)
	}
	perResource := map[uint64]int{}
	shardOf := map[uint64]int{}
	spans := map[string]int{}
	for _, d := range decodeAll(t, &f) {
		if len(d.frame.OTLP) > 16<<10 {
			t.Errorf("frame OTLP is %d bytes, over the 16 KiB limit", len(d.frame.OTLP))
		}
		if prev, ok := shardOf[d.frame.ResourceHash]; ok && prev != d.shard {
			t.Errorf("chunks of one resource on shards %d and %d", prev, d.shard)
		}
		shardOf[d.frame.ResourceHash] = d.shard
		perResource[d.frame.ResourceHash]++
		ss := d.td.ResourceSpans().At(0).ScopeSpans()
		for i := range ss.Len() {
			for j := range ss.At(i).Spans().Len() {
				spans[ss.At(i).Spans().At(j).Name()]++
			}
		}
	}
	if len(perResource) != 2 {
		t.Fatalf("frames carry %d resources, want 2", len(perResource))
	}
	for h, n := range perResource {
		if n < 10 {
			t.Errorf("resource %#x in %d frames, want at least 10 (200 KiB in 16 KiB frames)", h, n)
		}
	}
	if len(spans) != 400 || f.Items != 400 || f.Resources != 2 {
		t.Fatalf("got %d distinct spans (Items %d) of %d resources, want 400 of 2", len(spans), f.Items, f.Resources)
	}
	for name, n := range spans {
		if n != 1 {
			t.Errorf("span %s.. appears %d times", name[:12], n)
		}
	}
}

func TestRouteLeavesOutResourcesWithOversizedItems(t *testing.T) {
	td := makeTraces(3, 2, 0)
	// The middle resource gets one span far larger than a frame.
	td.ResourceSpans().At(1).ScopeSpans().At(0).Spans().At(1).SetName(strings.Repeat("y", 4096))
	r, _ := NewRouter(RouterSettings{Shards: 2, MaxFrameBytes: 2048, HashVersion: otlpwire.HashV2})
	var f Frames
	if err := r.Route(marshal(t, td), &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Unroutable) != 1 || f.Unroutable[0].Index != 1 || f.Unroutable[0].Items != 2 ||
		!errors.Is(f.Unroutable[0].Err, otlpwire.ErrItemTooLarge) {
		t.Fatalf("Unroutable = %+v, want resource 1 with 2 items and ErrItemTooLarge", f.Unroutable)
	}
	for _, d := range decodeAll(t, &f) {
		if v, _ := d.td.ResourceSpans().At(0).Resource().Attributes().Get("service.name"); v.Str() == "svc-1" {
			t.Fatal("a chunk of the unroutable resource was kept")
		}
	}
	if f.Resources != 2 || f.Items != 4 {
		t.Fatalf("framed %d resources, %d items; want 2 and 4", f.Resources, f.Items)
	}
}

func TestRouteRejectsMalformedRequests(t *testing.T) {
	r, _ := NewRouter(RouterSettings{Shards: 2, MaxFrameBytes: 4096, HashVersion: otlpwire.HashV2})
	var f Frames
	good := marshal(t, makeTraces(2, 1, 0)).Bytes()
	bad := good[:len(good)-3]
	err := r.Route(otlpwire.NewRequest(otlpwire.SignalTraces, bad), &f)
	if !errors.Is(err, otlpwire.ErrMalformed) {
		t.Fatalf("Route(truncated) = %v, want ErrMalformed", err)
	}
	if f.Frames != 0 || len(f.ByShard[0])+len(f.ByShard[1]) != 0 {
		t.Fatalf("a failed Route left %d frames", f.Frames)
	}
}

func TestNewRouterValidates(t *testing.T) {
	for _, s := range []RouterSettings{
		{Shards: 0, MaxFrameBytes: 1000, HashVersion: otlpwire.HashV2},
		{Shards: 1, MaxFrameBytes: 0, HashVersion: otlpwire.HashV2},
		{Shards: 1, MaxFrameBytes: sdp.MaxArrayLen + 1, HashVersion: otlpwire.HashV1},
	} {
		if _, err := NewRouter(s); !errors.Is(err, ErrInvalidSettings) {
			t.Errorf("NewRouter(%+v) = %v, want ErrInvalidSettings", s, err)
		}
	}
	// The bounds themselves are valid: one shard, frames of 1 byte up to
	// sdp.MaxArrayLen.
	for _, s := range []RouterSettings{
		{Shards: 1, MaxFrameBytes: 1, HashVersion: otlpwire.HashV2},
		{Shards: 1, MaxFrameBytes: sdp.MaxArrayLen, HashVersion: otlpwire.HashV1},
	} {
		r, err := NewRouter(s)
		if err != nil || r.Shards() != 1 {
			t.Errorf("NewRouter(%+v) = %v, %v, want a router of 1 shard", s, r, err)
		}
	}
}

// MaxFrameBytes is inclusive: a resource whose request is exactly that
// size is framed whole, at the cost of a resource below the limit (one
// allocation for the frame), not cut through the splitting path, which
// allocates its scratch on first use.
func TestRouteFramesAResourceOfExactlyMaxFrameBytesWhole(t *testing.T) {
	req := marshal(t, makeTraces(1, 3, 10))
	size := -1
	for rd, err := range req.Resources() {
		if err != nil {
			t.Fatal(err)
		}
		size = otlpwire.RequestSize(rd)
	}
	route := func(maxFrame int) (*Frames, float64) {
		r, err := NewRouter(RouterSettings{Shards: 3, MaxFrameBytes: maxFrame, HashVersion: otlpwire.HashV2})
		if err != nil {
			t.Fatal(err)
		}
		var f Frames
		if err := r.Route(req, &f); err != nil {
			t.Fatal(err)
		}
		allocs := testing.AllocsPerRun(10, func() {
			var fresh Frames
			if err := r.Route(req, &fresh); err != nil {
				t.Fatal(err)
			}
		})
		return &f, allocs
	}
	exact, exactAllocs := route(size)
	roomy, roomyAllocs := route(size + 1)
	if exact.Frames != 1 || exact.Resources != 1 || exact.Items != 3 {
		t.Fatalf("MaxFrameBytes = request size %d: %d frames, %d resources, %d items; want 1, 1, 3",
			size, exact.Frames, exact.Resources, exact.Items)
	}
	if got, want := frameBytes(exact), frameBytes(roomy); !bytes.Equal(got, want) {
		t.Fatal("the frame at the exact limit differs from the frame with room to spare")
	}
	if exactAllocs != roomyAllocs {
		t.Fatalf("routing into a fresh Frames at the exact limit allocated %.1f times, %.1f with room to spare: the resource took the splitting path",
			exactAllocs, roomyAllocs)
	}
	// One byte less and the resource is cut in two.
	if below, _ := route(size - 1); below.Frames != 2 || below.Resources != 1 || below.Items != 3 {
		t.Fatalf("MaxFrameBytes one below the request size: %d frames, %d resources, %d items; want 2, 1, 3",
			below.Frames, below.Resources, below.Items)
	}
}

// frameBytes concatenates the bytes of every frame in f, by shard.
func frameBytes(f *Frames) []byte {
	var b []byte
	for _, fs := range f.ByShard {
		for _, fr := range fs {
			b = append(b, fr.Bytes...)
		}
	}
	return b
}

// appendOwned returns memory of its own even when there is nothing to
// append, where append would hand back the caller's array.
func TestAppendOwnedNeverSharesTheHead(t *testing.T) {
	for _, more := range [][]byte{nil, {}, {7, 8}} {
		head := []byte{1, 2, 3}
		got := appendOwned(head, more)
		want := append([]byte{1, 2, 3}, more...)
		if !bytes.Equal(got, want) || len(got) != cap(got) {
			t.Fatalf("appendOwned(%v, %v) = %v (cap %d), want %v at full capacity", head, more, got, cap(got), want)
		}
		got[0] = 9
		if head[0] != 1 {
			t.Fatalf("appendOwned(head, %v) returned head's own array", more)
		}
	}
}

func TestNewRouterRefusesUnknownHashVersions(t *testing.T) {
	// 0 is the zero value: a caller that forgot the version is refused
	// rather than routed with a guess.
	for _, v := range []otlpwire.HashVersion{0, 3, 255} {
		_, err := NewRouter(RouterSettings{Shards: 2, MaxFrameBytes: 4096, HashVersion: v})
		if !errors.Is(err, otlpwire.ErrHashVersion) || !errors.Is(err, ErrInvalidSettings) {
			t.Errorf("NewRouter(HashVersion %d) = %v, want ErrHashVersion and ErrInvalidSettings", v, err)
		}
	}
	for _, v := range []otlpwire.HashVersion{otlpwire.HashV1, otlpwire.HashV2} {
		if _, err := NewRouter(RouterSettings{Shards: 2, MaxFrameBytes: 4096, HashVersion: v}); err != nil {
			t.Errorf("NewRouter(HashVersion %d) = %v", v, err)
		}
	}
}

// The per-resource cost must not grow with allocations: a reused Frames
// allocates the frame bytes, one allocation per frame (the transport keeps
// each frame until it is acknowledged), and nothing else.
func TestRouteAllocationsPerRequest(t *testing.T) {
	req := marshal(t, makeTraces(50, 10, 0))
	for _, v := range []otlpwire.HashVersion{otlpwire.HashV1, otlpwire.HashV2} {
		r, _ := NewRouter(RouterSettings{Shards: 8, MaxFrameBytes: sdp.MaxArrayLen, HashVersion: v})
		var f Frames
		if err := r.Route(req, &f); err != nil {
			t.Fatal(err)
		}
		allocs := testing.AllocsPerRun(20, func() {
			if err := r.Route(req, &f); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 50 || f.Frames != 50 {
			t.Fatalf("HashV%d: Route allocated %.1f times for %d frames, want one per frame", v, allocs, f.Frames)
		}
	}
}

// Frames cut from a large resource cost one allocation each too, once the
// scratch has grown.
func TestRouteAllocationsWhenSplitting(t *testing.T) {
	req := marshal(t, makeTraces(2, 200, 1000))
	// The second limit is the largest chunk the first one gives, so that a
	// chunk fills its frame to the last byte: the scratch must hold it.
	fullest := 0
	for _, maxFrame := range []int{16 << 10, 0} {
		if maxFrame == 0 {
			maxFrame = fullest
		}
		r, err := NewRouter(RouterSettings{Shards: 3, MaxFrameBytes: maxFrame, HashVersion: otlpwire.HashV2})
		if err != nil {
			t.Fatal(err)
		}
		var f Frames
		if err := r.Route(req, &f); err != nil {
			t.Fatal(err)
		}
		largest := 0
		for _, fs := range f.ByShard {
			for _, fr := range fs {
				largest = max(largest, len(fr.Bytes)-sdp.ResourceHeaderSize)
			}
		}
		if largest > maxFrame || (fullest != 0 && largest != maxFrame) {
			t.Fatalf("MaxFrameBytes %d: the largest frame carries %d bytes of OTLP", maxFrame, largest)
		}
		fullest = largest
		// The scratch, sized for the largest chunk, is kept: neither it nor
		// SplitResource's buffer is allocated again.
		allocs := testing.AllocsPerRun(20, func() {
			if err := r.Route(req, &f); err != nil {
				t.Fatal(err)
			}
		})
		if want := float64(f.Frames); allocs != want || f.Frames < 20 {
			t.Fatalf("MaxFrameBytes %d: Route allocated %.1f times for %d frames of 2 resources, want %.0f",
				maxFrame, allocs, f.Frames, want)
		}
	}
}

// Every frame owns its bytes, exactly its length, and they are what the
// frame codec encodes from SplitResource's chunks: the transport rewrites a
// frame's sequence in place and counts len(Bytes) against queue_bytes, so
// frames must share no memory with each other, the request or the Frames.
func TestRouteFramesOwnTheirBytes(t *testing.T) {
	// The last resource is an empty message: its frame is the header and a
	// 2-byte request, tag and zero length.
	req := otlpwire.NewRequest(otlpwire.SignalTraces, append(marshal(t, makeTraces(4, 200, 100)).Bytes(), 0x0a, 0x00))
	const maxFrame = 8 << 10
	r, _ := NewRouter(RouterSettings{Shards: 3, MaxFrameBytes: maxFrame, HashVersion: otlpwire.HashV2})
	// Reference: the chunks of each resource, framed by the codec.
	var want [][]byte
	for rd, err := range req.Resources() {
		if err != nil {
			t.Fatal(err)
		}
		res, _ := rd.Resource()
		identity, _ := res.HashWith(otlpwire.HashV2)
		for chunk, err := range otlpwire.SplitResource(rd, maxFrame, nil) {
			if err != nil {
				t.Fatal(err)
			}
			rf := sdp.ResourceFrame{Signal: uint8(otlpwire.SignalTraces), Shard: uint32(Jump(identity, 3)),
				ResourceHash: identity, ItemCount: uint32(chunk.ItemCount), OTLP: chunk.Request}
			b, err := rf.AppendFrame(nil)
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, b)
		}
	}
	var f Frames
	// Route twice into the same Frames: the second must not touch the
	// first's frames.
	if err := r.Route(req, &f); err != nil {
		t.Fatal(err)
	}
	var first []Frame
	for _, fs := range f.ByShard {
		first = append(first, fs...)
	}
	if err := r.Route(req, &f); err != nil {
		t.Fatal(err)
	}
	var got [][]byte
	for _, fr := range first {
		got = append(got, fr.Bytes)
	}
	for _, fs := range f.ByShard {
		for _, fr := range fs {
			got = append(got, fr.Bytes)
		}
	}
	if len(got) != 2*len(want) || len(want) <= 5 {
		t.Fatalf("%d frames over two routes, want 2 x %d (and more than 5: some resources split)", len(got), len(want))
	}
	wantSet := map[string]int{}
	for _, b := range want {
		wantSet[string(b)] += 2
	}
	for i, b := range got {
		if len(b) != cap(b) {
			t.Fatalf("frame %d: %d bytes with capacity %d", i, len(b), cap(b))
		}
		wantSet[string(b)]--
	}
	for _, n := range wantSet {
		if n != 0 {
			t.Fatal("the frames differ from SplitResource's chunks framed by AppendFrame")
		}
	}
	copies := make([][]byte, len(got))
	for i, b := range got {
		copies[i] = bytes.Clone(b)
	}
	clear(req.Bytes())
	for i, b := range got {
		for j := range b {
			b[j] = 0xff
		}
		for k := range got {
			if k != i && !bytes.Equal(got[k], copies[k]) {
				t.Fatalf("writing frame %d changed frame %d (or clearing the request did)", i, k)
			}
		}
		copy(b, copies[i])
	}
}

// After Clear, a Frames kept for reuse references no frame of its last
// Route, so that a pooled Frames keeps none alive.
func TestClearDropsTheFrames(t *testing.T) {
	r, _ := NewRouter(RouterSettings{Shards: 3, MaxFrameBytes: 8 << 10, HashVersion: otlpwire.HashV2})
	var f Frames
	if err := r.Route(marshal(t, makeTraces(4, 200, 100)), &f); err != nil {
		t.Fatal(err)
	}
	if f.Frames < 5 {
		t.Fatalf("%d frames, want several", f.Frames)
	}
	f.Clear()
	for _, fr := range f.all[:cap(f.all)] {
		if fr.Bytes != nil {
			t.Fatal("the frame array still references a frame")
		}
	}
	for _, rf := range f.routed[:cap(f.routed)] {
		if rf.frame.Bytes != nil {
			t.Fatal("the routed list still references a frame")
		}
	}
	if f.Frames != 0 || len(f.ByShard) != 3 || len(f.ByShard[0])+len(f.ByShard[1])+len(f.ByShard[2]) != 0 {
		t.Fatalf("after Clear: %d frames, ByShard %v", f.Frames, f.ByShard)
	}
}

// With Alloc, every frame is built in the buffer Alloc returns for its
// exact length, one per frame, and the bytes are the same as on the heap
// whatever the buffer held before: a pool hands out memory it does not
// clear.
func TestRouteBuildsFramesInAllocatedMemory(t *testing.T) {
	req := otlpwire.NewRequest(otlpwire.SignalTraces, append(marshal(t, makeTraces(4, 200, 100)).Bytes(), 0x0a, 0x00))
	r, _ := NewRouter(RouterSettings{Shards: 3, MaxFrameBytes: 8 << 10, HashVersion: otlpwire.HashV2})
	var heap Frames
	if err := r.Route(req, &heap); err != nil {
		t.Fatal(err)
	}
	var given [][]byte
	pooled := Frames{Alloc: func(n int) []byte {
		b := bytes.Repeat([]byte{0xee}, n+n/8+1)[:n]
		given = append(given, b)
		return b
	}}
	if err := r.Route(req, &pooled); err != nil {
		t.Fatal(err)
	}
	if len(given) != heap.Frames || pooled.Frames != heap.Frames {
		t.Fatalf("Alloc called %d times for %d frames (heap route: %d)", len(given), pooled.Frames, heap.Frames)
	}
	for shard, fs := range pooled.ByShard {
		for k, fr := range fs {
			if want := heap.ByShard[shard][k]; !bytes.Equal(fr.Bytes, want.Bytes) || fr.Items != want.Items || fr.Key != want.Key {
				t.Fatalf("shard %d frame %d differs from the heap-built frame", shard, k)
			}
		}
	}
	for _, fs := range pooled.ByShard {
		for _, fr := range fs {
			found := false
			for _, b := range given {
				found = found || (&b[0] == &fr.Bytes[0] && len(b) == len(fr.Bytes))
			}
			if !found {
				t.Fatal("a frame is not in a buffer Alloc returned for its exact length")
			}
		}
	}
}
