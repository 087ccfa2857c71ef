// SPDX-License-Identifier: Apache-2.0

package e2ebench

import (
	"os/exec"
	"runtime"
	"testing"
	"time"
)

func TestParseProcStat(t *testing.T) {
	// utime 250 and stime 50 ticks; the command name holds spaces and a ')'.
	line := "4242 (otelcol sdp) x) S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 50 0 0 20 0 12 0 100 123456789 4567 18446744073709551615\n"
	got, err := parseProcStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if want := 3 * time.Second; got != want {
		t.Errorf("got %v, want %v", got, want)
	}
	for _, bad := range []string{"4242 no parens", "4242 (x) S 1 2", "4242 (x) S 1 2 3 4 5 6 7 8 9 10 ab 50 0"} {
		if _, err := parseProcStat([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
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

// The sampler reads a live child's CPU time, and the rusage after it exits
// is at least that much.
func TestSampleAndUsage(t *testing.T) {
	cmd := exec.Command("sh", "-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; read x || true")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mid time.Duration
	deadline := time.Now().Add(20 * time.Second)
	for mid == 0 && time.Now().Before(deadline) {
		if mid, err = (cpuSampler{}).sample(cmd.Process.Pid); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	u := usageOf(cmd.ProcessState)
	if mid == 0 || u.CPU < mid {
		t.Errorf("sampled %v while running, rusage %v at exit", mid, u.CPU)
	}
	if u.PeakRSS < 1<<10 || u.PeakRSS > 1<<30 {
		t.Errorf("peak RSS %d bytes of sh is implausible on %s", u.PeakRSS, runtime.GOOS)
	}
}
