// SPDX-License-Identifier: Apache-2.0

// Package demo runs the otelcol-sdp distribution end to end: it starts
// reference sidecars and the Collector (with a profiles pipeline routed like
// its traces pipeline, and the profiles feature gate), sends traces, metrics
// and logs with telemetrygen and profiles of its own over gRPC and HTTP, and
// reports how many items were sent, counted by the wirecount processor and
// received by each sidecar.
//
// `make demo` prints the report (cmd/sdp-demo) and the end-to-end tests in
// test/e2e assert on it, so both exercise the same code.
package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Shards is the number of sidecars the demo starts. The Collector
// configuration names one endpoint per shard through the environment
// variables SDP_SHARD0_ENDPOINT … SDP_SHARD<Shards-1>_ENDPOINT.
const Shards = 2

// Signals are the OTLP signals the demo sends, in order.
var Signals = []string{"traces", "metrics", "logs", "profiles"}

// Protocols are the OTLP transports the demo sends over, in order.
var Protocols = []string{"grpc", "http"}

// ErrMismatch reports that the items sent, counted and received differ.
var ErrMismatch = errors.New("demo: items sent, counted and received differ")

// Binaries locates the programs the demo runs.
type Binaries struct {
	// Collector is the otelcol-sdp binary.
	Collector string
	// Sidecar is the sdp-sidecar binary.
	Sidecar string
	// Telemetrygen is the telemetrygen load generator.
	Telemetrygen string
}

// Check reports, naming each one, the binaries that are missing or not executable.
func (b Binaries) Check() error {
	var errs []error
	for _, bin := range []struct{ what, path string }{
		{"otelcol-sdp collector", b.Collector},
		{"sdp-sidecar", b.Sidecar},
		{"telemetrygen", b.Telemetrygen},
	} {
		if bin.path == "" {
			errs = append(errs, fmt.Errorf("%s: no path given", bin.what))
			continue
		}
		info, err := os.Stat(bin.path)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", bin.what, err))
		case info.IsDir() || info.Mode()&0o111 == 0:
			errs = append(errs, fmt.Errorf("%s: %s is not an executable file", bin.what, bin.path))
		}
	}
	return errors.Join(errs...)
}

// Options configures a demo run.
type Options struct {
	// Binaries are the programs to run.
	Binaries Binaries
	// Config is the Collector configuration file, e.g. examples/gateway.yaml.
	// It must read its endpoints from the environment variables listed in
	// examples/gateway.yaml.
	Config string
	// Items is the number of items each telemetrygen run sends (spans,
	// data points or log records), and the samples of each profiles
	// request. Zero means 200.
	Items int
	// Services is the number of distinct resources (service.name values)
	// sent per signal and protocol, so that the resources spread over the
	// shards. Zero means 4.
	Services int
	// WorkDir receives the processes' logs and the sidecars' sockets and
	// statistics. Empty means a new temporary directory, removed at the end
	// when the run succeeded.
	WorkDir string
	// Progress, when not nil, receives one line per step.
	Progress io.Writer
	// SettleTimeout bounds the wait for the counts to reach the sent
	// numbers after each case. Zero means 30s.
	SettleTimeout time.Duration
}

