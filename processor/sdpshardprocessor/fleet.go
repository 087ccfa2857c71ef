// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

// The fleet: which members resources are assigned to, one transport client
// per member, and what happens when a resolver changes the members.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/otelcol-sdp/otelcol-sdp/internal/shard"
	"github.com/otelcol-sdp/otelcol-sdp/internal/resolver"
	"github.com/otelcol-sdp/otelcol-sdp/sdp/transport"
)

// fleet is one immutable snapshot of the members and their clients; client
// i carries member i. The request path loads the current snapshot with one
// atomic read.
type fleet struct {
	members   *shard.Members
	endpoints []string
	clients   []*transport.Client
	// attrs are each client's metric attributes: shard for a static list,
	// member for a resolver's fleet.
	attrs []metric.MeasurementOption
	// leave releases what a member's client holds besides itself (its
	// component status slot) once the member has left; nil for a static
	// list.
	leave []func()
	// observers are what each client reports to; a client that replaces
	// another for the same member (ejection, readmission) reports to the
	// same one.
	observers []transport.Observer
}

// with returns a copy of f whose member i has client c.
func (f *fleet) with(i int, c *transport.Client) *fleet {
	next := *f
	next.clients = slices.Clone(f.clients)
	next.clients[i] = c
	return &next
}

// member and memberSource are the resolver's: the fleet manager takes the
// members a resolver reports as they come.
type (
	member       = resolver.Member
	memberSource = resolver.Resolver
)

// movedSampleSize is how many keys estimate the fraction of resources a
// change moves, for the log line of each change.
const movedSampleSize = 10_000

// fleetManager applies a resolver's member lists to a shard set. One
// goroutine (run) applies changes one after another, so that a change
// whose frames wait for room never runs concurrently with the next.
type fleetManager struct {
	set *shardSet
	// newSource builds the resolver at start: building it may need the
	// environment (the Kubernetes in-cluster configuration), which
	// creating the component (otelcol-sdp validate) must not.
	newSource func() (memberSource, error)
	source    memberSource
	newClient func(m member) (memberClient, error)
	keys      []uint64

	mu      sync.Mutex
	desired []member // latest list from the resolver
	changed bool     // desired is waiting to be applied
	inbox   []orphan // adopted frames, not yet taken by run
	stopped bool     // run has ended: nothing is adopted any more

	kick    chan struct{} // capacity 1
	stop    chan struct{}
	done    chan struct{}
	running bool // run was started and not stopped; owned by start and shutdown
	// drain bounds, once stop is closed, how long run keeps placing
	// orphans; set by shutdown before it closes stop.
	drain context.Context

	// orphans are owned by run. waiting holds their bytes by the ID of the member that owns each now, as run last
	// counted them (nil when none wait): the request path counts them in
	// that member's queue_bytes, so a batch is refused only by the members
	// the taken-back frames are waiting for.
	orphans []orphan
	waiting atomic.Pointer[map[string]int]

	// ejection ejects members that stop answering; nil when disabled.
	ejection *ejection
}

// memberClient is a new member's client with its metric attributes and what
// to call when the member leaves.
type memberClient struct {
	client *transport.Client
	attrs  metric.MeasurementOption
	leave  func()
	obs    transport.Observer
}

func newFleetManager(s *shardSet, newSource func() (memberSource, error), newClient func(member) (memberClient, error)) *fleetManager {
	return &fleetManager{
		set:       s,
		newSource: newSource,
		newClient: newClient,
		keys:      shard.SampleKeys(movedSampleSize),
		kick:      make(chan struct{}, 1),
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
	}
}

// start starts applying changes and then the resolver; without a resolver
// (an endpoints list with ejection) only the former.
func (fm *fleetManager) start(ctx context.Context) error {
	if fm.newSource == nil {
		go fm.run()
		fm.running = true
		return nil
	}
	source, err := fm.newSource()
	if err != nil {
		return fmt.Errorf("resolver: %w", err)
	}
	fm.source = source
	go fm.run()
	if err := fm.source.Start(ctx, fm.update); err != nil {
		close(fm.stop)
		<-fm.done
		return fmt.Errorf("resolver: %w", err)
	}
	fm.running = true
	return nil
}

