// SPDX-License-Identifier: Apache-2.0

// Package perfstattest stands in for perf stat in the tests of code that
// counts with perfstat: the test binary itself plays perf. Call Run first in
// TestMain, and pass the path Setup returns as the perf executable.
package perfstattest

import (
	"bufio"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"testing"

	"github.com/otelcol-sdp/otelcol-sdp/benchmarks/internal/perfstat"
)

// The ways the fake plays perf.
const (
	// Count acknowledges each control command and, on SIGINT, writes
	// Counts for the events it was asked for, but only if the commands were
	// exactly enable then disable, the one window a measurement opens;
	// otherwise nothing was counted.
	Count = "count"
	// Fail exits at once with an error, as perf does for an event it does
	// not know.
	Fail = "fail"
)

// Counts are the counts the fake reports, one per event of -e, in order.
var Counts = []string{"1000", "70", "300", "200", "50", "100", "40", "30", "5"}

// Crossings is what Counts add up to for perfstat's events.
var Crossings = perfstat.Crossings{Syscalls: 1000, ContextSwitches: 70, Reads: 300, Writes: 250, Polls: 100, Scheduler: 75}

// modeEnv tells the test binary, started as perf, how to play it.
const modeEnv = "PERFSTATTEST_MODE"

// Setup makes the test binary play perf in mode, for the rest of t, and
// returns the executable to pass as perf.
func Setup(t testing.TB, mode string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(modeEnv, mode)
	return exe
}

// Run plays perf stat and exits when the test binary was started as perf
// (see Setup); otherwise it returns at once.
func Run() {
	if mode := os.Getenv(modeEnv); mode != "" {
		os.Exit(fake(mode, os.Args[1:]))
	}
}

// fake plays `perf stat -e EVENTS --delay -1 --control fifo:CTL,ACK -o OUT`
// as far as perfstat uses it.
func fake(mode string, args []string) int {
	if mode == Fail {
		fmt.Fprintln(os.Stderr, "event syntax error: 'syscalls:sys_enter_futex'")
		return 129
	}
	var ctl, ack, out string
	var events []string
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "--control":
			ctl, ack, _ = strings.Cut(strings.TrimPrefix(args[i+1], "fifo:"), ",")
		case "-o":
			out = args[i+1]
		case "-e":
			events = strings.Split(args[i+1], ",")
		}
	}
	if len(events) != len(Counts) {
		fmt.Fprintf(os.Stderr, "fake perf: %d events, has %d counts\n", len(events), len(Counts))
		return 1
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
			counts := slices.Clone(Counts)
			if !slices.Equal(commands, []string{"enable", "disable"}) {
				for i := range counts {
					counts[i] = "<not counted>"
				}
			}
			if err := os.WriteFile(out, []byte(csv(events, counts)), 0o644); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			return 0
		}
	}
}

// csv is what `perf stat -x,` writes for events with counts, in order.
func csv(events, counts []string) string {
	var b strings.Builder
	b.WriteString("# started on Thu Nov 26 12:12:20 2026\n\n")
	for i, e := range events {
		b.WriteString(counts[i] + ",," + e + ",301634983,100.00,2.919,M/sec\n")
	}
	return b.String()
}