func (o *Options) setDefaults() {
	if o.Items == 0 {
		o.Items = 200
	}
	if o.Services == 0 {
		o.Services = 4
	}
	if o.SettleTimeout == 0 {
		o.SettleTimeout = 30 * time.Second
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
}

// Result holds the numbers of one signal sent over one protocol.
type Result struct {
	Signal   string
	Protocol string
	// Services are the service.name values the case sent.
	Services []string
	// Sent is the number of items telemetrygen sent.
	Sent int
	// Counted is the number of items the wirecount processor counted for
	// these services, read from the Collector's metrics endpoint.
	Counted int
	// Received holds, per shard, the items the sidecars received for this
	// case.
	Received [Shards]int
}

// ReceivedTotal is the sum of Received over the shards.
func (r Result) ReceivedTotal() int {
	total := 0
	for _, n := range r.Received {
		total += n
	}
	return total
}

// Balanced reports whether sent, counted and received agree.
func (r Result) Balanced() bool {
	return r.Sent > 0 && r.Sent == r.Counted && r.Sent == r.ReceivedTotal()
}

// Report is the outcome of a demo run.
type Report struct {
	Results []Result
	// WorkDir holds the logs of the run.
	WorkDir string
	// Elapsed is the wall time of the run.
	Elapsed time.Duration
}

// Err returns nil when every result is balanced, and otherwise an error
// wrapping ErrMismatch that names each unbalanced case.
func (r *Report) Err() error {
	var bad []string
	for _, res := range r.Results {
		if !res.Balanced() {
			bad = append(bad, fmt.Sprintf("%s/%s sent %d, counted %d, received %d %v",
				res.Signal, res.Protocol, res.Sent, res.Counted, res.ReceivedTotal(), res.Received))
		}
	}
	if len(r.Results) == 0 {
		bad = append(bad, "no case ran")
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: %s", ErrMismatch, strings.Join(bad, "; "))
	}
	return nil
}

// WriteTo writes the report as a table.
func (r *Report) WriteTo(w io.Writer) (int64, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "%-8s %-5s %8s %8s", "signal", "proto", "sent", "counted")
	for i := range Shards {
		fmt.Fprintf(&b, " %8s", fmt.Sprintf("shard%d", i))
	}
	fmt.Fprintf(&b, " %8s\n", "received")
	var sent, counted, received int
	var perShard [Shards]int
	for _, res := range r.Results {
		status := "ok"
		if !res.Balanced() {
			status = "MISMATCH"
		}
		fmt.Fprintf(&b, "%-8s %-5s %8d %8d", res.Signal, res.Protocol, res.Sent, res.Counted)
		for i, n := range res.Received {
			fmt.Fprintf(&b, " %8d", n)
			perShard[i] += n
		}
		fmt.Fprintf(&b, " %8d  %s\n", res.ReceivedTotal(), status)
		sent += res.Sent
		counted += res.Counted
		received += res.ReceivedTotal()
	}
	fmt.Fprintf(&b, "%-8s %-5s %8d %8d", "total", "", sent, counted)
	for _, n := range perShard {
		fmt.Fprintf(&b, " %8d", n)
	}
	fmt.Fprintf(&b, " %8d\n", received)
	n, err := io.WriteString(w, b.String())
	return int64(n), err
}

// Run starts Shards sidecars and the Collector, sends every signal over
// every protocol, waits until the counts settle and returns the report.
// It stops every process it started before returning. A run whose numbers
// differ still returns its report; Report.Err says what differs.
func Run(ctx context.Context, opts Options) (*Report, error) {
	opts.setDefaults()
	if err := opts.Binaries.Check(); err != nil {
		return nil, fmt.Errorf("demo: missing binaries (run `make build tools`): %w", err)
	}
	if _, err := os.Stat(opts.Config); err != nil {
		return nil, fmt.Errorf("demo: collector configuration: %w", err)
	}
	start := time.Now()
	workDir, cleanup, err := prepareWorkDir(opts.WorkDir)
	if err != nil {
		return nil, err
	}
	report := &Report{WorkDir: workDir}

	r := &runner{opts: opts, workDir: workDir}
	runErr := r.run(ctx, report)
	stopErr := r.stopAll()
	report.Elapsed = time.Since(start)
	if err := errors.Join(runErr, stopErr); err != nil {
		return report, fmt.Errorf("demo: %w (logs in %s)", err, workDir)
	}
	if report.Err() == nil {
		cleanup()
	}
	return report, nil
}

func prepareWorkDir(dir string) (string, func(), error) {
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", nil, fmt.Errorf("demo: work dir: %w", err)
		}
		return dir, func() {}, nil
	}
	// Unix socket paths are limited to about 100 bytes: keep it short.
	dir, err := os.MkdirTemp("", "sdp-demo-")
	if err != nil {
		return "", nil, fmt.Errorf("demo: work dir: %w", err)
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}

// serviceNames returns the service.name values of one case; they are
// unique per case so that counts can be attributed to it.
func serviceNames(signal, protocol string, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("sdp-demo-%s-%s-%d", signal, protocol, i)
	}
	return names
}

func logPath(dir, name string) string { return filepath.Join(dir, name+".log") }
