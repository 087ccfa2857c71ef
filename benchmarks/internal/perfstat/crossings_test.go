// SPDX-License-Identifier: Apache-2.0

package perfstat

import (
	"errors"
	"strings"
	"testing"
)

// perfCSV is what `perf stat -x,` writes for events, with the counts given
// in events order.
func perfCSV(counts ...string) string {
	var b strings.Builder
	b.WriteString("# started on Thu Nov 26 12:12:20 2026\n\n")
	for i, e := range events {
		b.WriteString(counts[i] + ",," + e.name + ",301634983,100.00,2.919,M/sec\n")
	}
	return b.String()
}

func TestParse(t *testing.T) {
	// syscalls, cs, read, write, writev, epoll_pwait, futex, nanosleep, sched_yield
	in := perfCSV("1000", "70", "300", "200", "50", "100", "40", "30", "<not counted>") +
		"301.64,msec,task-clock,301636646,100.00,0.999,CPUs utilized\n" // not asked for: ignored
	got, err := parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := Crossings{Syscalls: 1000, ContextSwitches: 70, Reads: 300, Writes: 250, Polls: 100, Scheduler: 70}
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if got := eventList(); !strings.HasPrefix(got, "raw_syscalls:sys_enter,context-switches,") || strings.Count(got, ",") != len(events)-1 {
		t.Errorf("-e %s", got)
	}
}

func TestParseRefusesIncompleteOutput(t *testing.T) {
	full := perfCSV("1", "2", "3", "4", "5", "6", "7", "8", "9")
	lines := strings.Split(full, "\n")
	withoutFutex := strings.Join(append(append([]string{}, lines[:8]...), lines[9:]...), "\n")
	if _, err := parse([]byte(withoutFutex)); !errors.Is(err, errMissing) || !strings.Contains(err.Error(), "sys_enter_futex") {
		t.Errorf("an event missing: %v", err)
	}
	unsupported := strings.Replace(full, "7,,syscalls:sys_enter_futex", "<not supported>,,syscalls:sys_enter_futex", 1)
	if _, err := parse([]byte(unsupported)); err == nil || !strings.Contains(err.Error(), "not supported") {
		t.Errorf("an event not supported: %v", err)
	}
	if _, err := parse([]byte("garbage\n")); err == nil {
		t.Error("a line that is not CSV was accepted")
	}
	if _, err := parse([]byte(strings.Replace(full, "3,,", "three,,", 1))); err == nil {
		t.Error("a count that is not a number was accepted")
	}
}

func TestCrossingsAdd(t *testing.T) {
	a := Crossings{Syscalls: 1, ContextSwitches: 2, Reads: 3, Writes: 4, Polls: 5, Scheduler: 6}
	if got, want := a.Add(a), (Crossings{Syscalls: 2, ContextSwitches: 4, Reads: 6, Writes: 8, Polls: 10, Scheduler: 12}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
