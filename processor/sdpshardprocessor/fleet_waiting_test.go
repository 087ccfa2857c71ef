// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"

	"github.com/otelcol-sdp/otelcol-sdp/internal/fleet"
	"github.com/otelcol-sdp/otelcol-sdp/internal/shard"
	"github.com/otelcol-sdp/otelcol-sdp/sdp/transport"
)

// Frames taken back from a member that left count in the queue_bytes of
// the member they wait for: batches for that member are refused until it
// has room, batches for the others go on, and the taken-back frames reach
// their new owner once it does.
func TestTakenBackFramesCountInTheirNewOwnersQueue(t *testing.T) {
	fleetMembers := startFleet(t, 3)
	src := &fakeSource{}
	reg := newRegistry()
	reg.newSource = func(*Config, processor.Settings, func(error)) (memberSource, error) { return src, nil }
	set := testSettings(nil)
	cfg := fleetConfig()
	cfg.WaitForAck = false
	cfg.MaxFrameBytes = 1024
	cfg.QueueBytes = 4096
	require.NoError(t, cfg.Validate())
	p, err := reg.createTraces(context.Background(), set, cfg, new(consumertest.TracesSink))
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, p.Shutdown(context.Background())) })
	reg.mu.Lock()
	s := reg.sets[set.ID]
	reg.mu.Unlock()
	ctx := context.Background()

	// Learn each resource's routing hash from where it lands.
	src.set(members(fleetMembers...)...)
	three := applied(t, s, "consumer-0", "consumer-1", "consumer-2")
	hashOf := map[int]uint64{}
	for r := range 40 {
		require.NoError(t, p.ConsumeTraces(ctx, oneResource(r)))
		require.Eventually(t, func() bool { return len(receivedHashes(fleetMembers)) == r+1 }, 5*time.Second, time.Millisecond)
		for h := range receivedHashes(fleetMembers) {
			if !hashKnown(hashOf, h) {
				hashOf[r] = h
			}
		}
	}
	owner := func(f *fleet.Snapshot, r int) string { return f.Members.ID(f.Members.Owner(hashOf[r])) }
	// Resources of consumer-1 that move to consumer-0 once it leaves, and
	// resources of consumer-0 and consumer-2 that stay.
	var movingTo0, of0, of2 []int
	for r := range 40 {
		switch owner(three, r) {
		case "consumer-0":
			of0 = append(of0, r)
		case "consumer-2":
			of2 = append(of2, r)
		case "consumer-1":
			if f2 := fleetFor(three, "consumer-1"); owner(f2, r) == "consumer-0" {
				movingTo0 = append(movingTo0, r)
			}
		}
	}
	require.NotEmpty(t, movingTo0, "no resource of consumer-1 moves to consumer-0")
	require.NotEmpty(t, of0)
	require.NotEmpty(t, of2)

	// consumer-0 and consumer-1 stop reading; consumer-1 holds frames
	// that will move to consumer-0, whose queue is then filled up.
	unblock0, unblock1 := fleetMembers[0].rec.block(), fleetMembers[1].rec.block()
	t.Cleanup(unblock0)
	t.Cleanup(unblock1)
	for _, r := range movingTo0 {
		require.NoError(t, p.ConsumeTraces(ctx, oneResource(r)))
	}
	filled := false
	for i := 0; i < 200 && !filled; i++ {
		err := p.ConsumeTraces(ctx, oneResource(of0[i%len(of0)]))
		filled = err != nil
		if filled {
			require.ErrorIs(t, err, transport.ErrQueueFull)
		}
	}
	require.True(t, filled, "consumer-0's queue never filled")

	// consumer-1 leaves: its frames for consumer-0 wait for room.
	src.set(fleetMembers[0].member, fleetMembers[2].member)
	two := applied(t, s, "consumer-0", "consumer-2")
	require.Eventually(t, func() bool { return s.fleet.WaitingFor(two, memberIndex(two, "consumer-0")) > 0 }, 5*time.Second, time.Millisecond,
		"the taken-back frames are not counted for consumer-0")
	assert.Zero(t, s.fleet.WaitingFor(two, memberIndex(two, "consumer-2")))

	// A batch for consumer-2 alone goes on; one with a part for consumer-0
	// is refused as retryable.
	before2 := len(fleetMembers[2].rec.snapshot())
	require.NoError(t, p.ConsumeTraces(ctx, oneResource(of2[0])), "a batch for a member with room was refused while frames wait for another")
	require.Eventually(t, func() bool { return len(fleetMembers[2].rec.snapshot()) > before2 }, 5*time.Second, time.Millisecond)
	err = p.ConsumeTraces(ctx, oneResource(of0[0]))
	require.ErrorIs(t, err, transport.ErrQueueFull)
	assert.ErrorContains(t, err, "frames taken back from a member that left hold")

	// consumer-0 reads again: the taken-back frames reach it and nothing
	// waits any more.
	unblock0()
	require.Eventually(t, func() bool {
		got := map[uint64]bool{}
		for _, rc := range fleetMembers[0].rec.snapshot() {
			got[rc.frame.ResourceHash] = true
		}
		for _, r := range movingTo0 {
			if !got[hashOf[r]] {
				return false
			}
		}
		return s.fleet.WaitingFor(two, memberIndex(two, "consumer-0")) == 0
	}, 10*time.Second, time.Millisecond, "the taken-back frames did not reach consumer-0")
}

