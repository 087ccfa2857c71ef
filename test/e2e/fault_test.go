//go:build e2e

package e2e

import (
	"syscall"
	"testing"
	"time"
)

// The fault scenarios (see README.md in this directory for the table of
// what each shows). Each runs the real otelcol-sdp and sdp-sidecar
// binaries, two shards, the sdpshard processor with its default settings
// unless the scenario is about a setting, and a load client whose spans
// all have unique ids; it checks that every span the client was told
// succeeded reached a sidecar at least once, and logs the duplicates.

// TestFaultSidecarKilled kills one sidecar with SIGKILL while the load runs
// and starts it again a second later: the Collector holds the frames of the
// dead shard and resends them once it reconnects.
func TestFaultSidecarKilled(t *testing.T) {
	e := newFaultEnv(t, 2)
	e.startSidecars()
	e.writeConfig(collectorSettings{})
	e.startCollector()

	l := startLoad(t, e.grpcEndpoint, smallLoad)
	time.Sleep(time.Second)
	e.sidecars[0].proc.Kill(t)
	t.Logf("sidecar 0 killed with SIGKILL after %d spans acked", l.ackedSoFar())
	time.Sleep(time.Second)
	e.startSidecar(0)
	time.Sleep(time.Second)
	res := l.stop()

	tl := waitDelivered(t, res, deliverTimeout, e.outDirs()...)
	checkNothingLost(t, res, tl, "a sidecar killed and restarted must not lose what the Collector acked")
	e.stopAll()
}

// TestFaultSidecarStopped freezes one sidecar with SIGSTOP for two seconds
// while the load runs, then resumes it with SIGCONT: frames wait in the
// Collector's queue (or on the connection) and are delivered afterwards.
func TestFaultSidecarStopped(t *testing.T) {
	e := newFaultEnv(t, 2)
	e.startSidecars()
	e.writeConfig(collectorSettings{})
	e.startCollector()

	l := startLoad(t, e.grpcEndpoint, smallLoad)
	time.Sleep(time.Second)
	e.sidecars[1].proc.Signal(t, syscall.SIGSTOP)
	t.Logf("sidecar 1 stopped with SIGSTOP after %d spans acked", l.ackedSoFar())
	time.Sleep(2 * time.Second)
	e.sidecars[1].proc.Signal(t, syscall.SIGCONT)
	time.Sleep(time.Second)
	res := l.stop()

	tl := waitDelivered(t, res, deliverTimeout, e.outDirs()...)
	checkNothingLost(t, res, tl, "a sidecar paused and resumed must not lose what the Collector acked")
	e.stopAll()
}

// slowSidecar is the sidecar flag of the Collector-stop scenarios: an ack
// every 50 ms per shard, slower than the load, so that frames pile up in the
// Collector and its shutdown cannot flush them all within flush_timeout.
const slowSidecar = "-ack-delay=50ms"

// TestFaultCollectorTerminated sends SIGTERM to the Collector while the load
// runs against slow sidecars, in both processor modes: with the default
// settings, nothing the client was told succeeded may be lost when the
// Collector stops.
func TestFaultCollectorTerminated(t *testing.T) {
	for _, mode := range []string{"tee", "divert"} {
		t.Run(mode, func(t *testing.T) {
			e := newFaultEnv(t, 2, slowSidecar)
			e.startSidecars()
			e.writeConfig(collectorSettings{Processor: "    mode: " + mode + "\n"})
			e.startCollector()

			l := startLoad(t, e.grpcEndpoint, smallLoad)
			time.Sleep(2 * time.Second)
			t.Logf("SIGTERM to the Collector after %d spans acked", l.ackedSoFar())
			e.collector.Signal(t, syscall.SIGTERM)
			start := time.Now()
			if err := e.collector.Wait(t, collectorStopLimit); err != nil {
				t.Errorf("collector exit after SIGTERM: %v\n%s", err, e.collector.Tail(20))
			}
			t.Logf("the Collector exited %s after SIGTERM", time.Since(start).Round(time.Millisecond))
			res := l.stop()

			// Nothing more can arrive: the Collector is gone. The sidecars
			// have written every frame they acked.
			tl := count(res, readReceived(t, e.outDirs()...))
			checkNothingLost(t, res, tl, "the Collector answered OK for spans it then dropped at shutdown "+
				"(with wait_for_ack: false the client is answered once frames are queued in memory)")
			e.stopAll()
		})
	}
}
