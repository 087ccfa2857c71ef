// SPDX-License-Identifier: Apache-2.0

package e2ebench

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

// perfCSV is what `perf stat -x,` writes for perfEvents, with the counts
// given in perfEvents order.
func perfCSV(counts ...string) string {
	var b strings.Builder
	b.WriteString("# started on Thu Nov 26 12:12:20 2026\n\n")
	for i, e := range perfEvents {
		b.WriteString(counts[i] + ",," + e.name + ",301634983,100.00,2.919,M/sec\n")
	}
	return b.String()
}

func TestParsePerfStat(t *testing.T) {
	// syscalls, cs, read, write, writev, epoll_pwait, futex, nanosleep, sched_yield
	in := perfCSV("1000", "70", "300", "200", "50", "100", "40", "30", "<not counted>") +
		"301.64,msec,task-clock,301636646,100.00,0.999,CPUs utilized\n" // not asked for: ignored
	got, err := parsePerfStat([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := Crossings{Syscalls: 1000, ContextSwitches: 70, Reads: 300, Writes: 250, Polls: 100, Scheduler: 70}
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

func TestParsePerfStatRefusesIncompleteOutput(t *testing.T) {
	full := perfCSV("1", "2", "3", "4", "5", "6", "7", "8", "9")
	lines := strings.Split(full, "\n")
	withoutFutex := strings.Join(append(append([]string{}, lines[:8]...), lines[9:]...), "\n")
	if _, err := parsePerfStat([]byte(withoutFutex)); !errors.Is(err, errPerfMissing) || !strings.Contains(err.Error(), "sys_enter_futex") {
		t.Errorf("an event missing: %v", err)
	}
	unsupported := strings.Replace(full, "7,,syscalls:sys_enter_futex", "<not supported>,,syscalls:sys_enter_futex", 1)
	if _, err := parsePerfStat([]byte(unsupported)); err == nil || !strings.Contains(err.Error(), "not supported") {
		t.Errorf("an event not supported: %v", err)
	}
	if _, err := parsePerfStat([]byte("garbage\n")); err == nil {
		t.Error("a line that is not CSV was accepted")
	}
	if _, err := parsePerfStat([]byte(strings.Replace(full, "3,,", "three,,", 1))); err == nil {
		t.Error("a count that is not a number was accepted")
	}
}

func TestKernelFiguresPerRequestAndMedians(t *testing.T) {
	const M = 1_000_000
	counted := func(m Measurement, requests int64, coll, side Crossings) Measurement {
		m.Requests, m.CollectorKernel, m.SidecarsKernel, m.KernelCounted = requests, coll, side, true
		return m
	}
	ms := []Measurement{
		counted(measurement("divert", "traces", "grpc", M, time.Second, 2*time.Second, time.Second, 30), 10_000,
			Crossings{Syscalls: 130_000, ContextSwitches: 40_000, Reads: 50_000, Writes: 30_000, Polls: 20_000, Scheduler: 25_000},
			Crossings{Syscalls: 90_000, ContextSwitches: 30_000}),
		counted(measurement("divert", "traces", "grpc", M, time.Second, 2*time.Second, time.Second, 30), 10_000,
			Crossings{Syscalls: 150_000, ContextSwitches: 36_000, Reads: 54_000, Writes: 36_000, Polls: 22_000, Scheduler: 21_000},
			Crossings{Syscalls: 80_000, ContextSwitches: 34_000}),
		counted(measurement("divert", "traces", "grpc", M, time.Second, 2*time.Second, time.Second, 30), 5_000,
			Crossings{Syscalls: 70_000, ContextSwitches: 19_000, Reads: 26_000, Writes: 16_000, Polls: 10_500, Scheduler: 12_000},
			Crossings{Syscalls: 44_000, ContextSwitches: 16_000}),
		measurement("plain", "traces", "grpc", M, time.Second, 4*time.Second, 0, 40),
	}
	for i := range ms {
		ms[i].Round = 1 + i%3
	}
	rows := Aggregate(ms, []string{"plain", "divert"}, "plain", "")
	if rows[0].Kernel != nil {
		t.Errorf("plain was not counted but has %+v", rows[0].Kernel)
	}
	// Per request: syscalls 13, 15, 14 -> 14; context switches 4, 3.6,
	// 3.8 -> 3.8; reads 5, 5.4, 5.2 -> 5.2; sidecars 9, 8, 8.8 -> 8.8.
	k := rows[1].Kernel
	if k == nil {
		t.Fatal("divert has no kernel figures")
	}
	want := KernelFigures{
		Collector: PerRequest{Syscalls: 14, ContextSwitches: 3.8, Reads: 5.2, Writes: 3.2, Polls: 2.1, Scheduler: 2.4},
		Sidecars:  PerRequest{Syscalls: 8.8, ContextSwitches: 3.2},
	}
	if *k != want {
		t.Fatalf("medians %+v, want %+v", *k, want)
	}
	if f := figuresOf(ms[2]); f.Requests != 5_000 || f.Kernel == nil || f.Kernel.Collector.Syscalls != 14 {
		t.Fatalf("one round's figures: %+v", f)
	}

	var b bytes.Buffer
	if err := WriteMarkdown(&b, rows, nil, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| divert | traces | grpc | 14.0 | 3.80 | 5.20 | 3.20 | 2.10 | 2.40 | 8.8 | 3.20 |") {
		t.Errorf("kernel table missing or wrong:\n%s", b.String())
	}
	b.Reset()
	if err := WriteMarkdown(&b, rows[:1], nil, nil); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "System calls") {
		t.Errorf("a run that counted nothing shows a kernel table:\n%s", b.String())
	}
}