// oneResource is a batch of resource r alone.
func oneResource(r int) ptrace.Traces {
	td, _ := buildTraces(0, r+1, 1)
	td.ResourceSpans().RemoveIf(func(rs ptrace.ResourceSpans) bool { return resourceService(rs.Resource()) != serviceName(0, r) })
	return td
}

// receivedHashes returns the resource hashes any member has received.
func receivedHashes(fleetMembers []fleetMember) map[uint64]bool {
	out := map[uint64]bool{}
	for _, m := range fleetMembers {
		for _, rc := range m.rec.snapshot() {
			out[rc.frame.ResourceHash] = true
		}
	}
	return out
}

func hashKnown(known map[int]uint64, h uint64) bool {
	for _, k := range known {
		if k == h {
			return true
		}
	}
	return false
}

// fleetFor returns f without the member named leaving, as the manager
// would build it, for computing owners.
func fleetFor(f *fleet.Snapshot, leaving string) *fleet.Snapshot {
	var ids []string
	for _, id := range f.Members.IDs() {
		if id != leaving {
			ids = append(ids, id)
		}
	}
	return &fleet.Snapshot{Members: shard.FleetMembers(ids)}
}

func memberIndex(f *fleet.Snapshot, id string) int {
	i, _ := f.Members.Index(id)
	return i
}

// A part routed again after its member left can be refused by one new
// owner after another took its frames. The part is then not refused (the
// caller would drop the stored copies of frames still queued): what is
// left waits with the fleet and the part settles once all of it
// is acknowledged.
func TestSendPartNeverRefusesAPartItQueuedInPart(t *testing.T) {
	fleetMembers := startFleet(t, 3)
	_, s, src := startFleetProcessor(t, nil)
	src.set(members(fleetMembers...)...)
	old := applied(t, s, "consumer-0", "consumer-1", "consumer-2")

	leaving, part := routedPart(t, old, "consumer-1")

	src.set(fleetMembers[0].member, fleetMembers[2].member)
	now := applied(t, s, "consumer-0", "consumer-2")
	// The second new owner the part meets refuses: its client is closed
	// while it is still a member.
	owners := map[int]bool{}
	var first, second int
	for _, fr := range part {
		o := now.Members.Owner(fr.Key)
		if !owners[o] {
			if len(owners) == 0 {
				first = o
			} else {
				second = o
			}
			owners[o] = true
		}
	}
	require.Len(t, owners, 2, "the leaving member's resources should move to both others")
	require.NoError(t, now.Clients[second].Shutdown(context.Background()))

	settled := make(chan error, 1)
	require.NoError(t, s.fleet.Send(old, leaving, part, func(err error) { settled <- err }),
		"a part queued in part was refused")
	select {
	case err := <-settled:
		t.Fatalf("the part settled (%v) before the frames left over were delivered", err)
	case <-time.After(100 * time.Millisecond):
	}
	assert.Positive(t, s.fleet.WaitingFor(now, second), "the frames left over are not counted for their owner")

	// The refusing member leaves: what waited for it goes to the other,
	// and the part settles.
	firstID := now.Members.ID(first)
	src.set(fleetMembers[memberNumber(firstID)].member)
	applied(t, s, firstID)
	select {
	case err := <-settled:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("part not settled")
	}
	got := hashesOf(fleetMembers[memberNumber(firstID)].rec)
	for _, fr := range part {
		assert.Contains(t, got, fr.Key)
	}
}

// memberNumber returns N of "consumer-N".
func memberNumber(id string) int {
	var n int
	_, _ = fmt.Sscanf(id, "consumer-%d", &n)
	return n
}
