// SPDX-License-Identifier: Apache-2.0

package procstat

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
)

// Usage is the CPU time and peak resident memory of one process.
type Usage struct {
	CPU time.Duration // user + system
	// PeakRSS is the kernel's peak resident set (ru_maxrss), in bytes; 0
	// when unknown. It includes the pages of the binary's code and data the
	// process touched, so a larger binary has a larger PeakRSS.
	PeakRSS int64
	// PeakAnon is the peak anonymous resident memory, in bytes, as AnonPeaks
	// samples it: the process's own memory (heap, stacks, runtime) without
	// the file-backed pages of its binary. 0 when unknown (no /proc, as on
	// macOS). A peak shorter than the sampling interval can be missed.
	PeakAnon int64
}

// Add sums two usages: CPU adds up, and so do the peaks, as upper bounds of
// the processes' joint peaks.
func (u Usage) Add(v Usage) Usage {
	return Usage{CPU: u.CPU + v.CPU, PeakRSS: u.PeakRSS + v.PeakRSS, PeakAnon: u.PeakAnon + v.PeakAnon}
}

// usageOf reads the rusage of an exited process: the kernel's own account of
// what the process used over its lifetime.
func usageOf(state *os.ProcessState) Usage {
	u := Usage{CPU: state.UserTime() + state.SystemTime()}
	if ru, ok := state.SysUsage().(*syscall.Rusage); ok {
		u.PeakRSS = maxRSSBytes(runtime.GOOS, int64(ru.Maxrss))
	}
	return u
}

// maxRSSBytes converts rusage's ru_maxrss to bytes: macOS and iOS report
// bytes, Linux and the BSDs kibibytes.
func maxRSSBytes(goos string, maxrss int64) int64 {
	switch goos {
	case "darwin", "ios":
		return maxrss
	}
	return maxrss * 1024
}

// procFS is /proc, or an error where there is none (macOS).
var procFS = sync.OnceValues(procfs.NewDefaultFS)

// errNoCPUTime means no way to read a running process's CPU time worked.
var errNoCPUTime = errors.New("cannot read the CPU time of a running process on this system")

// CPUTime returns the user + system CPU time process pid has used so far,
// so that the CPU of a startup can be subtracted from the lifetime Usage.
// It reads /proc/PID/stat (Linux) and falls back to ps(1), which macOS and
// the BSDs have; when neither works, as for a process that is gone, the
// error says that the CPU time cannot be read.
func CPUTime(pid int) (time.Duration, error) {
	if fs, err := procFS(); err == nil {
		if d, err := cpuTimeIn(fs, pid); err == nil {
			return d, nil
		}
	}
	out, err := exec.Command("ps", "-o", "time=", "-p", strconv.Itoa(pid)).Output()
	if err != nil {
		return 0, fmt.Errorf("%w: %v", errNoCPUTime, err)
	}
	return parsePSTime(string(out))
}

// userHZ is the unit of /proc/PID/stat's times, clock ticks: 100 on every
// Linux architecture, as procfs also assumes (ProcStat.CPUTime).
const userHZ = 100

// cpuTimeIn reads utime + stime of process pid from /proc/PID/stat in fs.
// The ticks are converted here, not with ProcStat.CPUTime, whose float
// seconds would round a figure that is exact in ticks.
func cpuTimeIn(fs procfs.FS, pid int) (time.Duration, error) {
	p, err := fs.Proc(pid)
	if err != nil {
		return 0, err
	}
	s, err := p.Stat()
	if err != nil {
		return 0, err
	}
	return time.Duration(s.UTime+s.STime) * time.Second / userHZ, nil
}

// parsePSTime reads ps's cumulative CPU time, [[dd-]hh:]mm:ss[.ff]: macOS
// prints e.g. "0:01.23", procps "00:00:01", and long runs "1-02:03:04".
func parsePSTime(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("ps: empty CPU time")
	}
	var days int64
	if d, rest, ok := strings.Cut(s, "-"); ok {
		n, err := strconv.ParseInt(d, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("ps CPU time %q: %w", s, err)
		}
		days, s = n, rest
	}
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, fmt.Errorf("ps CPU time %q: want [hh:]mm:ss", s)
	}
	secs, err := strconv.ParseFloat(parts[len(parts)-1], 64)
	if err != nil || secs < 0 {
		return 0, fmt.Errorf("ps CPU time %q: bad seconds", s)
	}
	total := time.Duration(days) * 24 * time.Hour
	for i, p := range parts[:len(parts)-1] {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("ps CPU time %q: bad field %q", s, p)
		}
		unit := time.Minute
		if len(parts) == 3 && i == 0 {
			unit = time.Hour
		}
		total += time.Duration(n) * unit
	}
	return total + time.Duration(secs*float64(time.Second)), nil
}
