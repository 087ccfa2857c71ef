// SPDX-License-Identifier: Apache-2.0

package shard

import (
	"errors"
	"fmt"
	"testing"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

func TestRouteToFleetAssignsByKeyAndKeepsIt(t *testing.T) {
	r, _ := NewRouter(RouterSettings{Shards: 1, MaxFrameBytes: sdp.MaxArrayLen, HashVersion: otlpwire.HashV2})
	members := FleetMembers([]string{"consumer-2", "consumer-0", "consumer-1"})
	var f Frames
	if err := r.RouteTo(marshal(t, makeTraces(40, 2, 0)), members, &f); err != nil {
		t.Fatal(err)
	}
	if f.Members != members || len(f.ByShard) != 3 {
		t.Fatalf("Frames over %p with %d shards, want the snapshot %p with 3", f.Members, len(f.ByShard), members)
	}
	seen := 0
	for shard, frames := range f.ByShard {
		for _, fr := range frames {
			msg, _, err := sdp.Decode(fr.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			rf := msg.(*sdp.ResourceFrame)
			// Routing by resource: the key is the identity hash.
			if fr.Key != rf.ResourceHash {
				t.Errorf("frame key %#x, want its resource hash %#x", fr.Key, rf.ResourceHash)
			}
			if owner := members.Owner(fr.Key); owner != shard {
				t.Errorf("resource %#x on member %d, Owner says %d", fr.Key, shard, owner)
			}
			seen++
		}
	}
	if seen != 40 {
		t.Errorf("routed %d frames, want 40", seen)
	}
}

func TestRouteToFleetByAttributesKeepsDefaultsTogether(t *testing.T) {
	td := makeTraces(12, 1, 0)
	for i := range 8 {
		td.ResourceSpans().At(i).Resource().Attributes().PutStr("tenant", fmt.Sprintf("t%d", i%2))
	}
	r, _ := NewRouter(RouterSettings{Shards: 1, Attributes: []string{"tenant"}, MaxFrameBytes: sdp.MaxArrayLen, HashVersion: otlpwire.HashV2})
	members := FleetMembers(memberIDs(5))
	var f Frames
	if err := r.RouteTo(marshal(t, td), members, &f); err != nil {
		t.Fatal(err)
	}
	defaults := map[int]int{}
	for shard, frames := range f.ByShard {
		for _, fr := range frames {
			if fr.Key == defaultKey {
				defaults[shard]++
			}
		}
	}
	if len(defaults) != 1 || defaults[members.Owner(defaultKey)] != 4 {
		t.Errorf("resources without a tenant by member: %v, want all 4 on member %d", defaults, members.Owner(defaultKey))
	}
}

func TestRouteToEmptyFleet(t *testing.T) {
	r, _ := NewRouter(RouterSettings{Shards: 1, MaxFrameBytes: sdp.MaxArrayLen, HashVersion: otlpwire.HashV2})
	var f Frames
	err := r.RouteTo(marshal(t, makeTraces(3, 1, 0)), FleetMembers(nil), &f)
	if !errors.Is(err, ErrNoMembers) {
		t.Fatalf("RouteTo over no members: %v, want ErrNoMembers", err)
	}
	if f.Frames != 0 || len(f.ByShard) != 0 {
		t.Errorf("Frames not empty after ErrNoMembers: %d frames, %d shards", f.Frames, len(f.ByShard))
	}
}

// A fleet costs no more allocations per request than a static list.
func TestRouteToAllocationsPerRequest(t *testing.T) {
	req := marshal(t, makeTraces(50, 10, 0))
	r, _ := NewRouter(RouterSettings{Shards: 1, MaxFrameBytes: sdp.MaxArrayLen, HashVersion: otlpwire.HashV2})
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
	if allocs != 50 || f.Frames != 50 {
		t.Fatalf("RouteTo allocated %.1f times for %d frames, want one per frame", allocs, f.Frames)
	}
}

// BenchmarkRouteStaticVsFleet compares routing one request over a static
// list and over a resolver-driven fleet of the same size:
// go test -run '^$' -bench RouteStaticVsFleet -benchmem ./internal/shard
func BenchmarkRouteStaticVsFleet(b *testing.B) {
	req := marshal(b, makeTraces(50, 10, 0))
	for _, n := range []int{3, 16} {
		r, _ := NewRouter(RouterSettings{Shards: n, MaxFrameBytes: sdp.MaxArrayLen, HashVersion: otlpwire.HashV2})
		for _, c := range []struct {
			name    string
			members *Members
		}{
			{"static", StaticMembers(memberIDs(n))},
			{"fleet", FleetMembers(memberIDs(n))},
		} {
			b.Run(fmt.Sprintf("%s-%d", c.name, n), func(b *testing.B) {
				var f Frames
				b.ReportAllocs()
				b.SetBytes(int64(len(req.Bytes())))
				for b.Loop() {
					if err := r.RouteTo(req, c.members, &f); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// FrameKey recovers from a frame alone the key Route recorded beside it,
// for both routing keys, so a stored frame can be assigned again.
func TestFrameKeyMatchesRoutedKey(t *testing.T) {
	td := makeTraces(20, 2, 0)
	for i := range 14 {
		td.ResourceSpans().At(i).Resource().Attributes().PutStr("tenant", fmt.Sprintf("t%d", i%3))
	}
	for _, attributes := range [][]string{nil, {"tenant"}} {
		r, _ := NewRouter(RouterSettings{Shards: 1, Attributes: attributes, MaxFrameBytes: sdp.MaxArrayLen, HashVersion: otlpwire.HashV2})
		var f Frames
		if err := r.RouteTo(marshal(t, td), FleetMembers(memberIDs(3)), &f); err != nil {
			t.Fatal(err)
		}
		for _, frames := range f.ByShard {
			for _, fr := range frames {
				key, err := r.FrameKey(fr.Bytes)
				if err != nil {
					t.Fatal(err)
				}
				if key != fr.Key {
					t.Errorf("attributes %v: FrameKey = %#x, Route recorded %#x", attributes, key, fr.Key)
				}
			}
		}
	}
	r, _ := NewRouter(RouterSettings{Shards: 1, MaxFrameBytes: sdp.MaxArrayLen, HashVersion: otlpwire.HashV2})
	if _, err := r.FrameKey([]byte("not a frame")); err == nil {
		t.Error("FrameKey accepted bytes that are not a frame")
	}
}
