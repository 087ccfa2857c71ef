// SPDX-License-Identifier: Apache-2.0

// Package fleet keeps the members a gateway sends frames to: one
// transport.Client per member, an immutable snapshot that the request path
// reads with one atomic load, the changes a resolver reports, the frames
// taken back from members that left (placed with their new owners), and
// the ejection of members that stop answering.
//
// A Fleet is owned by the component that creates it: Start starts its one
// goroutine (and the resolver), Shutdown stops both, and the clients of the
// last snapshot are the owner's to flush.
package fleet

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/otelcol-sdp/otelcol-sdp/internal/eject"
	"github.com/otelcol-sdp/otelcol-sdp/internal/resolver"
	"github.com/otelcol-sdp/otelcol-sdp/internal/shard"
	"github.com/otelcol-sdp/otelcol-sdp/sdp/transport"
)

// Snapshot is one immutable state of the fleet: member i is carried by
// Clients[i]. It is never modified once published.
type Snapshot struct {
	Members   *shard.Members
	Endpoints []string
	Clients   []*transport.Client
	// Attrs are each member's metric attributes: shard for a static list,
	// member for a resolver's fleet.
	Attrs []metric.MeasurementOption
	// leave releases what a member's client holds besides itself once the
	// member has left; nil entries for a static list.
	leave []func()
	// observers are what each client reports to; a client that replaces
	// another for the same member (ejection, readmission) reports to the
	// same one.
	observers []transport.Observer
}

// NewStatic returns the snapshot of a static endpoints list: member i is
// endpoints[i], carried by clients[i], reporting to observers[i].
func NewStatic(endpoints []string, clients []*transport.Client, attrs []metric.MeasurementOption, observers []transport.Observer) *Snapshot {
	return &Snapshot{
		Members:   shard.StaticMembers(endpoints),
		Endpoints: endpoints,
		Clients:   clients,
		Attrs:     attrs,
		leave:     make([]func(), len(clients)),
		observers: observers,
	}
}

// with returns a copy of f whose member i has client c.
func (f *Snapshot) with(i int, c *transport.Client) *Snapshot {
	next := *f
	next.Clients = slices.Clone(f.Clients)
	next.Clients[i] = c
	return &next
}

// Observed is what the owner attaches to a member that joins a resolver's
// fleet: the observer its clients report to, its metric attributes, and
// what to call once it has left.
type Observed struct {
	Observer transport.Observer
	Attrs    metric.MeasurementOption
	Leave    func()
}

// Hooks are the owner's counters; nil fields count nothing.
type Hooks struct {
	// MembershipChanged is called once per applied change.
	MembershipChanged func()
	// ResolverError is called for a member that cannot be served.
	ResolverError func()
	// Rerouted is called with the number of taken-back frames placed.
	Rerouted func(frames int)
	// Undelivered is called for items of a member that left, given up at
	// shutdown.
	Undelivered func(member string, items int)
	// Ejected is called with the attributes of each member ejected.
	Ejected func(attrs metric.MeasurementOption)
	// Room is called when members change, so that a writer waiting for a
	// member with room (the persistent queue's replay) looks again.
	Room func()
}

// Ejection configures ejecting members that stop answering.
type Ejection struct {
	Policy eject.Policy
	// ProbeInterval is the longest wait between attempts to reach an
	// ejected member.
	ProbeInterval time.Duration
}

// Settings configure a Fleet.
type Settings struct {
	Logger *zap.Logger
	// QueueBytes is each member's queue_bytes: frames routed again count
	// against it together with the taken-back frames waiting for a member.
	QueueBytes int
	// ClientSettings returns the settings of a client for endpoint; the
	// fleet sets Shard, ShardCount and Observer.
	ClientSettings func(endpoint string) transport.ClientSettings
	// NewSource builds the resolver at Start (building it may need the
	// environment, such as the Kubernetes in-cluster configuration, which
	// creating a component must not); nil for a static list.
	NewSource func() (resolver.Resolver, error)
	// Observe returns what to attach to a member the resolver reports.
	Observe func(resolver.Member) Observed
	// Ejection is nil when members are never ejected.
	Ejection *Ejection
	Hooks    Hooks
}

// movedSampleSize is how many keys estimate the fraction of resources a
// change moves, for the log line of each change.
const movedSampleSize = 10_000

