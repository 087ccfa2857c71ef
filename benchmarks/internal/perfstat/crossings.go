// SPDX-License-Identifier: Apache-2.0

package perfstat

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Crossings are one process's trips into the kernel over a counted window,
// as perf stat counts them. On a machine where each system call and each
// sleep and wake-up is dear (a virtual machine most of all), these counts
// explain a gap in CPU that no profile of user code shows, and unlike CPU
// time they hardly vary from run to run.
type Crossings struct {
	Syscalls        int64 // every system call
	ContextSwitches int64
	Reads           int64 // read
	Writes          int64 // write and writev
	Polls           int64 // epoll_pwait: waiting for sockets
	// Scheduler is futex, nanosleep and sched_yield: how Go's runtime puts
	// its threads to sleep, wakes them and lets them spin for work.
	Scheduler int64
}

// Add sums two processes' crossings.
func (c Crossings) Add(d Crossings) Crossings {
	return Crossings{
		Syscalls: c.Syscalls + d.Syscalls, ContextSwitches: c.ContextSwitches + d.ContextSwitches,
		Reads: c.Reads + d.Reads, Writes: c.Writes + d.Writes, Polls: c.Polls + d.Polls, Scheduler: c.Scheduler + d.Scheduler,
	}
}

// events are what perf stat counts for each process, and the field of
// Crossings each one adds to.
var events = []struct {
	name  string
	field func(*Crossings) *int64
}{
	{"raw_syscalls:sys_enter", func(c *Crossings) *int64 { return &c.Syscalls }},
	{"context-switches", func(c *Crossings) *int64 { return &c.ContextSwitches }},
	{"syscalls:sys_enter_read", func(c *Crossings) *int64 { return &c.Reads }},
	{"syscalls:sys_enter_write", func(c *Crossings) *int64 { return &c.Writes }},
	{"syscalls:sys_enter_writev", func(c *Crossings) *int64 { return &c.Writes }},
	{"syscalls:sys_enter_epoll_pwait", func(c *Crossings) *int64 { return &c.Polls }},
	{"syscalls:sys_enter_futex", func(c *Crossings) *int64 { return &c.Scheduler }},
	{"syscalls:sys_enter_nanosleep", func(c *Crossings) *int64 { return &c.Scheduler }},
	{"syscalls:sys_enter_sched_yield", func(c *Crossings) *int64 { return &c.Scheduler }},
}

// eventList is events as perf stat's -e takes them.
func eventList() string {
	names := make([]string, len(events))
	for i, e := range events {
		names[i] = e.name
	}
	return strings.Join(names, ",")
}

// errMissing means perf stat's output lacks events that were asked for.
var errMissing = errors.New("perf stat reported no count for")

// parse reads the CSV that `perf stat -x,` writes: one line per event, its
// count first and its name third. A count of "<not counted>" means the
// event never happened while counting was on. Every one of events must be
// there, so that a kernel without one of them fails loudly instead of
// reporting zero.
func parse(b []byte) (Crossings, error) {
	var c Crossings
	seen := make(map[string]bool, len(events))
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, ",")
		if len(fields) < 3 {
			return Crossings{}, fmt.Errorf("perf stat: line %q: want count,unit,event,…", line)
		}
		name := fields[2]
		i := indexEvent(name)
		if i < 0 {
			continue
		}
		var n int64
		switch v := fields[0]; v {
		case "<not counted>":
		case "<not supported>":
			return Crossings{}, fmt.Errorf("perf stat: event %s is not supported here", name)
		default:
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return Crossings{}, fmt.Errorf("perf stat: event %s: count %q: %w", name, v, err)
			}
			n = int64(f)
		}
		*events[i].field(&c) += n
		seen[name] = true
	}
	var missing []string
	for _, e := range events {
		if !seen[e.name] {
			missing = append(missing, e.name)
		}
	}
	if len(missing) > 0 {
		return Crossings{}, fmt.Errorf("%w: %s", errMissing, strings.Join(missing, ", "))
	}
	return c, nil
}

func indexEvent(name string) int {
	for i, e := range events {
		if e.name == name {
			return i
		}
	}
	return -1
}
