// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

// Ejection: a member that holds frames without answering for
// ejection::stall_timeout is taken out of the assignment, as if it had left,
// and taken back in once it answers a probe. internal/eject decides; this
// file applies the decision to the fleet's snapshots and clients.

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/otelcol-sdp/otelcol-sdp/internal/eject"
	"github.com/otelcol-sdp/otelcol-sdp/sdp"
	"github.com/otelcol-sdp/otelcol-sdp/sdp/transport"
)

// ejection is the fleet manager's state for ejecting members; nil when
// ejection is disabled. It is owned by run.
type ejection struct {
	policy     eject.Policy
	probeEvery time.Duration
	// check is how often run looks for stalled members and answered
	// probes.
	check time.Duration
	// out holds the ejected members by ID.
	out map[string]*ejected
	// heldBack are the stalled members the budget kept in, by ID, so that
	// each is logged once per stall.
	heldBack map[string]bool
}

// ejected is one ejected member: since when, at which endpoint, and the
// client that probes it.
type ejected struct {
	since    time.Time
	endpoint string
	probe    *transport.Client
	answered atomic.Bool
}

func newEjection(cfg *EjectionConfig) *ejection {
	return &ejection{
		policy:     eject.Policy{StallTimeout: cfg.StallTimeout, MaxEjectedPercent: cfg.MaxEjectedPercent},
		probeEvery: cfg.ProbeInterval,
		check:      min(max(cfg.StallTimeout/10, 10*time.Millisecond), 250*time.Millisecond),
		out:        make(map[string]*ejected),
		heldBack:   make(map[string]bool),
	}
}

// probeOTLP is the payload of a probe: an export request holding one empty
// resource, valid OTLP traces with no span in it.
var probeOTLP = []byte{0x0a, 0x00}

// probeFrame returns a new probe frame: a ResourceFrame with no items. Every
// sidecar must acknowledge a valid frame, so an Ack for it shows the member
// answers again; the reference sidecar acknowledges a frame without items
// without passing it on.
func probeFrame() transport.Frame {
	f := sdp.ResourceFrame{Signal: 1, OTLP: probeOTLP}
	b, err := f.AppendFrame(nil)
	if err != nil {
		panic(fmt.Sprintf("sdpshard: encoding the probe frame: %v", err)) // a constant frame: cannot fail
	}
	return transport.Frame{Bytes: b}
}

// checkEjection takes back in the ejected members that answered their
// probe, then ejects the members stalled for stall_timeout that the budget
// has room for, in one new snapshot.
func (fm *fleetManager) checkEjection(now time.Time) {
	ej := fm.ejection
	s := fm.set
	f := s.current.Load()
	n := f.members.Len()
	if n == 0 {
		return
	}
	out := make([]bool, n)
	unanswered := make([]time.Duration, n)
	next := f
	var back []string
	for i := range n {
		id := f.members.ID(i)
		e := ej.out[id]
		if e == nil {
			unanswered[i] = f.clients[i].Unanswered(now)
			continue
		}
		if !e.answered.Load() {
			out[i] = true
			continue
		}
		c, err := fm.memberClient(f, i, 0)
		if err != nil {
			out[i] = true
			fm.set.logger.Warn("Taking an ejected member back in", zap.String("member", id), zap.Error(err))
			continue
		}
		c.Start()
		next = next.with(i, c)
		fm.closeProbe(e)
		delete(ej.out, id)
		back = append(back, id)
		s.logger.Info("Fleet member taken back in: it answered a probe", zap.String("member", id),
			zap.Duration("ejected_for", now.Sub(e.since)))
	}
	chosen := ej.policy.Choose(unanswered, out)
	fm.logHeldBack(f, unanswered, out, chosen)
	var taken []int
	for _, i := range chosen {
		id := f.members.ID(i)
		probe, err := fm.memberClient(f, i, ej.probeEvery)
		if err != nil {
			s.logger.Warn("Ejecting a member", zap.String("member", id), zap.Error(err))
			continue
		}
		e := &ejected{since: now, endpoint: f.endpoints[i], probe: probe}
		probe.Start()
		if err := probe.Send([]transport.Frame{probeFrame()}, func(err error) {
			// Accepted or rejected for good: either way it answers. Only
			// undelivered (the probe closed) is not an answer.
			if !errors.Is(err, transport.ErrUndelivered) {
				e.answered.Store(true)
				fm.wake()
			}
		}); err != nil {
			s.logger.Warn("Probing an ejected member", zap.String("member", id), zap.Error(err))
		}
		ej.out[id] = e
		out[i] = true
		taken = append(taken, i)
	}
	if len(back) == 0 && len(taken) == 0 {
		return
	}
	var excluded []int
	for i, o := range out {
		if o {
			excluded = append(excluded, i)
		}
	}
	// Same IDs, same clients but for those taken back in; the ejected
	// members' clients stay in place, closed below, so that a Send racing
	// with the ejection finds its client closed and routes again.
	if next == f {
		copied := *f
		next = &copied
	}
	next.members = f.members.Excluding(excluded)
	s.current.Store(next)
	for _, i := range taken {
		id := f.members.ID(i)
		frames := f.clients[i].CloseAndTake()
		for _, h := range frames {
			fm.orphans = append(fm.orphans, orphan{frame: h.Frame, settle: h.Settle, from: id})
		}
		s.telemetry.ProcessorSdpshardEjections.Add(context.Background(), 1, f.attrs[i])
		s.logger.Warn("Fleet member ejected: it held frames without answering; its resources go to their next owners until it answers a probe",
			zap.String("member", id), zap.Duration("unanswered_for", unanswered[i]),
			zap.Int("frames_to_reroute", len(frames)),
			zap.Int("ejected", len(excluded)), zap.Int("max_ejected", ej.policy.Budget(n)))
	}
	// Counted before run first tries to place them, so that no batch takes
	// their room meanwhile.
	fm.countWaiting(next)
	if s.queue != nil {
		// replay may be waiting for a member that can take a stored frame.
		s.queue.signalRoom()
	}
}

