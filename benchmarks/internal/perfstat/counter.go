// SPDX-License-Identifier: Apache-2.0

// Package perfstat counts a process's trips into the kernel (system calls
// and context switches, Crossings) with `perf stat` attached to it. The
// counters start off; Enable and Disable, each acknowledged by perf through
// its control FIFO, delimit exactly the window that is counted, so that a
// startup, a warm-up and a shutdown are left out. It needs Linux, perf, and
// the right to attach (root, or kernel.perf_event_paranoid at 1 or less).
package perfstat

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// perfTimeout bounds each exchange with perf stat: its start, an enable or
// disable it must acknowledge, and its exit after SIGINT.
const perfTimeout = 10 * time.Second

// perfPoll is how often a wait for perf's answer checks that perf runs.
const perfPoll = 50 * time.Millisecond

// Counter is a `perf stat` attached to one process, started by Start.
type Counter struct {
	cmd      *exec.Cmd
	ctl, ack *os.File
	out      string
	stderr   bytes.Buffer
	done     chan struct{}
	err      error // perf's exit, valid once done is closed
}

// Start attaches perf (the perf executable) to process pid, its counters
// off. name keys the control FIFOs and the output file, which go in dir.
func Start(perf string, pid int, dir, name string) (*Counter, error) {
	ctlPath := filepath.Join(dir, name+".perf-ctl")
	ackPath := filepath.Join(dir, name+".perf-ack")
	for _, p := range []string{ctlPath, ackPath} {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			return nil, fmt.Errorf("perf counter for %s: %w", name, err)
		}
	}
	k := &Counter{out: filepath.Join(dir, name+".perf.csv"), done: make(chan struct{})}
	k.cmd = exec.Command(perf, "stat", "-x", ",", "--delay", "-1", "--control", "fifo:"+ctlPath+","+ackPath,
		"-e", eventList(), "-p", strconv.Itoa(pid), "-o", k.out)
	k.cmd.Stderr = &k.stderr
	if err := k.cmd.Start(); err != nil {
		return nil, fmt.Errorf("perf counter for %s: %w", name, err)
	}
	go func() {
		k.err = k.cmd.Wait()
		close(k.done)
	}()
	// Opened for reading and writing both, neither open waits for perf to
	// open its end; the reads and writes then do, within perfTimeout.
	var err error
	if k.ctl, err = os.OpenFile(ctlPath, os.O_RDWR, 0); err == nil {
		k.ack, err = os.OpenFile(ackPath, os.O_RDWR, 0)
	}
	if err != nil {
		k.Kill()
		return nil, fmt.Errorf("perf counter for %s: %w", name, err)
	}
	return k, nil
}

// Enable turns the counters on, once perf has acknowledged it.
func (k *Counter) Enable() error { return k.command("enable") }

// Disable turns the counters off, once perf has acknowledged it.
func (k *Counter) Disable() error { return k.command("disable") }

// command sends one control command and waits for perf's "ack", checking
// that perf still runs while it waits.
func (k *Counter) command(cmd string) error {
	if _, err := k.ctl.WriteString(cmd + "\n"); err != nil {
		return k.failed(cmd, err)
	}
	var buf [16]byte
	n := 0
	for give := time.Now().Add(perfTimeout); n < 4; {
		if err := k.ack.SetReadDeadline(time.Now().Add(perfPoll)); err != nil {
			return k.failed(cmd, err)
		}
		m, err := k.ack.Read(buf[n:])
		n += m
		switch {
		case err == nil:
		case !errors.Is(err, os.ErrDeadlineExceeded):
			return k.failed(cmd, err)
		case k.exited() || time.Now().After(give):
			return k.failed(cmd, fmt.Errorf("no ack within %v", perfTimeout))
		}
	}
	// perf writes "ack\n" and a NUL.
	if got := string(bytes.Trim(buf[:n], "\x00\n ")); got != "ack" {
		return k.failed(cmd, fmt.Errorf("perf answered %q, want ack", got))
	}
	return nil
}

// exited reports whether perf has exited.
func (k *Counter) exited() bool {
	select {
	case <-k.done:
		return true
	default:
		return false
	}
}

// failed describes a failed exchange with perf, with what perf said.
func (k *Counter) failed(cmd string, err error) error {
	if k.exited() {
		return fmt.Errorf("perf stat %s: %w; perf exited (%v): %s", cmd, err, k.err, bytes.TrimSpace(k.stderr.Bytes()))
	}
	return fmt.Errorf("perf stat %s: %w", cmd, err)
}

// Stop ends perf with SIGINT, which makes it write its counts, and reads
// them: what was counted while the counters were on. An event perf did not
// report is an error, not a zero.
func (k *Counter) Stop() (Crossings, error) {
	defer k.closeFIFOs()
	if err := k.cmd.Process.Signal(os.Interrupt); err != nil && !errors.Is(err, os.ErrProcessDone) {
		k.Kill()
		return Crossings{}, fmt.Errorf("perf stat: %w", err)
	}
	select {
	case <-k.done:
	case <-time.After(perfTimeout):
		k.Kill()
		return Crossings{}, fmt.Errorf("perf stat did not exit within %v of SIGINT", perfTimeout)
	}
	b, err := os.ReadFile(k.out)
	if err != nil {
		return Crossings{}, fmt.Errorf("perf stat exited (%v) without its counts: %w; %s", k.err, err, bytes.TrimSpace(k.stderr.Bytes()))
	}
	c, err := parse(b)
	if err != nil {
		return Crossings{}, fmt.Errorf("%w; perf said: %s", err, bytes.TrimSpace(k.stderr.Bytes()))
	}
	return c, nil
}

// Kill ends perf at once, for the paths where its counts are not wanted.
// It may follow Stop.
func (k *Counter) Kill() {
	_ = k.cmd.Process.Kill()
	<-k.done
	k.closeFIFOs()
}

func (k *Counter) closeFIFOs() {
	for _, f := range []*os.File{k.ctl, k.ack} {
		if f != nil {
			f.Close()
		}
	}
}
