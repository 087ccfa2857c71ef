// SPDX-License-Identifier: Apache-2.0

package procstat

import (
	"sync"
	"time"

	"github.com/prometheus/procfs"
)

// AnonInterval is how often a benchmark samples its processes' anonymous
// resident memory: a peak shorter than this can be missed.
const AnonInterval = 50 * time.Millisecond

// RssAnon returns the anonymous resident memory of process pid, in bytes:
// the RssAnon field (Linux 4.5 and later) of /proc/PID/status, the memory
// not backed by a file (the heap, stacks and the Go runtime's own, but not
// the pages of the binary's code and data that RssFile counts). It fails
// where there is no /proc (macOS) and for a process that is gone; it
// returns 0 for a status without a readable RssAnon.
func RssAnon(pid int) (int64, error) {
	fs, err := procFS()
	if err != nil {
		return 0, err
	}
	return rssAnonIn(fs, pid)
}

// rssAnonIn reads RssAnon of process pid from /proc/PID/status in fs.
func rssAnonIn(fs procfs.FS, pid int) (int64, error) {
	p, err := fs.Proc(pid)
	if err != nil {
		return 0, err
	}
	s, err := p.NewStatus()
	if err != nil {
		return 0, err
	}
	return int64(s.RssAnon), nil
}

// AnonPeaks keeps the peak anonymous resident memory of a set of processes.
// Its one goroutine samples every watched process each interval until Stop;
// a sample that cannot be read (no /proc, or the process just exited) is
// skipped, so a process never read successfully has a peak of 0, unknown.
type AnonPeaks struct {
	read func(pid int) (int64, error)

	mu    sync.Mutex
	peaks map[int]int64 // by pid, of the processes watched

	quit chan struct{}
	done chan struct{}
	once sync.Once
}

// StartAnonPeaks starts sampling RssAnon every interval. The caller must
// call Stop.
func StartAnonPeaks(interval time.Duration) *AnonPeaks {
	return startAnonPeaks(interval, RssAnon)
}

// startAnonPeaks starts sampling every interval with read.
func startAnonPeaks(interval time.Duration, read func(pid int) (int64, error)) *AnonPeaks {
	a := &AnonPeaks{read: read, peaks: map[int]int64{}, quit: make(chan struct{}), done: make(chan struct{})}
	go a.loop(interval)
	return a
}

func (a *AnonPeaks) loop(interval time.Duration) {
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
// Take cannot remove pid (and the pid be reused) while it is read.
func (a *AnonPeaks) sampleLocked(pid int) {
	if n, err := a.read(pid); err == nil && n > a.peaks[pid] {
		a.peaks[pid] = n
	}
}

// Watch starts sampling process pid, with a first sample at once.
func (a *AnonPeaks) Watch(pid int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.peaks[pid] = 0
	a.sampleLocked(pid)
}

// Take samples pid a last time, stops watching it and returns its peak in
// bytes (0 when unknown). Call it right before stopping the process.
func (a *AnonPeaks) Take(pid int) int64 {
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

// Stop ends the sampling goroutine and waits for it; it may be called more
// than once. Stop it before the processes it watches are reaped, so that it
// cannot read a pid that was reused.
func (a *AnonPeaks) Stop() {
	a.once.Do(func() { close(a.quit) })
	<-a.done
}
