// SPDX-License-Identifier: Apache-2.0

package testbin

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Process is a long-running binary started by a test: its output goes to a
// log file in the test's directory, and it is killed when the test ends if
// it is still running.
type Process struct {
	// Name names the process in messages and its log file.
	Name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error // valid once done is closed
}

// Start starts bin with args (env added to the test's environment), logging
// to dir/<name>.log; a process of the same name started again appends to
// the same log.
func Start(t testing.TB, dir, name, bin string, args, env []string) *Process {
	t.Helper()
	logPath := filepath.Join(dir, name+".log")
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout = log
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		log.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	p := &Process{Name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		log.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		if !p.Exited() {
			cmd.Process.Kill()
		}
		<-p.done
	})
	return p
}

// Pid returns the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Signal sends sig to the process.
func (p *Process) Signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("%s: sending %s: %v", p.Name, sig, err)
	}
}

// Exited reports whether the process has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Wait waits up to timeout for the process to exit and returns its exit
// error (nil for a clean exit); it fails the test, after killing the
// process, if it does not exit in time.
func (p *Process) Wait(t testing.TB, timeout time.Duration) error {
	t.Helper()
	select {
	case <-p.done:
		return p.err
	case <-time.After(timeout):
		p.cmd.Process.Kill()
		<-p.done
		t.Fatalf("%s did not exit within %s; killed\n%s", p.Name, timeout, p.Tail(30))
		return nil
	}
}

// Stop sends SIGTERM and waits up to timeout for a clean exit, failing the
// test otherwise.
func (p *Process) Stop(t testing.TB, timeout time.Duration) {
	t.Helper()
	if p.Exited() {
		t.Fatalf("%s exited before it was stopped: %v\n%s", p.Name, p.err, p.Tail(30))
	}
	p.Signal(t, syscall.SIGTERM)
	if err := p.Wait(t, timeout); err != nil {
		t.Fatalf("%s: exit after SIGTERM: %v\n%s", p.Name, err, p.Tail(30))
	}
}

// Kill sends SIGKILL and waits for the process to be gone.
func (p *Process) Kill(t testing.TB) {
	t.Helper()
	p.Signal(t, syscall.SIGKILL)
	<-p.done
}

// WaitReady polls ready every 50 ms until it succeeds, failing the test if
// the process exits or timeout passes first.
func (p *Process) WaitReady(t testing.TB, timeout time.Duration, ready func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := ready()
		if err == nil {
			return
		}
		if p.Exited() {
			t.Fatalf("%s exited while starting: %v\n%s", p.Name, p.err, p.Tail(30))
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready after %s: %v\n%s", p.Name, timeout, err, p.Tail(30))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Log returns the process's output so far.
func (p *Process) Log() string {
	b, _ := os.ReadFile(p.log)
	return string(b)
}

// Tail returns the last n lines of the process's output, for messages.
func (p *Process) Tail(n int) string {
	tail := TailLines(p.Log(), n)
	return fmt.Sprintf("--- %s (last %d lines) ---\n%s", p.log, strings.Count(tail, "\n")+1, tail)
}

// TailLines returns the last n lines of s.
func TailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// RSS returns the process's resident set size in bytes, from
// /proc/<pid>/status (Linux).
func (p *Process) RSS(t testing.TB) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.Pid()))
	if err != nil {
		t.Fatalf("%s: reading its RSS (Linux /proc): %v", p.Name, err)
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb); err != nil {
				t.Fatalf("%s: VmRSS line %q: %v", p.Name, line, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("%s: no VmRSS in /proc/%d/status", p.Name, p.Pid())
	return 0
}

// FreePorts returns n distinct free TCP ports on 127.0.0.1.
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("free port: %v", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}
