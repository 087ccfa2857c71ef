// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/processor"

	"github.com/otelcol-sdp/otelcol-sdp/internal/fleet"
	"github.com/otelcol-sdp/otelcol-sdp/internal/resolver"
	"github.com/otelcol-sdp/otelcol-sdp/internal/shard"
	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
	"github.com/otelcol-sdp/otelcol-sdp/sdp/transport"
)

// fakeSource is a resolver the test drives: set reports a member list.
type fakeSource struct {
	mu       sync.Mutex
	update   func([]member)
	stopped  bool
	startErr error
}

func (f *fakeSource) Start(_ context.Context, update func([]member)) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.update = update
	return f.startErr
}

func (f *fakeSource) Shutdown(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopped = true
	return nil
}

func (f *fakeSource) set(members ...member) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped || f.update == nil {
		panic("fakeSource.set outside Start..Shutdown")
	}
	f.update(members)
}

// fleetMember is one member of a test fleet with its sidecar.
type fleetMember struct {
	member
	rec *recorder
}

func startFleet(t *testing.T, n int) []fleetMember {
	endpoints := newEndpoints(t, "tcp", n)
	out := make([]fleetMember, n)
	for i := range out {
		out[i] = fleetMember{member: member{ID: fmt.Sprintf("consumer-%d", i), Endpoint: endpoints[i]}, rec: newRecorder()}
		startSidecar(t, endpoints[i], out[i].rec)
	}
	return out
}

func members(fm ...fleetMember) []member {
	out := make([]member, len(fm))
	for i, m := range fm {
		out[i] = m.member
	}
	return out
}

func fleetConfig() *Config {
	cfg := testConfig(nil)
	cfg.Resolver = configoptional.Some(resolver.Config{
		// Any valid block: the test's registry replaces the resolver.
		Static: configoptional.Some(resolver.StaticConfig{Endpoints: []string{"tcp://127.0.0.1:1"}}),
	})
	return cfg
}

// startFleetProcessor starts a traces processor whose members come from
// the returned fakeSource.
func startFleetProcessor(t *testing.T, tel *componenttest.Telemetry) (processor.Traces, *shardSet, *fakeSource) {
	src := &fakeSource{}
	reg := newRegistry()
	reg.newSource = func(*Config, processor.Settings, func(error)) (memberSource, error) { return src, nil }
	set := testSettings(tel)
	cfg := fleetConfig()
	require.NoError(t, cfg.Validate())
	p, err := reg.createTraces(context.Background(), set, cfg, new(consumertest.TracesSink))
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, p.Shutdown(context.Background())) })
	reg.mu.Lock()
	s := reg.sets[set.ID]
	reg.mu.Unlock()
	return p, s, src
}

// applied waits until the shard set routes over exactly ids.
func applied(t *testing.T, s *shardSet, ids ...string) *fleet.Snapshot {
	t.Helper()
	want := shard.FleetMembers(ids).IDs()
	require.Eventually(t, func() bool {
		return assert.ObjectsAreEqual(want, s.fleet.Current().Members.IDs())
	}, 5*time.Second, time.Millisecond, "fleet never became %v", want)
	return s.fleet.Current()
}

// resourcesAt returns the resource hashes each member's sidecar received,
// by member ID.
func resourcesAt(fleetMembers []fleetMember) map[string]map[uint64]int {
	out := map[string]map[uint64]int{}
	for _, m := range fleetMembers {
		got := map[uint64]int{}
		for _, r := range m.rec.snapshot() {
			got[r.frame.ResourceHash]++
		}
		out[m.ID] = got
	}
	return out
}

