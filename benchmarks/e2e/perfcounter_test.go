// SPDX-License-Identifier: Apache-2.0

package e2ebench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"testing"
	"time"
)

// fakePerf plays `perf stat --delay -1 --control fifo:CTL,ACK -o OUT` as
// far as the harness uses it: it acknowledges each control command and, on
// SIGINT, writes the counts of E2EBENCH_FAKE_PERF_COUNTS (in perfEvents
// order), but only if the commands were exactly enable then disable, the
// one window the harness opens; otherwise nothing was counted. In mode
// "fail" it exits at once with an error, as perf does for an event it does
// not know.
func fakePerf(mode string, args []string) int {
	if mode == "fail" {
		fmt.Fprintln(os.Stderr, "event syntax error: 'syscalls:sys_enter_futex'")
		return 129
	}
	var ctl, ack, out string
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "--control":
			ctl, ack, _ = strings.Cut(strings.TrimPrefix(args[i+1], "fifo:"), ",")
		case "-o":
			out = args[i+1]
		}
	}
	interrupted := make(chan os.Signal, 1)
	signal.Notify(interrupted, os.Interrupt)
	cf, err := os.Open(ctl)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	af, err := os.OpenFile(ack, os.O_WRONLY, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(cf)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var commands []string
	for {
		select {
		case l := <-lines:
			commands = append(commands, l)
			af.WriteString("ack\n\x00")
		case <-interrupted:
			counts := strings.Split(os.Getenv("E2EBENCH_FAKE_PERF_COUNTS"), ",")
			if !slices.Equal(commands, []string{"enable", "disable"}) {
				for i := range counts {
					counts[i] = "<not counted>"
				}
			}
			if err := os.WriteFile(out, []byte(perfCSV(counts...)), 0o644); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			return 0
		}
	}
}

// fakeCounts are the counts the fake perf reports (in perfEvents order),
// and fakeCrossings what they add up to.
const fakeCounts = "1000,70,300,200,50,100,40,30,5"

var fakeCrossings = Crossings{Syscalls: 1000, ContextSwitches: 70, Reads: 300, Writes: 250, Polls: 100, Scheduler: 75}

func startFakePerf(t *testing.T, mode string) (*perfCounter, error) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("E2EBENCH_FAKE_PERF", mode)
	t.Setenv("E2EBENCH_FAKE_PERF_COUNTS", fakeCounts)
	return startPerfCounter(exe, os.Getpid(), t.TempDir(), "collector")
}

func TestPerfCounterCountsTheWindowItOpens(t *testing.T) {
	k, err := startFakePerf(t, "perf")
	if err != nil {
		t.Fatal(err)
	}
	if err := k.enable(); err != nil {
		t.Fatal(err)
	}
	if err := k.disable(); err != nil {
		t.Fatal(err)
	}
	if got, err := k.stop(); err != nil || got != fakeCrossings {
		t.Fatalf("got %+v, %v; want %+v", got, err, fakeCrossings)
	}
}

func TestPerfCounterReportsWhatPerfSaid(t *testing.T) {
	k, err := startFakePerf(t, "fail")
	if err != nil {
		t.Fatal(err)
	}
	defer k.kill()
	err = k.enable()
	if err == nil || !strings.Contains(err.Error(), "event syntax error") {
		t.Fatalf("enable with a perf that exited: %v", err)
	}
}

// A case run with Options.Perf counts the crossings of the measured window
// only (the fake perf counts nothing unless the window is opened and closed
// once) and reports them with the number of requests measured.
func TestRunCaseCountsCrossings(t *testing.T) {
	dir := t.TempDir()
	floor, err := BuildFloor("go", dir, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	scenarios, err := LoadScenarios("configs")
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(scenarios, func(s Scenario) bool { return s.Binary == FloorBinary })
	if i < 0 {
		t.Fatal("no floor scenario in configs")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("E2EBENCH_FAKE_PERF", "perf")
	t.Setenv("E2EBENCH_FAKE_PERF_COUNTS", fakeCounts)
	payload, err := NewPayload("traces", Shape{Resources: 2, ItemsPerResource: 5, Kind: PayloadSmall})
	if err != nil {
		t.Fatal(err)
	}
	o := Options{
		Collectors: map[string]string{FloorBinary: floor}, Items: 200, Warmup: 3, Clients: 2,
		Settle: 10 * time.Second, WorkDir: dir, Perf: exe,
	}
	m, err := runCase(context.Background(), o, Case{Scenario: scenarios[i], Signal: "traces", Protocol: "grpc"}, payload, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !m.KernelCounted || m.CollectorKernel != fakeCrossings || m.SidecarsKernel != (Crossings{}) {
		t.Fatalf("counted %v: collector %+v, sidecars %+v", m.KernelCounted, m.CollectorKernel, m.SidecarsKernel)
	}
	if m.Requests != 20 || m.Items != 200 {
		t.Fatalf("measured %d requests, %d items; want 20 and 200", m.Requests, m.Items)
	}
	if f := figuresOf(m); f.Kernel == nil || f.Kernel.Collector.Syscalls != 50 {
		t.Fatalf("figures %+v", f.Kernel)
	}
}
