// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/processor"
)

// ejectionRig is a traces processor over n in-process sidecars, as a
// resolver's fleet or as an endpoints list.
type ejectionRig struct {
	p       processor.Traces
	s       *shardSet
	members []fleetMember
	tel     *componenttest.Telemetry
	src     *fakeSource // the resolver, when not static
}

// startEjectionRig ejects after 200ms without an answer, at most pct
// percent of the members at once.
func startEjectionRig(t *testing.T, static bool, n, pct int) *ejectionRig {
	return startEjectionRigListing(t, static, n, n, pct)
}

// startEjectionRigListing is startEjectionRig with n sidecars of which the
// resolver lists the first listed.
func startEjectionRigListing(t *testing.T, static bool, n, listed, pct int) *ejectionRig {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	r := &ejectionRig{members: startFleet(t, n), tel: tel}
	reg := newRegistry()
	src := &fakeSource{}
	r.src = src
	reg.newSource = func(*Config, processor.Settings, func(error)) (memberSource, error) { return src, nil }
	cfg := fleetConfig()
	if static {
		var endpoints []string
		for _, m := range r.members {
			endpoints = append(endpoints, m.Endpoint)
		}
		cfg = testConfig(endpoints)
	}
	cfg.Ejection = configoptional.Some(EjectionConfig{StallTimeout: 200 * time.Millisecond, ProbeInterval: 50 * time.Millisecond, MaxEjectedPercent: pct})
	require.NoError(t, cfg.Validate())
	set := testSettings(tel)
	p, err := reg.createTraces(context.Background(), set, cfg, new(consumertest.TracesSink))
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, p.Shutdown(context.Background())) })
	reg.mu.Lock()
	r.s = reg.sets[set.ID]
	reg.mu.Unlock()
	r.p = p
	if !static {
		src.set(members(r.members[:listed]...)...)
		require.Eventually(t, func() bool { return r.s.fleet.Current().Members.Len() == listed }, 5*time.Second, time.Millisecond)
	}
	return r
}

// consume sends batch b in the background; the channel reports its outcome.
func (r *ejectionRig) consume(b int) <-chan error {
	done := make(chan error, 1)
	go func() {
		td, _ := buildTraces(b, 40, 2)
		done <- r.p.ConsumeTraces(context.Background(), td)
	}()
	return done
}

// items returns the spans every sidecar received, by span name.
func (r *ejectionRig) items(t *testing.T) map[string]int {
	got := map[string]int{}
	for _, m := range r.members {
		for _, rf := range m.rec.snapshot() {
			_, names, _, err := signalCases[0].decode(rf.frame.OTLP)
			require.NoError(t, err)
			for _, n := range names {
				got[n]++
			}
		}
	}
	return got
}

func (r *ejectionRig) excluded() []string {
	f := r.s.fleet.Current()
	var out []string
	for i := range f.Members.Len() {
		if f.Members.Excluded(i) {
			out = append(out, f.Members.ID(i))
		}
	}
	return out
}

func settles(t *testing.T, done <-chan error, within time.Duration, what string) {
	t.Helper()
	select {
	case err := <-done:
		require.NoError(t, err, what)
	case <-time.After(within):
		t.Fatalf("%s: not settled within %v", what, within)
	}
}

func TestEjectionTakesAStalledMemberOutAndBackIn(t *testing.T) {
	for _, static := range []bool{false, true} {
		name := map[bool]string{false: "resolver", true: "endpoints"}[static]
		t.Run(name, func(t *testing.T) {
			r := startEjectionRig(t, static, 3, 50)
			stalled := r.s.fleet.Current().Members.ID(1)
			unblock := r.members[1].rec.block()
			t.Cleanup(unblock)

			// The batch waits for the stalled member until it is ejected;
			// its frames then go to their next owners, whose acks settle it.
			settles(t, r.consume(0), 5*time.Second, "batch with resources of the stalled member")
			assert.Equal(t, []string{stalled}, r.excluded())
			attrs := map[string]string{"member": stalled}
			if static {
				attrs = map[string]string{"shard": "1"}
			}
			assert.EqualValues(t, 1, sumMetric(t, r.tel, "otelcol_processor_sdpshard_ejections", attrs))
			assert.EqualValues(t, 1, sumMetric(t, r.tel, "otelcol_processor_sdpshard_ejected", nil))

			// While it is out, batches do not wait for it.
			for b := 1; b <= 3; b++ {
				settles(t, r.consume(b), 150*time.Millisecond+time.Second, "batch while the member is ejected")
			}
			assert.Equal(t, []string{stalled}, r.excluded(), "one stalled member ejected once")

			// It answers again: its probe is acknowledged and it is taken
			// back in; its resources come back to it.
			unblock()
			require.Eventually(t, func() bool { return len(r.excluded()) == 0 }, 5*time.Second, 5*time.Millisecond, "never taken back in")
			assert.EqualValues(t, 0, sumMetric(t, r.tel, "otelcol_processor_sdpshard_ejected", nil))
			before := len(r.members[1].rec.snapshot())
			settles(t, r.consume(4), 5*time.Second, "batch after readmission")
			assert.Greater(t, len(r.members[1].rec.snapshot()), before, "the member got none of its resources back")
			f := r.s.fleet.Current()
			for _, rf := range r.members[1].rec.snapshot()[before:] {
				assert.Equal(t, 1, f.Members.Owner(rf.frame.ResourceHash), "a resource not its own")
			}

			// Every span of every batch arrived (the stalled member's
			// copies of batch 0 may arrive twice: at least once).
			got := r.items(t)
			for b := range 5 {
				_, sent := buildTraces(b, 40, 2)
				for _, names := range sent {
					for _, n := range names {
						assert.Positive(t, got[n], "span %s lost", n)
					}
				}
			}
		})
	}
}

