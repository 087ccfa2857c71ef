// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelcol-sdp/otelcol-sdp/internal/sidecar"
	"github.com/otelcol-sdp/otelcol-sdp/sdp"
	"github.com/otelcol-sdp/otelcol-sdp/test/testbin"
)

// Shape of the hostile flood.
const (
	floodPeers = 250
	floodWaves = 3
	// floodPartial is what each peer sends of a frame that declares the
	// largest payload the sidecar reads, before it stalls.
	floodPartial = 2_000_000
	// floodHold is how long each wave keeps its peers connected.
	floodHold = 3 * time.Second
	// sidecarIdleRSS is what the sidecar's RSS must return under after
	// the peers leave, within sidecarReturnWithin.
	sidecarIdleRSS      = 64 << 20
	sidecarReturnWithin = 30 * time.Second
)

// TestFaultSidecarFloodOfStalledFrames sends, in three waves, 250 peers
// that each say Hello and send 2 MB of a frame, then stall, against a
// sidecar with its default limits, on a unix socket and on TCP. The
// sidecar's RSS must stay under the README's bound in every wave and come
// back under 64 MB once the peers leave, and a Collector sending beside
// the flood must lose nothing and keep at least half the throughput it
// had before the flood.
func TestFaultSidecarFloodOfStalledFrames(t *testing.T) {
	for _, network := range []string{"unix", "tcp"} {
		t.Run(network, func(t *testing.T) { testFlood(t, network) })
	}
}

func testFlood(t *testing.T, network string) {
	e := newFaultEnv(t, 1)
	target := e.sidecars[0]
	if network == "tcp" {
		target.tcp = net.JoinHostPort("127.0.0.1", strconv.Itoa(testbin.FreePorts(t, 1)[0]))
		target.args = []string{"-listen", target.endpoint(), "-mode", "file", "-dir", target.outDir, "-stats-interval", "0"}
	}
	e.startSidecars()
	e.writeConfig(collectorSettings{})
	e.startCollector()
	defer e.stopAll()
	// The bound cmd/sdp-sidecar/README.md states, for the default flags.
	bound := sidecar.DefaultConfig().MemoryBound()
	t.Logf("sidecar RSS %d MiB at start; the README's bound for the defaults is %d MiB", target.proc.RSS(t)>>20, bound>>20)

	// The Collector's throughput alone, then beside the flood, measured
	// the same way (spans acked per second over a window) on one load
	// whose span ids stay unique.
	l := startLoad(t, e.grpcEndpoint, loadSettings{Senders: 4, Resources: 4, Spans: 10, Services: 8, Timeout: 10 * time.Second})
	time.Sleep(time.Second) // warm up
	rate := func(d time.Duration) float64 {
		start, at := l.ackedSoFar(), time.Now()
		time.Sleep(d)
		return float64(l.ackedSoFar()-start) / time.Since(at).Seconds()
	}
	alone := rate(3 * time.Second)

	cpuBefore := [3]float64{cpuSeconds(target.proc.Pid()), cpuSeconds(e.collector.Pid()), cpuSeconds(os.Getpid())}
	floodStart, floodAcked := time.Now(), l.ackedSoFar()
	partial := append(frameHeader(sdp.TypeResourceFrame, sdp.DefaultMaxFrameSize-sdp.HeaderSize), make([]byte, floodPartial)...)
	for wave := 1; wave <= floodWaves; wave++ {
		peak, sent := floodWave(t, target, partial)
		t.Logf("wave %d: %d of %d peers sent their Hello and 2 MB; sidecar RSS peaked at %d MiB", wave, sent, floodPeers, peak>>20)
		if target.proc.Exited() {
			t.Fatalf("the sidecar died in wave %d:\n%s", wave, target.proc.Tail(30))
		}
		if peak > bound {
			t.Errorf("wave %d: sidecar RSS peaked at %d MiB, over the README's bound of %d MiB", wave, peak>>20, bound>>20)
		}
	}
	beside := float64(l.ackedSoFar()-floodAcked) / time.Since(floodStart).Seconds()
	t.Logf("CPU seconds during the %.1fs flood: sidecar %.1f, Collector %.1f, test process (peers and load) %.1f",
		time.Since(floodStart).Seconds(), cpuSeconds(target.proc.Pid())-cpuBefore[0], cpuSeconds(e.collector.Pid())-cpuBefore[1], cpuSeconds(os.Getpid())-cpuBefore[2])
	res := l.stop()
	t.Logf("Collector: %.0f spans/s alone, %.0f spans/s beside the flood (%.0f%%)", alone, beside, 100*beside/alone)
	if beside < alone/2 {
		t.Errorf("beside the flood the Collector got %.0f spans/s through, under half of the %.0f it had alone", beside, alone)
	}
	tl := waitDelivered(t, res, deliverTimeout, e.outDirs()...)
	checkNothingLost(t, res, tl, "a flood of stalled frames must not cost the Collector data")

	// The peers are gone: the sidecar gives its memory back.
	deadline := time.Now().Add(sidecarReturnWithin)
	rss := target.proc.RSS(t)
	for rss >= sidecarIdleRSS && time.Now().Before(deadline) {
		time.Sleep(250 * time.Millisecond)
		rss = target.proc.RSS(t)
	}
	t.Logf("sidecar RSS %d MiB after the flood", rss>>20)
	if rss >= sidecarIdleRSS {
		t.Errorf("sidecar RSS still %d MiB %v after the peers left, want under %d MiB", rss>>20, sidecarReturnWithin, sidecarIdleRSS>>20)
	}
	e.stopAll()
	t.Logf("sidecar statistics at exit: %s", statsLine(target))
}