// memberClient returns a new, unstarted client for member i of f. A
// positive probeEvery makes it a probe's client: it waits at most that long
// between connection attempts.
func (fm *fleetManager) memberClient(f *fleet, i int, probeEvery time.Duration) (*transport.Client, error) {
	var cs transport.ClientSettings
	if fm.source == nil {
		cs = fm.set.shardSettings(f.endpoints[i], i, f.members.Len(), f.observers[i])
	} else {
		cs = fm.set.memberSettings(f.endpoints[i], f.members.ID(i), f.observers[i])
	}
	if probeEvery > 0 {
		cs.InitialBackoff = min(cs.InitialBackoff, probeEvery)
		cs.MaxBackoff = probeEvery
		// A probe is one frame, answered as soon as it arrives.
		cs.Linger = 0
	}
	return transport.NewClient(cs)
}

// logHeldBack logs, once per stall, each stalled member the budget keeps
// in.
func (fm *fleetManager) logHeldBack(f *fleet, unanswered []time.Duration, out []bool, chosen []int) {
	ej := fm.ejection
	for i, d := range unanswered {
		id := f.members.ID(i)
		stalled := !out[i] && d >= ej.policy.StallTimeout
		for _, c := range chosen {
			if c == i {
				stalled = false
			}
		}
		switch {
		case stalled && !ej.heldBack[id]:
			ej.heldBack[id] = true
			fm.set.logger.Warn("Fleet member stalled but not ejected: ejection::max_ejected_percent is reached; batches with resources for it wait and are refused (retryably) once its queue is full",
				zap.String("member", id), zap.Duration("unanswered_for", d), zap.Int("max_ejected", ej.policy.Budget(len(unanswered))))
		case !stalled && ej.heldBack[id]:
			delete(ej.heldBack, id)
		}
	}
}

// closeProbe stops an ejected member's probe client.
func (fm *fleetManager) closeProbe(e *ejected) {
	for _, h := range e.probe.CloseAndTake() {
		h.Settle(fmt.Errorf("%w: probe closed", transport.ErrUndelivered))
	}
}

// forgetEjected drops the ejection of members that left the fleet or
// moved to another endpoint (a new client serves them there; if it stays
// silent it is ejected again) and returns the indexes, in ids, of the
// members still ejected. endpoints[i] is the endpoint of ids[i].
func (fm *fleetManager) forgetEjected(ids, endpoints []string) []int {
	if fm.ejection == nil {
		return nil
	}
	present := make(map[string]int, len(ids))
	for i, id := range ids {
		present[id] = i
	}
	var excluded []int
	for id, e := range fm.ejection.out {
		if i, ok := present[id]; ok && endpoints[i] == e.endpoint {
			excluded = append(excluded, i)
			continue
		}
		fm.closeProbe(e)
		delete(fm.ejection.out, id)
	}
	return excluded
}

// ejectedCount returns how many members of the current snapshot are
// ejected.
func (s *shardSet) ejectedCount() int {
	f := s.current.Load()
	n := 0
	for i := range f.members.Len() {
		if f.members.Excluded(i) {
			n++
		}
	}
	return n
}

// closeProbes stops every probe; run has ended.
func (fm *fleetManager) closeProbes() {
	if fm.ejection == nil {
		return
	}
	for id, e := range fm.ejection.out {
		fm.closeProbe(e)
		delete(fm.ejection.out, id)
	}
}
