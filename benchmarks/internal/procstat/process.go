// SPDX-License-Identifier: Apache-2.0

// Package procstat accounts for the CPU time and memory of the processes a
// benchmark measures. It starts a process and stops it gracefully, reading
// the kernel's account of its whole life (rusage: user + system CPU, peak
// RSS); it reads the CPU time a running process has used so far, so that a
// startup can be subtracted; and it samples a running process's anonymous
// resident memory (RssAnon) to keep its peak.
//
// /proc is read with github.com/prometheus/procfs. Where there is no /proc
// (macOS), the CPU time so far comes from ps(1) and the anonymous memory is
// unknown (0).
package procstat

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// stopTimeout bounds how long a process may take to exit after SIGTERM.
const stopTimeout = 30 * time.Second

// Process is a child process started by Start.
type Process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	err     error // valid once done is closed
}

// Start starts bin with args and env (added to the caller's own
// environment), its stdout and stderr going to logPath. name is what errors
// call the process.
func Start(name, bin string, args, env []string, logPath string) (*Process, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Process{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		log.Close()
		close(p.done)
	}()
	return p, nil
}

// Name is the name the process was started with.
func (p *Process) Name() string { return p.name }

// Pid is the process's id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Signal sends sig to the process.
func (p *Process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Exited returns an error, with the end of the process's log, if the
// process has already stopped; nil while it runs.
func (p *Process) Exited() error {
	select {
	case <-p.done:
		return fmt.Errorf("%s exited early (%v); log %s:\n%s", p.name, p.err, p.logPath, tail(p.logPath, 20))
	default:
		return nil
	}
}

// Stop sends SIGTERM, waits for a graceful exit and returns the process's
// rusage. A process that does not exit within stopTimeout is killed and is
// an error, and so is a non-zero exit status. Usage.PeakAnon is left 0: it
// is AnonPeaks's to sample.
func (p *Process) Stop() (Usage, error) {
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(stopTimeout):
			_ = p.cmd.Process.Kill()
			<-p.done
			return usageOf(p.cmd.ProcessState), fmt.Errorf("%s did not stop within %s of SIGTERM; killed", p.name, stopTimeout)
		}
	}
	u := usageOf(p.cmd.ProcessState)
	if p.err != nil {
		return u, fmt.Errorf("%s: %w; log %s:\n%s", p.name, p.err, p.logPath, tail(p.logPath, 20))
	}
	return u, nil
}

// Kill stops the process without grace, for cleanup after a failure. It
// does nothing to a process that has already stopped.
func (p *Process) Kill() {
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// tail returns the last n lines of a file, for error messages.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
