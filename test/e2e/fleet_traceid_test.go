// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"testing"
	"time"
)

// TestFleetRoutesByTraceID runs two gateways with routing_key traceID in
// front of a fleet that goes 4 -> 5 -> 3 members under load whose requests
// mix spans of many traces and services, the same traces through both
// gateways. While the gateways agree on the members every trace's spans
// are on exactly one consumer; through the changes no acknowledged span is
// lost, and the traces split across consumers (only those in flight during
// a change may be) are counted.
func TestFleetRoutesByTraceID(t *testing.T) {
	testFleetRoutesBy(t, "traceID", false, func(s spanAt) string { return string(s.Trace[:]) })
}

// TestFleetRoutesByTraceIDThroughAKill is TestFleetRoutesByTraceID with
// consumer 1 killed (SIGKILL) right before it leaves with consumer 4: the
// change TestLoadBalancingExporterThroughAChange puts the loadbalancing
// exporter through, for issue 27's comparison.
func TestFleetRoutesByTraceIDThroughAKill(t *testing.T) {
	testFleetRoutesBy(t, "traceID", true, func(s spanAt) string { return string(s.Trace[:]) })
}

// TestFleetRoutesByService is the same with routing_key service: every
// service's spans on one consumer.
func TestFleetRoutesByService(t *testing.T) {
	testFleetRoutesBy(t, "service", false, func(s spanAt) string { return s.Service })
}

// testFleetRoutesBy runs the fleet change with routingKey and checks that
// everything with the same groupOf is on one consumer while the gateways
// agree; with kill, consumer 1 is killed before the last change.
func testFleetRoutesBy(t *testing.T, routingKey string, kill bool, groupOf func(spanAt) string) {
	r := newFleetRig(t, 5)
	r.routingKey = routingKey
	for i := range 5 {
		r.startSidecar(i)
	}
	r.members(0, 1, 2, 3)
	r.startGateway(0)
	r.startGateway(1)
	appliedAt := r.awaitApplied(1, 4)

	var loads []*load
	for i, g := range r.gateways {
		loads = append(loads, startLoad(t, g.grpc, loadSettings{
			Senders: 2, Resources: 10, Spans: 4, Services: 200, Interval: 20 * time.Millisecond,
			Timeout: 10 * time.Second, IDBase: uint64(i+1) << 40, TraceSpans: 8,
		}))
	}
	const stable = 4 * time.Second
	const settle, guard = 300 * time.Millisecond, 500 * time.Millisecond
	var windows []window
	hold := func(members []int) {
		time.Sleep(stable)
		windows = append(windows, window{from: appliedAt.Add(settle), to: time.Now().Add(-guard), members: members})
	}
	hold([]int{0, 1, 2, 3})
	r.members(0, 1, 2, 3, 4)
	appliedAt = r.awaitApplied(2, 5)
	hold([]int{0, 1, 2, 3, 4})
	if kill {
		r.sidecars[1].Kill(t)
	}
	r.members(0, 2, 3)
	appliedAt = r.awaitApplied(3, 3)
	hold([]int{0, 2, 3})

	at, _ := r.finish(loads)

	// consumers[trace] and, per window, the consumers and gateways of the
	// trace's spans built in it.
	type seen struct{ consumers, gateways map[int]bool }
	all := map[string]map[int]bool{}
	per := make([]map[string]*seen, len(windows))
	for w := range per {
		per[w] = map[string]*seen{}
	}
	for consumer, spans := range at {
		for id, s := range spans {
			group := groupOf(s)
			if all[group] == nil {
				all[group] = map[int]bool{}
			}
			all[group][consumer] = true
			for w, win := range windows {
				if s.Built.Before(win.from) || s.Built.After(win.to) {
					continue
				}
				o := per[w][group]
				if o == nil {
					o = &seen{consumers: map[int]bool{}, gateways: map[int]bool{}}
					per[w][group] = o
				}
				o.consumers[consumer] = true
				o.gateways[int(spanIDNumber(id)>>40)-1] = true
				if !containsInt(win.members, consumer) {
					t.Errorf("window %d: consumer %d, not a member, received a span", w, consumer)
				}
			}
		}
	}
	for w, traces := range per {
		both, split := 0, 0
		for group, o := range traces {
			if len(o.gateways) == 2 {
				both++
			}
			if len(o.consumers) != 1 {
				split++
				if split <= 3 {
					t.Errorf("window %d: %s %q on consumers %v", w, routingKey, group, o.consumers)
				}
			}
		}
		t.Logf("window %d (members %v): %d groups by %s, %d through both gateways, %d split", w, windows[w].members, len(traces), routingKey, both, split)
		if both < len(traces)/2 {
			t.Errorf("window %d: only %d of %d groups came through both gateways; the agreement check is too weak", w, both, len(traces))
		}
	}
	split := 0
	for _, consumers := range all {
		if len(consumers) > 1 {
			split++
		}
	}
	t.Logf("over the whole run: %d groups by %s, %d on more than one consumer (a change moves services; a trace moves only when in flight)", len(all), routingKey, split)
	if routingKey == "traceID" && split > len(all)/4 {
		t.Errorf("%d of %d traces split: more than the changes explain", split, len(all))
	}
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
