// SPDX-License-Identifier: Apache-2.0

package e2ebench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Crossings are one process's trips into the kernel over a case's measured
// window, as perf stat counts them (Options.Perf). On a machine where each
// system call and each sleep and wake-up is dear (a virtual machine most of
// all), these counts explain a gap in CPU that no profile of user code shows,
// and unlike CPU time they hardly vary from round to round.
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

// perfEvents are what perf stat counts for each process, and the field of
// Crossings each one adds to.
var perfEvents = []struct {
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

// perfEventList is perfEvents as perf stat's -e takes them.
func perfEventList() string {
	names := make([]string, len(perfEvents))
	for i, e := range perfEvents {
		names[i] = e.name
	}
	return strings.Join(names, ",")
}

// parsePerfStat reads the CSV that `perf stat -x,` writes: one line per
// event, its count first and its name third. A count of "<not counted>"
// means the event never happened while counting was on. Every event of
// perfEvents must be there, so that a kernel without one of them fails
// loudly instead of reporting zero.
func parsePerfStat(b []byte) (Crossings, error) {
	var c Crossings
	seen := make(map[string]bool, len(perfEvents))
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
		*perfEvents[i].field(&c) += n
		seen[name] = true
	}
	var missing []string
	for _, e := range perfEvents {
		if !seen[e.name] {
			missing = append(missing, e.name)
		}
	}
	if len(missing) > 0 {
		return Crossings{}, fmt.Errorf("%w: %s", errPerfMissing, strings.Join(missing, ", "))
	}
	return c, nil
}

// errPerfMissing means perf stat's output lacks events the harness asked for.
var errPerfMissing = errors.New("perf stat reported no count for")

func indexEvent(name string) int {
	for i, e := range perfEvents {
		if e.name == name {
			return i
		}
	}
	return -1
}

// PerRequest is a process's (or the sidecars' summed) crossings per request
// of the measured load.
type PerRequest struct {
	Syscalls        float64 `json:"syscalls"`
	ContextSwitches float64 `json:"context_switches"`
	Reads           float64 `json:"reads"`
	Writes          float64 `json:"writes"`
	Polls           float64 `json:"polls"`
	Scheduler       float64 `json:"scheduler"`
}

// perRequest divides c by requests; zeros for no requests.
func perRequest(c Crossings, requests int64) PerRequest {
	if requests <= 0 {
		return PerRequest{}
	}
	r := float64(requests)
	return PerRequest{
		Syscalls: float64(c.Syscalls) / r, ContextSwitches: float64(c.ContextSwitches) / r,
		Reads: float64(c.Reads) / r, Writes: float64(c.Writes) / r, Polls: float64(c.Polls) / r, Scheduler: float64(c.Scheduler) / r,
	}
}

// KernelFigures are the crossings per request of the Collector (or the
// floor server) and of its sidecars, summed.
type KernelFigures struct {
	Collector PerRequest `json:"collector"`
	Sidecars  PerRequest `json:"sidecars"`
}

// medianKernel is the field-by-field median of ks; nil for none.
func medianKernel(ks []KernelFigures) *KernelFigures {
	if len(ks) == 0 {
		return nil
	}
	pick := func(f func(KernelFigures) float64) float64 {
		xs := make([]float64, len(ks))
		for i, k := range ks {
			xs[i] = f(k)
		}
		return median(xs)
	}
	per := func(side func(KernelFigures) PerRequest) PerRequest {
		return PerRequest{
			Syscalls:        pick(func(k KernelFigures) float64 { return side(k).Syscalls }),
			ContextSwitches: pick(func(k KernelFigures) float64 { return side(k).ContextSwitches }),
			Reads:           pick(func(k KernelFigures) float64 { return side(k).Reads }),
			Writes:          pick(func(k KernelFigures) float64 { return side(k).Writes }),
			Polls:           pick(func(k KernelFigures) float64 { return side(k).Polls }),
			Scheduler:       pick(func(k KernelFigures) float64 { return side(k).Scheduler }),
		}
	}
	return &KernelFigures{
		Collector: per(func(k KernelFigures) PerRequest { return k.Collector }),
		Sidecars:  per(func(k KernelFigures) PerRequest { return k.Sidecars }),
	}
}