// floodWave connects floodPeers peers that each send a Hello and partial,
// holds them for floodHold while sampling the sidecar's RSS, then closes
// them. It returns the highest RSS seen and how many peers sent all their
// bytes (the others were closed or not read by the sidecar).
func floodWave(t *testing.T, target *sidecarProc, partial []byte) (peak int64, sent int) {
	t.Helper()
	hello := helloFrame(t, 0, 1)
	start := time.Now()
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		conns  []net.Conn
		full   atomic.Int32
		failed atomic.Int32
	)
	for range floodPeers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := target.dial()
			if err != nil {
				failed.Add(1)
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			c.SetWriteDeadline(start.Add(floodHold))
			if _, err := c.Write(hello); err != nil {
				return
			}
			if _, err := c.Write(partial); err == nil {
				full.Add(1)
			}
		}()
	}
	pid := target.proc.Pid()
	for time.Since(start) < floodHold {
		if rss, err := readRSS(pid); err == nil {
			peak = max(peak, rss)
		}
		time.Sleep(50 * time.Millisecond)
	}
	mu.Lock()
	for _, c := range conns {
		c.Close()
	}
	mu.Unlock()
	wg.Wait()
	if n := failed.Load(); n > 0 {
		t.Errorf("%d of %d peers could not connect: the sidecar refused connections below -max-conns", n, floodPeers)
	}
	time.Sleep(500 * time.Millisecond)
	return peak, int(full.Load())
}

// readRSS reads VmRSS of pid from /proc, for sampling from a loop that must
// not stop the test.
func readRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb int64
			_, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// statsLine is the sidecar's last logged connections line, if any.
func statsLine(s *sidecarProc) string {
	last := ""
	for line := range strings.Lines(s.proc.Log()) {
		if strings.HasPrefix(line, "connections") {
			last = strings.TrimSpace(line)
		}
	}
	return last
}

// cpuSeconds is the user and system CPU time pid has used, from
// /proc/<pid>/stat (clock ticks of 1/100 s); 0 when it cannot be read.
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command name, which is in parentheses.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	user, _ := strconv.ParseFloat(f[11], 64)
	sys, _ := strconv.ParseFloat(f[12], 64)
	return (user + sys) / 100
}

// TestFaultCollectorIsNotLockedOutAtTheConnectionLimit fills the sidecar's
// -max-conns with peers that say Hello and then nothing, and only then
// starts the Collector: its connection must take the place of one of them,
// and its data must arrive.
func TestFaultCollectorIsNotLockedOutAtTheConnectionLimit(t *testing.T) {
	const maxConns = 20
	e := newFaultEnv(t, 1, "-max-conns", strconv.Itoa(maxConns))
	target := e.sidecars[0]
	e.startSidecars()
	hello := helloFrame(t, 0, 1)
	var peers []net.Conn
	defer func() {
		for _, c := range peers {
			c.Close()
		}
	}()
	for range maxConns {
		c, err := target.dial()
		if err != nil {
			t.Fatal(err)
		}
		peers = append(peers, c)
		write(t, c, hello)
	}
	time.Sleep(1500 * time.Millisecond) // the peers are quiet for longer than the sidecar's grace
	e.writeConfig(collectorSettings{})
	e.startCollector()
	defer e.stopAll()
	l := startLoad(t, e.grpcEndpoint, smallLoad)
	time.Sleep(2 * time.Second)
	res := l.stop()
	tl := waitDelivered(t, res, deliverTimeout, e.outDirs()...)
	checkNothingLost(t, res, tl, "a sidecar full of silent peers must still take the Collector")
	for code := range res.Failures {
		if !strings.HasPrefix(code, "cut off") {
			t.Errorf("the Collector failed requests while the sidecar was full of silent peers: %s", res)
			break
		}
	}
	closed := 0
	for _, c := range peers {
		if connClosed(c) {
			closed++
		}
	}
	if closed == 0 {
		t.Errorf("no silent peer was closed to make room for the Collector")
	}
	t.Logf("%d of %d silent peers were closed to make room", closed, maxConns)
}
