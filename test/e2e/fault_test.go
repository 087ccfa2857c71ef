// SPDX-License-Identifier: Apache-2.0

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
			e.logShutdownReport()
			res := l.stop()

			tl := waitSettled(t, res, e.outDirs()...)
			checkNothingLost(t, res, tl, "the Collector answered OK for spans it then dropped at shutdown "+
				"(with wait_for_ack: false the client is answered once frames are queued in memory)")
			e.stopAll()
		})
	}
}

// TestFaultCollectorKilled freezes both sidecars with SIGSTOP while the load
// runs, so that frames pile up in the Collector, then kills the Collector
// with SIGKILL and resumes the sidecars.
//
//   - default: the processor's default settings. Nothing the client was
//     told succeeded may be lost: OK must mean acknowledged by a sidecar.
//   - persistent_queue: OK before the sidecars' ack (wait_for_ack: false),
//     with frames held in a file_storage extension (storage:). The Collector
//     is started again on the same storage and must deliver what it held.
func TestFaultCollectorKilled(t *testing.T) {
	t.Run("default", func(t *testing.T) {
		e := newFaultEnv(t, 2)
		e.startSidecars()
		e.writeConfig(collectorSettings{})
		e.startCollector()
		res := killCollectorWhileSidecarsStopped(t, e)
		tl := waitSettled(t, res, e.outDirs()...)
		checkNothingLost(t, res, tl, "the Collector answered OK for spans held only in its memory "+
			"(with wait_for_ack: false the client is answered once frames are queued)")
		e.stopAll()
	})
	t.Run("persistent_queue", func(t *testing.T) {
		e := newFaultEnv(t, 2)
		e.writeConfig(persistentQueue(t, e))
		requirePersistentQueue(t, e)
		e.startSidecars()
		e.startCollector()
		res := killCollectorWhileSidecarsStopped(t, e)
		t.Log("starting the Collector again on the same storage")
		e.startCollector()
		tl := waitDelivered(t, res, deliverTimeout, e.outDirs()...)
		checkNothingLost(t, res, tl, "frames acked to the client from the persistent queue must be replayed after a restart")
		e.stopAll()
	})
}

// killCollectorWhileSidecarsStopped runs the load for a second, stops both
// sidecars for two more, kills the Collector and resumes the sidecars.
func killCollectorWhileSidecarsStopped(t *testing.T, e *faultEnv) loadResult {
	t.Helper()
	l := startLoad(t, e.grpcEndpoint, smallLoad)
	time.Sleep(time.Second)
	for _, s := range e.sidecars {
		s.proc.Signal(t, syscall.SIGSTOP)
	}
	time.Sleep(2 * time.Second)
	t.Logf("SIGKILL to the Collector after %d spans acked (sidecars stopped for 2s)", l.ackedSoFar())
	e.collector.Kill(t)
	res := l.stop()
	for _, s := range e.sidecars {
		s.proc.Signal(t, syscall.SIGCONT)
	}
	return res
}

// TestFaultPodTerminated sends SIGTERM to the Collector and both (slow)
// sidecars at the same moment while the load runs, in divert mode, as
// Kubernetes does to the containers of a pod when nothing orders their
// stop: the sidecars may be gone before the Collector has flushed. Nothing
// the client was told succeeded may be lost.
func TestFaultPodTerminated(t *testing.T) {
	e := newFaultEnv(t, 2, slowSidecar)
	e.startSidecars()
	e.writeConfig(collectorSettings{Processor: "    mode: divert\n"})
	e.startCollector()

	l := startLoad(t, e.grpcEndpoint, smallLoad)
	time.Sleep(2 * time.Second)
	t.Logf("SIGTERM to the Collector and the sidecars after %d spans acked", l.ackedSoFar())
	e.collector.Signal(t, syscall.SIGTERM)
	for _, s := range e.sidecars {
		s.proc.Signal(t, syscall.SIGTERM)
	}
	for _, s := range e.sidecars {
		if err := s.proc.Wait(t, sidecarStopLimit); err != nil {
			t.Errorf("%s exit after SIGTERM: %v", s.proc.Name, err)
		}
	}
	if err := e.collector.Wait(t, collectorStopLimit); err != nil {
		t.Errorf("collector exit after SIGTERM: %v\n%s", err, e.collector.Tail(20))
	}
	e.logShutdownReport()
	res := l.stop()
	tl := count(res, readReceived(t, e.outDirs()...))
	checkNothingLost(t, res, tl, "the Collector answered OK for spans its sidecars never acknowledged before the pod stopped")
}
