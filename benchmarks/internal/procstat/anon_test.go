// SPDX-License-Identifier: Apache-2.0

package procstat

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"
)

// The status of a Collector at idle, as Linux 6.1 prints it (abridged).
const statusSample = `Name:	otelcol-sdp
Umask:	0022
State:	S (sleeping)
Tgid:	41234
Pid:	41234
PPid:	41200
VmPeak:	 1297316 kB
VmSize:	 1297316 kB
VmLck:	       0 kB
VmHWM:	   55812 kB
VmRSS:	   55812 kB
RssAnon:	    6912 kB
RssFile:	   48900 kB
RssShmem:	       0 kB
VmData:	   60328 kB
VmStk:	     132 kB
VmExe:	   21508 kB
Threads:	9
`

func TestRssAnonFromStatus(t *testing.T) {
	// A status without a readable RssAnon gives 0, unknown, as the peak of
	// a process that was never read.
	unknown := map[int]string{
		1: "Name:\tsh\nVmRSS:\t  1936 kB\n", // no RssAnon (before Linux 4.5)
		2: "RssAnon:\t6912 MB\n",            // another unit
		3: "RssAnon:\t69x2 kB\n",
		4: "RssAnon:\t-1 kB\n",
		5: "",
	}
	files := map[string]map[string]string{"41234": {"status": statusSample}}
	for pid, status := range unknown {
		files[strconv.Itoa(pid)] = map[string]string{"status": status}
	}
	fs := fakeProc(t, files)
	got, err := rssAnonIn(fs, 41234)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(6912 << 10); got != want {
		t.Errorf("got %d, want %d", got, want)
	}
	for pid, status := range unknown {
		if got, err := rssAnonIn(fs, pid); err != nil || got != 0 {
			t.Errorf("%q: %d, %v; want 0 (unknown)", status, got, err)
		}
	}
	if got, err := rssAnonIn(fs, 6); err == nil {
		t.Errorf("no such process: %d, no error", got)
	}
}

// fakeMemory is a read function for AnonPeaks whose values the test sets.
type fakeMemory struct {
	mu    sync.Mutex
	bytes map[int]int64 // absent: the read fails
	reads map[int]int
}

func (f *fakeMemory) set(pid int, n int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bytes[pid] = n
}

func (f *fakeMemory) read(pid int) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads[pid]++
	n, ok := f.bytes[pid]
	if !ok {
		return 0, os.ErrNotExist
	}
	return n, nil
}

func (f *fakeMemory) readsOf(pid int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads[pid]
}

// waitReads waits until pid was read more than n times.
func (f *fakeMemory) waitReads(t *testing.T, pid, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for f.readsOf(pid) <= n {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d not sampled after %d reads", pid, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestAnonPeaks(t *testing.T) {
	mem := &fakeMemory{bytes: map[int]int64{1: 10}, reads: map[int]int{}}
	a := startAnonPeaks(time.Millisecond, mem.read)
	defer a.Stop()

	a.Watch(1)
	a.Watch(2) // never readable: unknown
	mem.set(1, 50)
	mem.waitReads(t, 1, mem.readsOf(1))
	mem.set(1, 20) // the peak was 50 and stays so
	mem.waitReads(t, 1, mem.readsOf(1))
	if got := a.Take(1); got != 50 {
		t.Errorf("peak of 1 = %d, want 50", got)
	}
	if got := a.Take(2); got != 0 {
		t.Errorf("peak of an unreadable process = %d, want 0", got)
	}
	if got := a.Take(3); got != 0 {
		t.Errorf("peak of a process never watched = %d, want 0", got)
	}

	// The final sample of Take counts: a peak reached right before the stop.
	a.Watch(4)
	mem.set(4, 70)
	if got := a.Take(4); got != 70 {
		t.Errorf("peak of 4 = %d, want the final sample 70", got)
	}
	// A process taken is no longer read.
	n := mem.readsOf(1)
	a.Watch(5)
	mem.waitReads(t, 5, mem.readsOf(5)+1)
	if mem.readsOf(1) != n {
		t.Errorf("process 1 read %d more times after Take", mem.readsOf(1)-n)
	}
	a.Stop()
	a.Stop() // idempotent, and goleak in TestMain checks the goroutine ended
}

// On Linux the sampler reads a live child's anonymous memory; elsewhere the
// figure is unknown, 0, and nothing fails.
func TestRssAnonOfChild(t *testing.T) {
	cmd := exec.Command("sh", "-c", "read x || true")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	a := StartAnonPeaks(AnonInterval)
	defer a.Stop()
	a.Watch(cmd.Process.Pid)
	peak := a.Take(cmd.Process.Pid)
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "linux" {
		if peak != 0 {
			t.Errorf("peak anon %d on %s, want 0 (unknown)", peak, runtime.GOOS)
		}
		return
	}
	if peak < 1<<10 || peak > 1<<30 {
		t.Errorf("peak anon %d bytes of sh is implausible", peak)
	}
}