// With two of four members stalled and room to eject one, one is ejected,
// the other stays in: its batches wait (and would be refused retryably),
// and nothing is lost when it answers again.
func TestEjectionIsBoundedByMaxEjectedPercent(t *testing.T) {
	r := startEjectionRig(t, false, 4, 25) // one of four
	unblock1 := r.members[1].rec.block()
	unblock2 := r.members[2].rec.block()
	t.Cleanup(unblock1)
	t.Cleanup(unblock2)
	done := r.consume(0)
	require.Eventually(t, func() bool { return len(r.excluded()) == 1 }, 5*time.Second, 5*time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("batch settled with a stalled member kept in: %v", err)
	case <-time.After(600 * time.Millisecond):
	}
	assert.Len(t, r.excluded(), 1, "more than max_ejected_percent ejected")
	unblock1()
	unblock2()
	settles(t, done, 10*time.Second, "batch once the members answer again")
	require.Eventually(t, func() bool { return len(r.excluded()) == 0 }, 5*time.Second, 5*time.Millisecond)
	got := r.items(t)
	_, sent := buildTraces(0, 40, 2)
	for _, names := range sent {
		for _, n := range names {
			assert.Positive(t, got[n], "span %s lost", n)
		}
	}
}

// Shutting down with a member ejected stops its probe: nothing is left
// running (the package's TestMain checks for leaked goroutines), and the
// frames taken back from it were delivered by their next owners.
func TestShutdownWithAMemberEjected(t *testing.T) {
	for _, static := range []bool{false, true} {
		t.Run(map[bool]string{false: "resolver", true: "endpoints"}[static], func(t *testing.T) {
			r := startEjectionRig(t, static, 3, 50)
			unblock := r.members[2].rec.block()
			t.Cleanup(unblock)
			settles(t, r.consume(0), 5*time.Second, "batch with resources of the stalled member")
			require.Len(t, r.excluded(), 1)
			require.NoError(t, r.p.Shutdown(context.Background()))
			got := r.items(t)
			_, sent := buildTraces(0, 40, 2)
			for _, names := range sent {
				for _, n := range names {
					assert.Positive(t, got[n], "span %s lost", n)
				}
			}
		})
	}
}

// An ejected member that the resolver reports at a new address (a pod
// rescheduled) is served there at once, not probed at the old one.
func TestEjectedMemberAtANewAddressIsTakenBackIn(t *testing.T) {
	r := startEjectionRigListing(t, false, 4, 3, 50)
	fleetMembers, src, tel := r.members, r.src, r.tel

	t.Cleanup(fleetMembers[1].rec.block())
	settles(t, r.consume(0), 5*time.Second, "batch with resources of the stalled member")
	require.Equal(t, []string{"consumer-1"}, r.excluded())

	moved := fleetMembers[3].member
	moved.ID = "consumer-1"
	src.set(fleetMembers[0].member, moved, fleetMembers[2].member)
	require.Eventually(t, func() bool {
		f := r.s.fleet.Current()
		i, ok := f.Members.Index("consumer-1")
		return ok && f.Endpoints[i] == moved.Endpoint && len(r.excluded()) == 0
	}, 5*time.Second, 5*time.Millisecond, "consumer-1 not served at its new address")
	settles(t, r.consume(1), 5*time.Second, "batch after the move")
	assert.NotEmpty(t, fleetMembers[3].rec.snapshot(), "nothing reached consumer-1 at its new address")
	assert.EqualValues(t, 1, sumMetric(t, tel, "otelcol_processor_sdpshard_ejections", nil))
	assert.EqualValues(t, 0, sumMetric(t, tel, "otelcol_processor_sdpshard_ejected", nil))
}
