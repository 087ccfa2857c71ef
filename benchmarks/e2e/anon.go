// SPDX-License-Identifier: Apache-2.0

package e2ebench

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

// anonInterval is how often the processes' anonymous resident memory is
// sampled: a peak shorter than this can be missed.
const anonInterval = 50 * time.Millisecond

// errNoRssAnon means a status file has no RssAnon line.
var errNoRssAnon = errors.New("no RssAnon line")

// readRssAnon returns the anonymous resident memory of process pid, in
// bytes, from /proc/PID/status. It fails where there is no /proc (macOS).
func readRssAnon(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	return parseRssAnon(b)
}

// parseRssAnon reads the RssAnon field (Linux 4.5 and later) of a
// /proc/PID/status text, "RssAnon:\t    6912 kB", and returns it in bytes.
// RssAnon is the resident memory not backed by a file: the heap, stacks and
// the Go runtime's own, but not the pages of the binary's code and data
// that RssFile counts.
func parseRssAnon(status []byte) (int64, error) {
	for line := range bytes.Lines(status) {
		rest, ok := bytes.CutPrefix(line, []byte("RssAnon:"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) != 2 || string(f[1]) != "kB" {
			return 0, fmt.Errorf("RssAnon %q: want a number of kB", bytes.TrimSpace(rest))
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil || kb < 0 {
			return 0, fmt.Errorf("RssAnon %q: bad number", f[0])
		}
		return kb << 10, nil
	}
	return 0, errNoRssAnon
}

// anonPeaks keeps the peak anonymous resident memory of the processes of one
// case. Its one goroutine samples every watched process each interval until
// stop; a sample that cannot be read (no /proc, or the process just exited)
// is skipped, so a process never read successfully has a peak of 0, unknown.
type anonPeaks struct {
	read func(pid int) (int64, error)

	mu    sync.Mutex
	peaks map[int]int64 // by pid, of the processes watched

	quit chan struct{}
	done chan struct{}
	once sync.Once
}

// startAnonPeaks starts sampling every interval with read. The caller must
// call stop.
func startAnonPeaks(interval time.Duration, read func(pid int) (int64, error)) *anonPeaks {
	a := &anonPeaks{read: read, peaks: map[int]int64{}, quit: make(chan struct{}), done: make(chan struct{})}
	go a.loop(interval)
	return a
}

func (a *anonPeaks) loop(interval time.Duration) {
	defer close(a.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-a.quit:
			return
		case <-t.C:
			a.mu.Lock()
			for pid := range a.peaks {
				a.sampleLocked(pid)
			}
			a.mu.Unlock()
		}
	}
}

// sampleLocked reads pid once and raises its peak; a.mu is held, so that
// take cannot remove pid (and the pid be reused) while it is read.
func (a *anonPeaks) sampleLocked(pid int) {
	if n, err := a.read(pid); err == nil && n > a.peaks[pid] {
		a.peaks[pid] = n
	}
}

// watch starts sampling process pid, with a first sample at once.
func (a *anonPeaks) watch(pid int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.peaks[pid] = 0
	a.sampleLocked(pid)
}

// take samples pid a last time, stops watching it and returns its peak in
// bytes (0 when unknown). Call it right before stopping the process.
func (a *anonPeaks) take(pid int) int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.peaks[pid]; !ok {
		return 0
	}
	a.sampleLocked(pid)
	peak := a.peaks[pid]
	delete(a.peaks, pid)
	return peak
}

// stop ends the sampling goroutine and waits for it; it may be called more
// than once.
func (a *anonPeaks) stop() {
	a.once.Do(func() { close(a.quit) })
	<-a.done
}
