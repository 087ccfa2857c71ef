// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// stopTimeout bounds how long a process may take to exit after SIGTERM.
const stopTimeout = 20 * time.Second

// runner owns the processes of one demo run.
type runner struct {
	opts    Options
	workDir string

	collectorEnv []string
	grpcEndpoint string
	httpEndpoint string
	healthURL    string
	metricsURL   string
	statsFiles   [Shards]string

	// procs are stopped in reverse order: the Collector before the sidecars,
	// so that it can flush what it holds.
	procs []*process
}

type process struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error // valid once done is closed
	log  *os.File
}

func (r *runner) run(ctx context.Context, report *Report) error {
	if err := r.startSidecars(ctx); err != nil {
		return err
	}
	if err := r.startCollector(ctx); err != nil {
		return err
	}
	for _, signal := range Signals {
		for _, protocol := range Protocols {
			res, err := r.runCase(ctx, signal, protocol)
			report.Results = append(report.Results, res)
			if err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *runner) progress(format string, args ...any) {
	fmt.Fprintf(r.opts.Progress, format+"\n", args...)
}

func (r *runner) startSidecars(ctx context.Context) error {
	for shard := range Shards {
		socket := filepath.Join(r.workDir, fmt.Sprintf("shard-%d.sock", shard))
		r.statsFiles[shard] = filepath.Join(r.workDir, fmt.Sprintf("shard-%d-stats.json", shard))
		endpoint := "unix://" + socket
		name := fmt.Sprintf("sidecar-%d", shard)
		p, err := r.start(ctx, name, r.opts.Binaries.Sidecar, sidecarArgs(endpoint, r.statsFiles[shard]), nil)
		if err != nil {
			return err
		}
		if err := waitFor(ctx, p, 15*time.Second, func() error {
			conn, err := net.Dial("unix", socket)
			if err != nil {
				return err
			}
			return conn.Close()
		}); err != nil {
			return fmt.Errorf("%s did not listen on %s: %w", name, endpoint, err)
		}
		r.collectorEnv = append(r.collectorEnv, fmt.Sprintf("SDP_SHARD%d_ENDPOINT=%s", shard, endpoint))
		r.progress("started %s on %s", name, endpoint)
	}
	return nil
}

func (r *runner) startCollector(ctx context.Context) error {
	ports, err := freePorts(5)
	if err != nil {
		return err
	}
	host := "127.0.0.1"
	r.grpcEndpoint = net.JoinHostPort(host, strconv.Itoa(ports[0]))
	r.httpEndpoint = net.JoinHostPort(host, strconv.Itoa(ports[1]))
	health := net.JoinHostPort(host, strconv.Itoa(ports[2]))
	r.healthURL = "http://" + health + "/"
	r.metricsURL = "http://" + net.JoinHostPort(host, strconv.Itoa(ports[3])) + "/metrics"
	r.collectorEnv = append(r.collectorEnv,
		"SDP_OTLP_GRPC_ENDPOINT="+r.grpcEndpoint,
		"SDP_OTLP_HTTP_ENDPOINT="+r.httpEndpoint,
		"SDP_HEALTH_ENDPOINT="+health,
		"SDP_METRICS_HOST="+host,
		"SDP_METRICS_PORT="+strconv.Itoa(ports[3]),
		"SDP_ZPAGES_ENDPOINT="+net.JoinHostPort(host, strconv.Itoa(ports[4])),
	)
	overlay, err := profilesOverlay(r.opts.Config, r.workDir)
	if err != nil {
		return err
	}
	p, err := r.start(ctx, "collector", r.opts.Binaries.Collector, []string{"--config", r.opts.Config, "--config", overlay, profilesGate}, r.collectorEnv)
	if err != nil {
		return err
	}
	if err := waitFor(ctx, p, 60*time.Second, func() error { return CheckHealth(r.healthURL) }); err != nil {
		return fmt.Errorf("collector did not become healthy at %s: %w", r.healthURL, err)
	}
	r.progress("started collector: OTLP gRPC %s, OTLP HTTP %s, metrics %s", r.grpcEndpoint, r.httpEndpoint, r.metricsURL)
	return nil
}

// runCase sends one signal over one protocol, one telemetrygen process per
// service (for profiles, one request per service from the demo itself), and waits until the counts of these services stop short of or
// reach the number sent.
func (r *runner) runCase(ctx context.Context, signal, protocol string) (Result, error) {
	res := Result{Signal: signal, Protocol: protocol, Services: serviceNames(signal, protocol, r.opts.Services)}
	before, err := r.received(signal)
	if err != nil {
		return res, err
	}
	endpoint := r.grpcEndpoint
	if protocol == "http" {
		endpoint = r.httpEndpoint
	}
	var wg sync.WaitGroup
	errs := make([]error, len(res.Services))
	for i, service := range res.Services {
		if signal == "profiles" {
			n, err := sendProfiles(ctx, protocol, endpoint, service, r.opts.Items)
			res.Sent += n
			errs[i] = err
			continue
		}
		args, items := telemetrygenArgs(signal, protocol, endpoint, service, r.opts.Items)
		res.Sent += items
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = r.runToCompletion(ctx, fmt.Sprintf("telemetrygen-%s", service), r.opts.Binaries.Telemetrygen, args)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return res, err
	}

	// The items are counted as they pass the processors and received once
	// the sidecars have them: wait until both reach the number sent, or
	// until they stop moving short of it.
	deadline := time.Now().Add(r.opts.SettleTimeout)
	for {
		counted, err := r.counted(signal, res.Services)
		if err != nil {
			return res, err
		}
		after, err := r.received(signal)
		if err != nil {
			return res, err
		}
		res.Counted = counted
		for shard := range Shards {
			res.Received[shard] = after[shard] - before[shard]
		}
		if res.Balanced() || time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	r.progress("%s over %s: sent %d, counted %d, received %d %v", signal, protocol, res.Sent, res.Counted, res.ReceivedTotal(), res.Received)
	return res, nil
}

// counted sums the wirecount items of the given services for one signal.
func (r *runner) counted(signal string, services []string) (int, error) {
	samples, err := scrape(r.metricsURL)
	if err != nil {
		return 0, err
	}
	total := 0
	for _, s := range samples {
		if !isWirecountItems(s.name) || s.labels["otelcol_signal"] != signal {
			continue
		}
		for _, service := range services {
			if s.labels["service_name"] == service {
				total += int(s.value)
			}
		}
	}
	return total, nil
}

// received reads, per shard, the items the sidecars received of one signal.
func (r *runner) received(signal string) ([Shards]int, error) {
	var out [Shards]int
	for shard, path := range r.statsFiles {
		n, err := sidecarItems(path, signal)
		if err != nil {
			return out, fmt.Errorf("sidecar %d statistics: %w", shard, err)
		}
		out[shard] = n
	}
	return out, nil
}

func (r *runner) start(ctx context.Context, name, bin string, args, env []string) (*process, error) {
	log, err := os.Create(logPath(r.workDir, name))
	if err != nil {
		return nil, err
	}
	// Not CommandContext: the processes are stopped with SIGTERM so that
	// they shut down cleanly, see stopAll.
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout = log
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, done: make(chan struct{}), log: log}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	r.procs = append(r.procs, p)
	return p, nil
}

// runToCompletion runs a short-lived program and returns its failure, with
// the tail of its output.
func (r *runner) runToCompletion(ctx context.Context, name, bin string, args []string) error {
	log := logPath(r.workDir, name)
	out, err := os.Create(log)
	if err != nil {
		return err
	}
	defer out.Close()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s failed: %w\n%s", name, err, tail(log, 20))
	}
	return nil
}

// stopAll stops the long-running processes, newest first, and reports any
// that did not exit cleanly.
func (r *runner) stopAll() error {
	var errs []error
	for i := len(r.procs) - 1; i >= 0; i-- {
		p := r.procs[i]
		if err := p.stop(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w\n%s", p.name, err, tail(p.log.Name(), 20)))
		}
		p.log.Close()
	}
	r.procs = nil
	return errors.Join(errs...)
}

func (p *process) stop() error {
	select {
	case <-p.done:
		return fmt.Errorf("exited early: %v", p.err)
	default:
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case <-p.done:
		var exit *exec.ExitError
		if errors.As(p.err, &exit) {
			return fmt.Errorf("exit after SIGTERM: %w", p.err)
		}
		return nil
	case <-time.After(stopTimeout):
		p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("did not exit within %s of SIGTERM; killed", stopTimeout)
	}
}

// waitFor polls ready until it succeeds, the process exits or the timeout
// passes.
func waitFor(ctx context.Context, p *process, timeout time.Duration, ready func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := ready()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("still not ready after %s: %w\n%s", timeout, err, tail(p.log.Name(), 20))
		}
		select {
		case <-p.done:
			return fmt.Errorf("exited: %v\n%s", p.err, tail(p.log.Name(), 30))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// freePorts asks the kernel for n distinct free TCP ports on the loopback.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	listeners := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("free port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// tail returns the last n lines of a log file, for error messages.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := splitLines(string(b))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	out := "--- " + path + " (tail) ---\n"
	for _, l := range lines {
		out += l + "\n"
	}
	return out
}

// CheckHealth asks the Collector's health_check extension at url and
// returns nil when it answers 200 OK.
func CheckHealth(url string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("health check answered %s", resp.Status)
	}
	return nil
}
