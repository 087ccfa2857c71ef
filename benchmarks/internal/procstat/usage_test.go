// SPDX-License-Identifier: Apache-2.0

package procstat

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/procfs"
)

// fakeProc returns a procfs.FS over a directory holding, for each pid, the
// files given (name to content), like /proc/PID/NAME.
func fakeProc(t *testing.T, files map[string]map[string]string) procfs.FS {
	t.Helper()
	root := t.TempDir()
	for pid, byName := range files {
		if err := os.Mkdir(filepath.Join(root, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		for name, content := range byName {
			if err := os.WriteFile(filepath.Join(root, pid, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	fs, err := procfs.NewFS(root)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestCPUTimeFromProcStat(t *testing.T) {
	// A whole stat line as Linux 6.1 prints it: utime 250 and stime 50
	// ticks; the command name holds spaces and a ')'.
	fs := fakeProc(t, map[string]map[string]string{
		"4242": {"stat": "4242 (otelcol sdp) x) S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 50 0 0 20 0 12 0 100 123456789 4567 18446744073709551615 4194304 25000000 140734042289968 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 4194304 4200000 4300000 140734042290881 140734042290901 140734042290901 140734042292203 0\n"},
		"1":    {"stat": "1 no parens"},
		"2":    {"stat": "2 (x) S 1 2"},
		"3":    {"stat": "3 (x) S 1 2 3 4 5 6 7 8 9 10 ab 50 0 0 20 0 12 0 100 123456789 4567 18446744073709551615 4194304 25000000 140734042289968 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 4194304 4200000 4300000 140734042290881 140734042290901 140734042290901 140734042292203 0"},
	})
	got, err := cpuTimeIn(fs, 4242)
	if err != nil {
		t.Fatal(err)
	}
	if want := 3 * time.Second; got != want {
		t.Errorf("got %v, want %v", got, want)
	}
	for _, pid := range []int{1, 2, 3, 4} { // 4: no such process
		if d, err := cpuTimeIn(fs, pid); err == nil {
			t.Errorf("pid %d: %v, no error", pid, d)
		}
	}
}

func TestParsePSTime(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"0:01.23":      1230 * time.Millisecond, // macOS
		"  12:34.50\n": 12*time.Minute + 34500*time.Millisecond,
		"00:00:07":     7 * time.Second, // procps
		"01:02:03":     time.Hour + 2*time.Minute + 3*time.Second,
		"1-02:03:04":   26*time.Hour + 3*time.Minute + 4*time.Second,
	} {
		got, err := parsePSTime(in)
		if err != nil || got != want {
			t.Errorf("parsePSTime(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "7", "a:00", "00:-1", "1:2:3:4", "x-00:01"} {
		if _, err := parsePSTime(bad); err == nil {
			t.Errorf("parsePSTime(%q): no error", bad)
		}
	}
}

func TestUsageAdd(t *testing.T) {
	got := Usage{CPU: time.Second, PeakRSS: 30 << 20, PeakAnon: 7 << 20}.Add(Usage{CPU: 2 * time.Second, PeakRSS: 10 << 20, PeakAnon: 3 << 20})
	if want := (Usage{CPU: 3 * time.Second, PeakRSS: 40 << 20, PeakAnon: 10 << 20}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestMaxRSSBytes(t *testing.T) {
	if got := maxRSSBytes("linux", 2048); got != 2<<20 {
		t.Errorf("linux: %d", got)
	}
	if got := maxRSSBytes("darwin", 2<<20); got != 2<<20 {
		t.Errorf("darwin: %d", got)
	}
}

// CPUTime reads a live child's CPU time, and the rusage Stop returns after
// a graceful exit is at least that much.
func TestCPUTimeAndUsage(t *testing.T) {
	p, err := Start("busy", "sh", []string{"-c",
		"trap 'exit 0' TERM; i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; while :; do sleep 0.01; done"},
		nil, filepath.Join(t.TempDir(), "busy.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	var mid time.Duration
	deadline := time.Now().Add(20 * time.Second)
	for mid == 0 && time.Now().Before(deadline) {
		if mid, err = CPUTime(p.Pid()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := p.Exited(); err != nil {
		t.Fatal(err)
	}
	u, err := p.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if mid == 0 || u.CPU < mid {
		t.Errorf("sampled %v while running, rusage %v at exit", mid, u.CPU)
	}
	if u.PeakRSS < 1<<10 || u.PeakRSS > 1<<30 {
		t.Errorf("peak RSS %d bytes of sh is implausible on %s", u.PeakRSS, runtime.GOOS)
	}
}

// A process that is gone has no CPU time and no memory to read, whichever
// way they are read.
func TestGoneProcess(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if d, err := CPUTime(pid); !errors.Is(err, errNoCPUTime) {
		t.Errorf("CPU time of a reaped process: %v, %v; want errNoCPUTime", d, err)
	}
	n, err := RssAnon(pid)
	if runtime.GOOS == "linux" && !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("RssAnon of a reaped process: %d, %v; want a not-exist error", n, err)
	}
	if err == nil {
		t.Errorf("RssAnon of a reaped process: %d, no error", n)
	}
}

// A process that fails says so, with its log: at once through Exited, and
// through Stop.
func TestProcessThatFails(t *testing.T) {
	p, err := Start("doomed", "sh", []string{"-c", "echo cannot listen >&2; exit 3"}, nil, filepath.Join(t.TempDir(), "doomed.log"))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for p.Exited() == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := p.Exited(); err == nil || !strings.Contains(err.Error(), "doomed exited early") || !strings.Contains(err.Error(), "cannot listen") {
		t.Errorf("Exited: %v", err)
	}
	if _, err := p.Stop(); err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "cannot listen") {
		t.Errorf("Stop: %v", err)
	}
	p.Kill() // nothing left to kill
	if _, err := Start("missing", filepath.Join(t.TempDir(), "no-such-binary"), nil, nil, filepath.Join(t.TempDir(), "m.log")); err == nil {
		t.Error("started a binary that does not exist")
	}
}
