// SPDX-License-Identifier: Apache-2.0

package e2ebench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// stopTimeout bounds how long a process may take to exit after SIGTERM.
const stopTimeout = 30 * time.Second

// process is one child of the harness: the Collector or a sidecar.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	err     error // valid once done is closed
}

// startProcess starts bin with args and env (added to the harness's own),
// its stdout and stderr going to logPath.
func startProcess(name, bin string, args, env []string, logPath string) (*process, error) {
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
	p := &process{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		log.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports an error if the process has already stopped.
func (p *process) exited() error {
	select {
	case <-p.done:
		return fmt.Errorf("%s exited early (%v); log %s:\n%s", p.name, p.err, p.logPath, tail(p.logPath, 20))
	default:
		return nil
	}
}

// stop sends SIGTERM, waits for a graceful exit and returns the process's
// rusage. A process that does not exit in time is killed and is an error,
// and so is a non-zero exit status.
func (p *process) stop() (Usage, error) {
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

// kill stops the process without grace, for cleanup after a failure.
func (p *process) kill() {
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// waitDial waits until network/address accepts connections, the process
// exits, or timeout passes.
func waitDial(ctx context.Context, p *process, network, address string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		conn, err := net.DialTimeout(network, address, time.Second)
		if err == nil {
			conn.Close()
			return nil
		}
		if e := p.exited(); e != nil {
			return e
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not listen on %s within %s: %w", p.name, address, timeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// freePorts returns n TCP ports of 127.0.0.1 that were free a moment ago.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var errs []error
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			errs = append(errs, err)
			break
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, errors.Join(errs...)
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
