// SPDX-License-Identifier: Apache-2.0

package roundtrip

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if spec := os.Getenv(peerEnv); spec != "" {
		if err := servePeer(spec); err != nil {
			fmt.Fprintln(os.Stderr, "peer:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

var modes = []struct {
	name  string
	start func(dir string, size int) (peer, error)
}{
	{"unix-netpoll", startUnix},
	{"unix-blocking", startUnixBlocking},
	{"shm-futex", startShm},
}

// sizes are the request payloads measured: a bare signal, and about what
// one sidecar receives per request of the end-to-end benchmark with small
// items (10 resources x 10 spans, split over two sidecars) and with SDK-sized
// ones.
var sizes = []int{16, 16 << 10, 64 << 10}

// TestEveryRequestIsAnsweredInTurn checks every channel end to end: each
// answer is the sequence of the request it answers, and the child exits
// cleanly when told to.
func TestEveryRequestIsAnsweredInTurn(t *testing.T) {
	payload := make([]byte, 16<<10)
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			p, err := mode.start(t.TempDir(), len(payload))
			if err != nil {
				t.Fatal(err)
			}
			for seq := uint32(1); seq <= 2000; seq++ {
				got, err := p.roundTrip(seq, payload)
				if err != nil {
					t.Fatalf("round trip %d: %v", seq, err)
				}
				if got != seq {
					t.Fatalf("round trip %d answered %d", seq, got)
				}
			}
			if err := p.close(); err != nil {
				t.Fatalf("close: %v", err)
			}
		})
	}
}

func TestCPUNanosCountsThisProcess(t *testing.T) {
	before, err := cpuNanos(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for i := range 50_000_000 {
		x ^= i * i
	}
	after, err := cpuNanos(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if after <= before {
		t.Fatalf("CPU time did not grow over a busy loop (%d -> %d, x=%d)", before, after, x)
	}
	if _, err := cpuNanos(-1); err == nil {
		t.Fatal("cpuNanos of a process that does not exist returned no error")
	}
}

// BenchmarkRoundTrip measures one request and its answer between this
// process and a child. cpu-ns/op is the CPU time of both processes per
// round trip; peer-cpu-ns/op the child's share of it.
func BenchmarkRoundTrip(b *testing.B) {
	for _, size := range sizes {
		payload := make([]byte, size)
		for _, mode := range modes {
			b.Run(fmt.Sprintf("%s/bytes=%d", mode.name, size), func(b *testing.B) {
				benchmarkRoundTrip(b, mode.start, payload)
			})
		}
	}
}

func benchmarkRoundTrip(b *testing.B, start func(string, int) (peer, error), payload []byte) {
	p, err := start(b.TempDir(), len(payload))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(payload)))
	seq := uint32(0)
	trip := func() {
		seq++
		if got, err := p.roundTrip(seq, payload); err != nil || got != seq {
			b.Fatalf("round trip %d: answered %d, %v", seq, got, err)
		}
	}
	for range 1000 {
		trip()
	}
	self0, peer0 := mustCPU(b, os.Getpid()), mustCPU(b, p.pid())
	b.ResetTimer()
	for range b.N {
		trip()
	}
	b.StopTimer()
	self1, peer1 := mustCPU(b, os.Getpid()), mustCPU(b, p.pid())
	b.ReportMetric(float64(self1-self0+peer1-peer0)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(peer1-peer0)/float64(b.N), "peer-cpu-ns/op")
	if err := p.close(); err != nil {
		b.Fatal(err)
	}
}

func mustCPU(b *testing.B, pid int) int64 {
	ns, err := cpuNanos(pid)
	if err != nil {
		b.Fatal(err)
	}
	return ns
}