func TestFleetRoutesByMemberAndReroutesHeldFramesOfAMemberThatLeaves(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	fleetMembers := startFleet(t, 4)
	p, s, src := startFleetProcessor(t, tel)
	ctx := context.Background()

	// No member yet: backpressure, not loss.
	td, _ := buildTraces(0, 30, 2)
	err := p.ConsumeTraces(ctx, td)
	require.ErrorIs(t, err, shard.ErrNoMembers)
	assert.EqualValues(t, 1, sumMetric(t, tel, "otelcol_processor_sdpshard_refused_batches", map[string]string{"reason": reasonNoMembers}))

	src.set(members(fleetMembers[:3]...)...)
	f := applied(t, s, "consumer-0", "consumer-1", "consumer-2")
	td, _ = buildTraces(1, 30, 2)
	require.NoError(t, p.ConsumeTraces(ctx, td))
	for id, hashes := range resourcesAt(fleetMembers[:3]) {
		for h := range hashes {
			assert.Equal(t, id, f.Members.ID(f.Members.Owner(h)), "resource %#x at the wrong member", h)
		}
	}

	// consumer-1 stops answering; a batch waits for its acks, then
	// consumer-1 leaves: its held frames go to their new owners, whose acks
	// settle the batch.
	unblock := fleetMembers[1].rec.block()
	t.Cleanup(unblock)
	before := resourcesAt(fleetMembers[:3])
	done := make(chan error, 1)
	go func() {
		td, _ := buildTraces(2, 30, 2)
		done <- p.ConsumeTraces(ctx, td)
	}()
	select {
	case err := <-done:
		t.Fatalf("batch settled while consumer-1 was stalled: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	src.set(fleetMembers[0].member, fleetMembers[2].member)
	f2 := applied(t, s, "consumer-0", "consumer-2")
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("batch not settled after consumer-1 left")
	}
	after := resourcesAt(fleetMembers[:3])
	movedToNewOwner := 0
	for h := range before["consumer-1"] {
		owner := f2.Members.ID(f2.Members.Owner(h))
		if after[owner][h] > before[owner][h] {
			movedToNewOwner++
		}
	}
	assert.Equal(t, len(before["consumer-1"]), movedToNewOwner, "every resource of consumer-1 reached its new owner")
	assert.Positive(t, sumMetric(t, tel, "otelcol_processor_sdpshard_rerouted_frames", nil))
	assert.EqualValues(t, 2, sumMetric(t, tel, "otelcol_processor_sdpshard_membership_changes", nil))
	assert.EqualValues(t, 2, sumMetric(t, tel, "otelcol_processor_sdpshard_members", nil))

	// A new member joins: it gets about a third of the resources and the
	// others keep theirs.
	src.set(fleetMembers[0].member, fleetMembers[2].member, fleetMembers[3].member)
	f3 := applied(t, s, "consumer-0", "consumer-2", "consumer-3")
	td, _ = buildTraces(3, 30, 2)
	require.NoError(t, p.ConsumeTraces(ctx, td))
	for _, h := range hashesOf(fleetMembers[3].rec) {
		assert.Equal(t, "consumer-3", f3.Members.ID(f3.Members.Owner(h)))
	}
	assert.NotEmpty(t, hashesOf(fleetMembers[3].rec), "the new member received nothing")
	assert.Positive(t, sumMetric(t, tel, "otelcol_processor_sdpshard_acks", map[string]string{"member": "consumer-3", "status": "accepted"}))
}

func hashesOf(rec *recorder) []uint64 {
	var out []uint64
	for _, r := range rec.snapshot() {
		out = append(out, r.frame.ResourceHash)
	}
	return out
}

// A batch routed over a snapshot whose member has left since finds that
// member's client closed: its frames go to their owners in the current
// snapshot, and the batch settles once they acknowledge.
func TestSendPartRoutesAgainWhenTheMemberLeftMeanwhile(t *testing.T) {
	fleetMembers := startFleet(t, 3)
	_, s, src := startFleetProcessor(t, nil)
	src.set(members(fleetMembers...)...)
	old := applied(t, s, "consumer-0", "consumer-1", "consumer-2")

	leaving, part := routedPart(t, old, "consumer-1")

	src.set(fleetMembers[0].member, fleetMembers[2].member)
	now := applied(t, s, "consumer-0", "consumer-2")
	settled := make(chan error, 1)
	require.NoError(t, s.fleet.Send(old, leaving, part, func(err error) { settled <- err }))
	select {
	case err := <-settled:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("part not settled")
	}
	for _, fr := range part {
		owner := now.Members.ID(now.Members.Owner(fr.Key))
		var ownerRec *recorder
		for _, m := range fleetMembers {
			if m.ID == owner {
				ownerRec = m.rec
			}
		}
		assert.Contains(t, hashesOf(ownerRec), fr.Key)
	}
	assert.Empty(t, fleetMembers[1].rec.snapshot(), "the member that left received frames routed to it after it left")
}

// A member that is listed but down is backpressure: its frames are held,
// and when it comes back at another address they go there.
func TestFleetHoldsFramesOfAMemberThatIsDown(t *testing.T) {
	fleetMembers := startFleet(t, 2)
	p, s, src := startFleetProcessor(t, nil)
	// consumer-1 is listed but down (nothing listens on port 1): its frames
	// wait in its client.
	down := "tcp://127.0.0.1:1"
	src.set(fleetMembers[0].member, member{ID: "consumer-1", Endpoint: down})
	f := applied(t, s, "consumer-0", "consumer-1")
	done := make(chan error, 1)
	go func() {
		td, _ := buildTraces(0, 20, 1)
		done <- p.ConsumeTraces(context.Background(), td)
	}()
	select {
	case err := <-done:
		t.Fatalf("batch settled with a member down: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	require.Positive(t, f.Clients[1].QueuedBytes(), "nothing held for the member that is down")
	// It comes back at another address (a restarted pod): the frames held
	// for the old address go to the new one.
	src.set(fleetMembers[0].member, fleetMembers[1].member)
	applied(t, s, "consumer-0", "consumer-1")
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("batch not settled once the member was back")
	}
	assert.NotEmpty(t, fleetMembers[1].rec.snapshot())
}

// Building the resolver may need the environment (the Kubernetes in-cluster
// configuration): it happens at Start, so that creating the component, as
// otelcol-sdp validate does, works anywhere.
func TestResolverIsBuiltAtStart(t *testing.T) {
	reg := newRegistry()
	built := 0
	reg.newSource = func(*Config, processor.Settings, func(error)) (memberSource, error) {
		built++
		return nil, errors.New("no in-cluster configuration")
	}
	p, err := reg.createTraces(context.Background(), testSettings(nil), fleetConfig(), new(consumertest.TracesSink))
	require.NoError(t, err)
	assert.Zero(t, built, "the resolver was built when the processor was created")
	err = p.Start(context.Background(), componenttest.NewNopHost())
	require.ErrorContains(t, err, "resolver: no in-cluster configuration")
	require.NoError(t, p.Shutdown(context.Background()))
}

// An unreachable member degrades the component status, as an unreachable
// shard does; once it leaves the fleet, the status is OK again.
func TestFleetMemberStatus(t *testing.T) {
	fleetMembers := startFleet(t, 1)
	src := &fakeSource{}
	reg := newRegistry()
	reg.newSource = func(*Config, processor.Settings, func(error)) (memberSource, error) { return src, nil }
	set := testSettings(nil)
	p, err := reg.createTraces(context.Background(), set, fleetConfig(), new(consumertest.TracesSink))
	require.NoError(t, err)
	host := &statusHost{Host: componenttest.NewNopHost()}
	require.NoError(t, p.Start(context.Background(), host))
	t.Cleanup(func() { require.NoError(t, p.Shutdown(context.Background())) })

	// Nothing listens on port 1.
	down := member{ID: "consumer-9", Endpoint: "tcp://127.0.0.1:1"}
	src.set(fleetMembers[0].member, down)
	require.Eventually(t, func() bool { return host.last() == componentstatus.StatusRecoverableError },
		5*time.Second, time.Millisecond, "an unreachable member did not degrade the status")
	src.set(fleetMembers[0].member)
	require.Eventually(t, func() bool { return host.last() == componentstatus.StatusOK },
		5*time.Second, time.Millisecond, "the status stayed degraded after the unreachable member left")
}

// Frames stored by a run whose fleet could not take them are sent again at
// the next start to the members that own their resources then, which may
// be other members than those they were stored for.
func TestFleetPersistentQueueReplaysOntoTheCurrentMembers(t *testing.T) {
	dir := t.TempDir()
	run := func(host *storageHost, members ...member) (processor.Traces, *shardSet) {
		src := &fakeSource{}
		reg := newRegistry()
		reg.newSource = func(*Config, processor.Settings, func(error)) (memberSource, error) { return src, nil }
		cfg := fleetConfig()
		cfg.Storage = &host.id
		cfg.WaitForAck = false
		cfg.FlushTimeout = 100 * time.Millisecond
		require.NoError(t, cfg.Validate())
		set := testSettings(nil)
		p, err := reg.createTraces(context.Background(), set, cfg, new(consumertest.TracesSink))
		require.NoError(t, err)
		require.NoError(t, p.Start(context.Background(), host))
		src.set(members...)
		reg.mu.Lock()
		defer reg.mu.Unlock()
		return p, reg.sets[set.ID]
	}

	// Run 1: the only member is down; OK means stored, and shutdown gives
	// up on every frame.
	host := startFileStorage(t, dir)
	p, s := run(host, member{ID: "consumer-old", Endpoint: "tcp://127.0.0.1:1"})
	applied(t, s, "consumer-old")
	td, _ := buildTraces(0, 12, 2)
	require.NoError(t, p.ConsumeTraces(context.Background(), td))
	require.NoError(t, p.Shutdown(context.Background()))
	require.Equal(t, 12, storedFrames(t, host))
	host.stop(t)

	// Run 2: two other members. Every stored frame reaches its owner
	// among them, and is deleted once acknowledged.
	fleetMembers := startFleet(t, 2)
	host = startFileStorage(t, dir)
	p, s = run(host, members(fleetMembers...)...)
	f := applied(t, s, "consumer-0", "consumer-1")
	require.Eventually(t, func() bool {
		return len(hashesOf(fleetMembers[0].rec))+len(hashesOf(fleetMembers[1].rec)) >= 12
	}, 10*time.Second, 5*time.Millisecond, "stored frames not replayed")
	for _, m := range fleetMembers {
		for _, h := range hashesOf(m.rec) {
			assert.Equal(t, m.ID, f.Members.ID(f.Members.Owner(h)), "stored resource %#x replayed to a member that does not own it", h)
		}
	}
	require.NoError(t, p.Shutdown(context.Background()))
	assert.Zero(t, storedFrames(t, host), "acknowledged frames are deleted")
	host.stop(t)
}

// routedPart routes a batch of 40 resources over f and returns the index of
// member id and the frames routed to it.
func routedPart(t *testing.T, f *fleet.Snapshot, id string) (int, []transport.Frame) {
	t.Helper()
	router, err := shard.NewRouter(fleetConfig().routerSettings())
	require.NoError(t, err)
	td, _ := buildTraces(0, 40, 1)
	b, err := tracesMarshaler.MarshalTraces(td)
	require.NoError(t, err)
	var frames routed
	require.NoError(t, router.RouteTo(otlpwire.NewRequest(otlpwire.SignalTraces, b), f.Members, &frames.Frames))
	idx, ok := f.Members.Index(id)
	require.True(t, ok, "no member %s", id)
	frames.toTransport()
	require.NotEmpty(t, frames.byShard[idx])
	return idx, frames.byShard[idx]
}