// Fleet applies a resolver's member lists and ejections to the snapshot.
// One goroutine (run) applies changes one after another, so that a change
// whose frames wait for room never runs concurrently with the next.
type Fleet struct {
	set     Settings
	log     *zap.Logger
	current atomic.Pointer[Snapshot]
	source  resolver.Resolver
	keys    []uint64

	mu      sync.Mutex
	desired []resolver.Member // latest list from the resolver
	changed bool              // desired is waiting to be applied
	inbox   []orphan          // adopted frames, not yet taken by run
	stopped bool              // run has ended: nothing is adopted any more

	kick    chan struct{} // capacity 1
	stop    chan struct{}
	done    chan struct{}
	running bool // run was started and not stopped; owned by Start and Shutdown
	// drain bounds, once stop is closed, how long run keeps placing
	// orphans; set by Shutdown before it closes stop.
	drain context.Context

	// orphans are owned by run. waiting holds their bytes by the ID of the
	// member that owns each now, as run last counted them (nil when none
	// wait): the request path counts them in that member's queue_bytes, so
	// that a batch is refused only by the members they are waiting for.
	orphans []orphan
	waiting atomic.Pointer[map[string]int]

	// ejection is nil when disabled; owned by run.
	ejection *ejection
}

// New returns a fleet that starts from initial: a static list's snapshot,
// or nil for a resolver's fleet, which is empty until the resolver reports.
func New(set Settings, initial *Snapshot) *Fleet {
	if initial == nil {
		initial = &Snapshot{Members: shard.FleetMembers(nil)}
	}
	f := &Fleet{
		set:  set,
		log:  set.Logger,
		keys: shard.SampleKeys(movedSampleSize),
		kick: make(chan struct{}, 1),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	if set.Ejection != nil {
		f.ejection = newEjection(set.Ejection)
	}
	f.current.Store(initial)
	return f
}

// Current returns the snapshot batches are routed over now.
func (fl *Fleet) Current() *Snapshot { return fl.current.Load() }

// resolved reports whether a resolver brings the members (rather than a
// static list).
func (fl *Fleet) resolved() bool { return fl.set.NewSource != nil }

// managed reports whether the fleet has anything to run: a resolver or
// ejection.
func (fl *Fleet) managed() bool { return fl.set.NewSource != nil || fl.ejection != nil }

// Start starts the current snapshot's clients, then applying changes, then
// the resolver.
func (fl *Fleet) Start(ctx context.Context) error {
	for _, c := range fl.Current().Clients {
		c.Start()
	}
	if !fl.managed() {
		return nil
	}
	if fl.set.NewSource == nil {
		go fl.run()
		fl.running = true
		return nil
	}
	source, err := fl.set.NewSource()
	if err != nil {
		return fmt.Errorf("resolver: %w", err)
	}
	fl.source = source
	go fl.run()
	if err := fl.source.Start(ctx, fl.update); err != nil {
		close(fl.stop)
		<-fl.done
		return fmt.Errorf("resolver: %w", err)
	}
	fl.running = true
	return nil
}

// update is the resolver's callback: it records the list and wakes run.
func (fl *Fleet) update(members []resolver.Member) {
	fl.mu.Lock()
	fl.desired = slices.Clone(members)
	fl.changed = true
	fl.mu.Unlock()
	fl.wake()
}

// wake has run look at its inputs again.
func (fl *Fleet) wake() {
	select {
	case fl.kick <- struct{}{}:
	default:
	}
}

// Shutdown stops the resolver, then run. Frames taken back from members
// that left keep being placed with their new owners until ctx ends (the
// clients' own shutdown then flushes them); what is still not placed is
// settled as undelivered. The clients of the last snapshot stay the
// caller's to shut down.
func (fl *Fleet) Shutdown(ctx context.Context) {
	if !fl.running {
		return
	}
	fl.running = false
	if fl.source != nil {
		if err := fl.source.Shutdown(ctx); err != nil {
			fl.log.Warn("Shutting down the resolver", zap.Error(err))
		}
	}
	fl.drain = ctx
	close(fl.stop)
	<-fl.done
}

func (fl *Fleet) run() {
	defer close(fl.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	var check <-chan time.Time
	if fl.ejection != nil {
		ticker := time.NewTicker(fl.ejection.check)
		defer ticker.Stop()
		check = ticker.C
	}
	for {
		select {
		case <-fl.stop:
			fl.mu.Lock()
			fl.orphans = append(fl.orphans, fl.inbox...)
			fl.inbox, fl.stopped = nil, true
			fl.mu.Unlock()
			fl.closeProbes()
			fl.drainOrphans()
			return
		case <-fl.kick:
		case <-timer.C:
		case <-check:
		}
		fl.mu.Lock()
		desired, changed, inbox := fl.desired, fl.changed, fl.inbox
		fl.desired, fl.changed, fl.inbox = nil, false, nil
		fl.mu.Unlock()
		if changed {
			fl.apply(desired)
		}
		if fl.ejection != nil {
			fl.checkEjection(time.Now())
		}
		fl.orphans = append(fl.orphans, inbox...)
		if !fl.placeOrphans() {
			timer.Reset(rerouteRetry)
		}
	}
}

// apply makes members the fleet: it keeps the clients of members that stay
// (same ID, same endpoint), starts clients for new ones, publishes the new
// snapshot and only then takes back the frames of the members that left,
// so that a Send racing with the change either lands before the take (and
// is taken back) or finds its client closed and routes again.
func (fl *Fleet) apply(members []resolver.Member) {
	old := fl.Current()
	members = slices.Clone(members)
	slices.SortFunc(members, func(a, b resolver.Member) int { return strings.Compare(a.ID, b.ID) })
	members = slices.CompactFunc(members, func(a, b resolver.Member) bool { return a.ID == b.ID })
	next := &Snapshot{}
	var ids, added []string
	kept := make([]bool, old.Members.Len())
	for _, m := range members {
		if j, ok := old.Members.Index(m.ID); ok && old.Endpoints[j] == m.Endpoint {
			kept[j] = true
			ids = append(ids, m.ID)
			next.Endpoints = append(next.Endpoints, m.Endpoint)
			next.Clients = append(next.Clients, old.Clients[j])
			next.Attrs = append(next.Attrs, old.Attrs[j])
			next.leave = append(next.leave, old.leave[j])
			next.observers = append(next.observers, old.observers[j])
			continue
		}
		o := fl.set.Observe(m)
		c, err := fl.newClient(m.Endpoint, m.ID, 0, 1, o.Observer, 0)
		if err != nil {
			// An endpoint the client cannot dial: the member stays out
			// rather than half in.
			o.Leave()
			fl.resolverError(fmt.Errorf("member %q: %w", m.ID, err))
			continue
		}
		c.Start()
		ids = append(ids, m.ID)
		added = append(added, m.ID)
		next.Endpoints = append(next.Endpoints, m.Endpoint)
		next.Clients = append(next.Clients, c)
		next.Attrs = append(next.Attrs, o.Attrs)
		next.leave = append(next.leave, o.Leave)
		next.observers = append(next.observers, o.Observer)
	}
	// ids are sorted and unique, so member i of the snapshot is client i.
	// Members still ejected stay so; those that left or moved are
	// forgotten.
	next.Members = shard.FleetMembers(ids).Excluding(fl.forgetEjected(ids, next.Endpoints))
	var removed []string
	var leaving []int
	for j, k := range kept {
		if !k {
			removed = append(removed, old.Members.ID(j))
			leaving = append(leaving, j)
		}
	}
	if len(added) == 0 && len(removed) == 0 {
		return
	}
	fl.current.Store(next)
	taken := 0
	for i, j := range leaving {
		for _, h := range old.Clients[j].CloseAndTake() {
			fl.orphans = append(fl.orphans, orphan{frame: h.Frame, settle: h.Settle, from: removed[i]})
			taken++
		}
		// The client has stopped: it reports nothing more.
		if leave := old.leave[j]; leave != nil {
			leave()
		}
	}
	// Counted before the first attempt to place them, so that no batch
	// takes their room meanwhile.
	fl.countWaiting(next)
	call(fl.set.Hooks.MembershipChanged)
	call(fl.set.Hooks.Room)
	fl.log.Info("Fleet membership changed",
		zap.Strings("added", added), zap.Strings("removed", removed),
		zap.Strings("members", ids),
		zap.Float64("moved_fraction", shard.MovedFraction(old.Members, next.Members, fl.keys)),
		zap.Int("frames_to_reroute", taken))
}

// newClient returns a new, unstarted client for the member id at
// endpoint, index of count in a static list. A resolver's member is shard
// 0 of 1 and known by its ID, since its index changes with the fleet (the
// client stamps shard 0 on every frame it sends). A positive probeEvery
// makes it a probe's client: it waits at most that long between connection
// attempts.
func (fl *Fleet) newClient(endpoint, id string, index, count int, obs transport.Observer, probeEvery time.Duration) (*transport.Client, error) {
	cs := fl.set.ClientSettings(endpoint)
	if fl.resolved() {
		cs.Shard, cs.ShardCount = 0, 1
		if cs.Logger != nil {
			cs.Logger = cs.Logger.With("member", id)
		}
		cs.Observer = obs
	} else {
		cs = ShardSettings(cs, index, count, obs)
	}
	if probeEvery > 0 {
		cs.InitialBackoff = min(cs.InitialBackoff, probeEvery)
		cs.MaxBackoff = probeEvery
		// A probe is one frame, answered as soon as it arrives.
		cs.Linger = 0
	}
	return transport.NewClient(cs)
}

// ShardSettings returns cs for the client of shard i of a static endpoints
// list of n, reporting to obs: what every client of such a list is built
// from, at start and when the fleet takes an ejected member back.
func ShardSettings(cs transport.ClientSettings, i, n int, obs transport.Observer) transport.ClientSettings {
	cs.Shard, cs.ShardCount = uint32(i), uint32(n)
	cs.Observer = obs
	return cs
}

func (fl *Fleet) resolverError(err error) {
	call(fl.set.Hooks.ResolverError)
	fl.log.Warn("Fleet member ignored", zap.Error(err))
}

// call calls hook unless it is nil.
func call(hook func()) {
	if hook != nil {
		hook()
	}
}
