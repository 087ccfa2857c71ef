// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"fmt"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Ejection settings of these tests: a member silent for ejectStall is
// ejected and probed every ejectProbe at most.
const (
	ejectStall = 2 * time.Second
	ejectProbe = 500 * time.Millisecond
)

// ejectionBlock is the sdpshard processor's ejection block of these tests.
var ejectionBlock = fmt.Sprintf(`    ejection:
      stall_timeout: %s
      probe_interval: %s
      max_ejected_percent: 50`, ejectStall, ejectProbe)

// ackSampler records, every 100ms, how many spans each load has had
// acknowledged, so that throughput can be read over any stretch after the
// fact.
type ackSampler struct {
	loads []*load
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
	mu    sync.Mutex
	at    []time.Time
	acked [][]int
}

func startAckSampler(loads []*load) *ackSampler {
	s := &ackSampler{loads: loads, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			s.sample()
			select {
			case <-s.stop:
				s.sample()
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *ackSampler) sample() {
	row := make([]int, len(s.loads))
	for i, l := range s.loads {
		row[i] = l.ackedSoFar()
	}
	s.mu.Lock()
	s.at = append(s.at, time.Now())
	s.acked = append(s.acked, row)
	s.mu.Unlock()
}

// close stops sampling; it may be called more than once.
func (s *ackSampler) close() {
	s.once.Do(func() { close(s.stop) })
	<-s.done
}

// rate returns load i's acknowledged spans per second between from and to,
// from the samples nearest to each.
func (s *ackSampler) rate(i int, from, to time.Time) float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	nearest := func(t time.Time) int {
		j := sort.Search(len(s.at), func(k int) bool { return !s.at[k].Before(t) })
		return min(j, len(s.at)-1)
	}
	a, b := nearest(from), nearest(to)
	if b <= a {
		return 0
	}
	return float64(s.acked[b][i]-s.acked[a][i]) / s.at[b].Sub(s.at[a]).Seconds()
}

// recovery returns how long after since every load's throughput, over
// half a second, was back to share of its baseline.
func (s *ackSampler) recovery(since time.Time, baseline []float64, share float64) (time.Duration, bool) {
	for t := since; t.Before(since.Add(20 * time.Second)); t = t.Add(100 * time.Millisecond) {
		ok := true
		for i := range s.loads {
			if s.rate(i, t, t.Add(500*time.Millisecond)) < share*baseline[i] {
				ok = false
			}
		}
		if ok {
			return t.Sub(since), true
		}
	}
	return 0, false
}

// ejectionLoad is the steady load of the ejection tests: 2 clients per
// gateway (4 in all), requests of 10 resources over 200 services, so that
// nearly every request has a resource for every member.
func ejectionLoad(r *fleetRig, timeout time.Duration) []*load {
	var loads []*load
	for i, g := range r.gateways {
		loads = append(loads, startLoad(r.t, g.grpc, loadSettings{
			Senders: 2, Resources: 10, Spans: 2, Services: 200, Interval: 20 * time.Millisecond,
			Timeout: timeout, IDBase: uint64(i+1) << 40,
		}))
	}
	return loads
}

// awaitEjected waits until every gateway reports n members ejected and
// returns when.
func (r *fleetRig) awaitEjected(n int, within time.Duration) (time.Time, bool) {
	deadline := time.Now().Add(within)
	for {
		all := true
		for _, g := range r.gateways {
			if int(g.metric(r.t, "otelcol_processor_sdpshard_ejected")) != n {
				all = false
			}
		}
		if all {
			return time.Now(), true
		}
		if time.Now().After(deadline) {
			return time.Now(), false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startMembers starts the four consumers and two gateways over them.
func (r *fleetRig) startMembers() {
	for i := range r.sidecars {
		r.startSidecar(i)
	}
	if !r.static {
		r.members(0, 1, 2, 3)
	}
	r.startGateway(0)
	r.startGateway(1)
	if !r.static {
		r.awaitApplied(1, 4)
	}
}

// finish stops the loads, the gateways (flushing what they hold) and the
// consumers, and checks that every acknowledged span reached a consumer.
// It returns what each consumer received.
func (r *fleetRig) finish(loads []*load) ([]map[spanID]spanAt, []loadResult) {
	t := r.t
	var results []loadResult
	for _, l := range loads {
		results = append(results, l.stop())
	}
	for _, g := range r.gateways {
		g.proc.Stop(t, collectorStopLimit)
	}
	for _, p := range r.sidecars {
		if !p.Exited() {
			p.Stop(t, sidecarStopLimit)
		}
	}
	at := make([]map[spanID]spanAt, len(r.sidecars))
	for i := range r.sidecars {
		at[i] = readSpans(t, r.outDirs[i])
	}
	var ackedIDs []map[spanID]struct{}
	for i, res := range results {
		t.Logf("gateway %d load: %s", i, res)
		ackedIDs = append(ackedIDs, res.Acked)
	}
	acked, lost := unreceived(ackedIDs, at)
	t.Logf("%d spans acknowledged, %d of them lost", acked, lost)
	if acked == 0 {
		t.Fatal("nothing acknowledged")
	}
	if lost > 0 {
		t.Errorf("%d acknowledged spans reached no consumer", lost)
	}
	return at, results
}

// TestEjectionKeepsTheFleetFlowing stops (SIGSTOP) or kills one of four
// consumers under steady load and leaves it listed: both gateways must be
// back to 60% of their throughput within stall_timeout + 2s, lose no
// acknowledged span, take the consumer back in within the probe interval
// once it answers again, and route its resources to it again.
func TestEjectionKeepsTheFleetFlowing(t *testing.T) {
	for _, c := range []struct {
		name         string
		static, kill bool
	}{
		{"dns/stopped", false, false},
		{"dns/killed", false, true},
		{"endpoints/stopped", true, false},
		{"endpoints/killed", true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newFleetRig(t, 4)
			r.static = c.static
			r.ejection = ejectionBlock
			r.startMembers()
			loads := ejectionLoad(r, 30*time.Second)
			samples := startAckSampler(loads)
			defer samples.close()
			time.Sleep(4 * time.Second) // 1s of warm-up, 3s of baseline

			const victim = 1
			stopped := time.Now()
			if c.kill {
				r.sidecars[victim].Kill(t)
			} else {
				r.sidecars[victim].Signal(t, syscall.SIGSTOP)
			}
			if _, ok := r.awaitEjected(1, ejectStall+5*time.Second); !ok {
				t.Fatalf("consumer %d not ejected by both gateways", victim)
			}
			by := stopped.Add(ejectStall + 2*time.Second)
			time.Sleep(time.Until(by.Add(2 * time.Second)))
			baseline := make([]float64, len(loads))
			for i := range loads {
				baseline[i] = samples.rate(i, stopped.Add(-3*time.Second), stopped)
				after := samples.rate(i, by, by.Add(2*time.Second))
				t.Logf("gateway %d: %.0f spans/s before, %.0f from stall_timeout+2s on (%.2f)", i, baseline[i], after, after/baseline[i])
				if after < 0.6*baseline[i] {
					t.Errorf("gateway %d: throughput %.0f spans/s from stall_timeout+2s on, want at least 60%% of %.0f", i, after, baseline[i])
				}
			}
			if d, ok := samples.recovery(stopped, baseline, 0.6); ok {
				t.Logf("throughput back to 60%% %.1fs after the consumer stopped (stall_timeout %s)", d.Seconds(), ejectStall)
			}
			for i, g := range r.gateways {
				if n := g.metric(t, "otelcol_processor_sdpshard_ejections"); n != 1 {
					t.Errorf("gateway %d counted %.0f ejections, want 1", i, n)
				}
			}

			resumed := time.Now()
			if c.kill {
				r.startSidecar(victim) // the same address, answering again
			} else {
				r.sidecars[victim].Signal(t, syscall.SIGCONT)
			}
			back, ok := r.awaitEjected(0, 10*time.Second)
			if !ok {
				t.Fatalf("consumer %d not taken back in", victim)
			}
			t.Logf("taken back in %.2fs after it answered again (probe_interval %s)", back.Sub(resumed).Seconds(), ejectProbe)
			// Within the probe interval, plus the ejection check's tick and
			// the scrapes that observe it.
			if limit := ejectProbe + time.Second; back.Sub(resumed) > limit {
				t.Errorf("taken back in after %s, want within %s", back.Sub(resumed), limit)
			}
			settled := time.Now().Add(500 * time.Millisecond)
			time.Sleep(3 * time.Second)
			end := time.Now().Add(-500 * time.Millisecond)
			samples.close()

			at, _ := r.finish(loads)
			// Its keys are back: after it was taken back in, every resource
			// went to one consumer, and the victim had its share.
			owners := map[string]map[int]bool{}
			for consumer, spans := range at {
				for _, s := range spans {
					if s.Built.Before(settled) || s.Built.After(end) {
						continue
					}
					if owners[s.Service] == nil {
						owners[s.Service] = map[int]bool{}
					}
					owners[s.Service][consumer] = true
				}
			}
			split, victims := 0, 0
			for service, o := range owners {
				if len(o) != 1 {
					split++
					if split <= 3 {
						t.Errorf("after readmission %s went to consumers %v", service, o)
					}
				}
				if o[victim] {
					victims++
				}
			}
			t.Logf("after readmission: %d resources, %d at consumer %d, %d split", len(owners), victims, victim, split)
			if len(owners) < 100 || victims < len(owners)/8 {
				t.Errorf("consumer %d owns %d of %d resources after readmission, want about a quarter", victim, victims, len(owners))
			}
		})
	}
}

// TestEjectionIsBoundedByMaxEjectedPercent stops three of four consumers
// with max_ejected_percent 50: each gateway ejects two, keeps the third in
// and refuses the batches that wait for it, retryably; nothing
// acknowledged is lost when they resume.
func TestEjectionIsBoundedByMaxEjectedPercent(t *testing.T) {
	r := newFleetRig(t, 4)
	r.ejection = ejectionBlock
	r.startMembers()
	loads := ejectionLoad(r, 5*time.Second)
	time.Sleep(2 * time.Second)
	for _, i := range []int{1, 2, 3} {
		r.sidecars[i].Signal(t, syscall.SIGSTOP)
	}
	if _, ok := r.awaitEjected(2, ejectStall+5*time.Second); !ok {
		t.Fatal("the gateways did not eject two consumers")
	}
	// Long enough for a third ejection, had the bound not held, and for
	// batches waiting for the third consumer to reach their deadline.
	time.Sleep(ejectStall + 3*time.Second)
	for i, g := range r.gateways {
		if n := g.metric(t, "otelcol_processor_sdpshard_ejected"); n != 2 {
			t.Errorf("gateway %d has %.0f consumers ejected, want 2 (50%% of 4)", i, n)
		}
		if n := g.metric(t, "otelcol_processor_sdpshard_refused_batches"); n == 0 {
			t.Errorf("gateway %d refused no batch while a stalled consumer stayed in", i)
		}
	}
	for _, i := range []int{1, 2, 3} {
		r.sidecars[i].Signal(t, syscall.SIGCONT)
	}
	if _, ok := r.awaitEjected(0, 10*time.Second); !ok {
		t.Fatal("consumers not taken back in")
	}
	time.Sleep(time.Second)
	_, results := r.finish(loads)
	// Requests with a resource for the stalled consumer kept in wait for
	// it until their deadline or a full queue: either way a code an OTLP
	// client retries, never one it drops data on.
	retryable := map[string]bool{"Canceled": true, "DeadlineExceeded": true, "Aborted": true, "OutOfRange": true,
		"Unavailable": true, "DataLoss": true, "ResourceExhausted": true, "cut off by the end of the test": true}
	for i, res := range results {
		refused := 0
		for code, n := range res.Failures {
			if !retryable[code] {
				t.Errorf("gateway %d: %d requests failed with %s, which an OTLP client does not retry", i, n, code)
			}
			if code != "cut off by the end of the test" {
				refused += n
			}
		}
		if refused == 0 {
			t.Errorf("gateway %d: no request refused while a stalled consumer stayed in: %s", i, res)
		}
	}
}