// update is the resolver's callback: it records the list and wakes run.
func (fm *fleetManager) update(members []member) {
	fm.mu.Lock()
	fm.desired = slices.Clone(members)
	fm.changed = true
	fm.mu.Unlock()
	fm.wake()
}

// wake has run look at its inputs again.
func (fm *fleetManager) wake() {
	select {
	case fm.kick <- struct{}{}:
	default:
	}
}

// shutdown stops the resolver, then run. Frames taken back from members
// that left keep being placed with their new owners until ctx ends (the
// clients' own shutdown then flushes them); what is still not placed is
// settled as undelivered.
func (fm *fleetManager) shutdown(ctx context.Context) {
	if !fm.running {
		return
	}
	fm.running = false
	if fm.source != nil {
		if err := fm.source.Shutdown(ctx); err != nil {
			fm.set.logger.Warn("Shutting down the resolver", zap.Error(err))
		}
	}
	fm.drain = ctx
	close(fm.stop)
	<-fm.done
}

func (fm *fleetManager) run() {
	defer close(fm.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	var check <-chan time.Time
	if fm.ejection != nil {
		ticker := time.NewTicker(fm.ejection.check)
		defer ticker.Stop()
		check = ticker.C
	}
	for {
		select {
		case <-fm.stop:
			fm.mu.Lock()
			fm.orphans = append(fm.orphans, fm.inbox...)
			fm.inbox, fm.stopped = nil, true
			fm.mu.Unlock()
			fm.closeProbes()
			fm.drainOrphans()
			return
		case <-fm.kick:
		case <-timer.C:
		case <-check:
		}
		fm.mu.Lock()
		desired, changed, inbox := fm.desired, fm.changed, fm.inbox
		fm.desired, fm.changed, fm.inbox = nil, false, nil
		fm.mu.Unlock()
		if changed {
			fm.apply(desired)
		}
		if fm.ejection != nil {
			fm.checkEjection(time.Now())
		}
		fm.orphans = append(fm.orphans, inbox...)
		if !fm.placeOrphans() {
			timer.Reset(rerouteRetry)
		}
	}
}

// apply makes members the fleet: it keeps the clients of members that stay
// (same ID, same endpoint), starts clients for new ones, publishes the new
// snapshot and only then takes back the frames of the members that left,
// so that a Send racing with the change either lands before the take (and
// is taken back) or finds its client closed and routes again.
func (fm *fleetManager) apply(members []member) {
	s := fm.set
	old := s.current.Load()
	members = slices.Clone(members)
	slices.SortFunc(members, func(a, b member) int { return strings.Compare(a.ID, b.ID) })
	members = slices.CompactFunc(members, func(a, b member) bool { return a.ID == b.ID })
	next := &fleet{}
	var ids, added []string
	kept := make([]bool, old.members.Len())
	for _, m := range members {
		if j, ok := old.members.Index(m.ID); ok && old.endpoints[j] == m.Endpoint {
			kept[j] = true
			ids = append(ids, m.ID)
			next.endpoints = append(next.endpoints, m.Endpoint)
			next.clients = append(next.clients, old.clients[j])
			next.attrs = append(next.attrs, old.attrs[j])
			next.leave = append(next.leave, old.leave[j])
			next.observers = append(next.observers, old.observers[j])
			continue
		}
		mc, err := fm.newClient(m)
		if err != nil {
			// An endpoint the client cannot dial: the member stays out
			// rather than half in.
			fm.resolverError(fmt.Errorf("member %q: %w", m.ID, err))
			continue
		}
		mc.client.Start()
		ids = append(ids, m.ID)
		added = append(added, m.ID)
		next.endpoints = append(next.endpoints, m.Endpoint)
		next.clients = append(next.clients, mc.client)
		next.attrs = append(next.attrs, mc.attrs)
		next.leave = append(next.leave, mc.leave)
		next.observers = append(next.observers, mc.obs)
	}
	// ids are sorted and unique, so member i of the snapshot is client i.
	// Members still ejected stay so; those that left or moved are
	// forgotten.
	next.members = shard.FleetMembers(ids).Excluding(fm.forgetEjected(ids, next.endpoints))
	var removed []string
	var leaving []int
	for j, k := range kept {
		if !k {
			removed = append(removed, old.members.ID(j))
			leaving = append(leaving, j)
		}
	}
	if len(added) == 0 && len(removed) == 0 {
		return
	}
	s.current.Store(next)
	taken := 0
	for i, j := range leaving {
		for _, h := range old.clients[j].CloseAndTake() {
			fm.orphans = append(fm.orphans, orphan{frame: h.Frame, settle: h.Settle, from: removed[i]})
			taken++
		}
		// The client has stopped: it reports nothing more.
		old.leave[j]()
	}
	// Counted before the first attempt to place them, so that no batch
	// takes their room meanwhile.
	fm.countWaiting(next)
	s.telemetry.ProcessorSdpshardMembershipChanges.Add(context.Background(), 1, s.obs.idAttrs)
	if s.queue != nil {
		// replay may be waiting for a member that can take a stored frame.
		s.queue.signalRoom()
	}
	s.logger.Info("Fleet membership changed",
		zap.Strings("added", added), zap.Strings("removed", removed),
		zap.Strings("members", ids),
		zap.Float64("moved_fraction", shard.MovedFraction(old.members, next.members, fm.keys)),
		zap.Int("frames_to_reroute", taken))
}

func (fm *fleetManager) resolverError(err error) {
	fm.set.telemetry.ProcessorSdpshardResolverErrors.Add(context.Background(), 1, fm.set.obs.idAttrs)
	fm.set.logger.Warn("Fleet member ignored", zap.Error(err))
}

// sendPart sends part to member idx of f. When that member left the fleet
// after the batch was routed (its client is closed and a newer snapshot is
// published), the part is routed again over the current snapshot; settled
// is called once, when every frame of part has settled wherever it went.
func (s *shardSet) sendPart(f *fleet, idx int, part []transport.Frame, settled func(error)) error {
	err := f.clients[idx].Send(part, settled)
	if !errors.Is(err, transport.ErrClosed) {
		return err
	}
	now := s.current.Load()
	if now == f {
		return err
	}
	if now.members.Len() == 0 {
		return fmt.Errorf("the member left and no other is in the fleet: %w", shard.ErrNoMembers)
	}
	groups := make(map[int][]transport.Frame)
	var order []int
	for _, fr := range part {
		owner := now.members.Owner(fr.Key)
		if _, ok := groups[owner]; !ok {
			order = append(order, owner)
		}
		groups[owner] = append(groups[owner], fr)
	}
	// Every group must fit before any is sent: a refusal after some were
	// queued would have the caller drop the stored copies of frames still
	// in flight.
	for _, owner := range order {
		size := 0
		for _, fr := range groups[owner] {
			size += len(fr.Bytes)
		}
		if free := s.queueBytes - now.clients[owner].QueuedBytes() - s.fleet.waitingFor(now, owner); size > free {
			return fmt.Errorf("routing again to %s: %d bytes do not fit the %d free: %w", now.members.ID(owner), size, free, transport.ErrQueueFull)
		}
	}
	// A group can still be refused after others were queued (a batch
	// taking the room meanwhile, another change). Refusing the part then
	// would have the caller drop the stored copies of frames still queued:
	// the rest waits with the fleet manager instead, like taken-back
	// frames, and the part settles when every group has. An error means
	// none of part was queued.
	each := settleAfter(len(order), settled)
	for k, owner := range order {
		if err := s.sendPart(now, owner, groups[owner], each); err != nil {
			if k == 0 {
				return err
			}
			for _, rest := range order[k:] {
				s.fleet.adopt(groups[rest], now.members.ID(rest), each)
			}
			return nil
		}
	}
	return nil
}

// settleAfter returns a callback that calls settled once it has been
// called n times, with their errors joined; nil when settled is nil.
func settleAfter(n int, settled func(error)) func(error) {
	if settled == nil {
		return nil
	}
	if n == 1 {
		return settled
	}
	var mu sync.Mutex
	var errs error
	return func(err error) {
		mu.Lock()
		errs = errors.Join(errs, err)
		n--
		last := n == 0
		mu.Unlock()
		if last {
			settled(errs)
		}
	}
}
