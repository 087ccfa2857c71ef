// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/otelcol-sdp/otelcol-sdp/internal/demo"
	"github.com/otelcol-sdp/otelcol-sdp/test/testbin"
)

// Bounds of the harness: how long processes get to start and stop, and how
// long a scenario waits for acked spans to reach the sidecars.
const (
	startTimeout     = 30 * time.Second
	sidecarStopLimit = 15 * time.Second
	// collectorStopLimit covers the processor's default flush_timeout (10s)
	// and the rest of the Collector's shutdown.
	collectorStopLimit = 40 * time.Second
	deliverTimeout     = 30 * time.Second
)

// faultEnv runs the reference sidecars in mode file, one per shard on a unix
// socket, and the Collector in front of them, each a real binary.
type faultEnv struct {
	t            *testing.T
	dir          string // logs, config, sidecar output
	sidecarBin   string
	collectorBin string
	sidecars     []*sidecarProc
	collector    *testbin.Process
	config       string

	grpcEndpoint string
	healthURL    string
	metricsURL   string
	pprofURL     string
}

type sidecarProc struct {
	socket string
	tcp    string // host:port when it serves TCP instead of socket
	outDir string
	args   []string
	proc   *testbin.Process
}

func (s *sidecarProc) endpoint() string {
	if s.tcp != "" {
		return "tcp://" + s.tcp
	}
	return "unix://" + s.socket
}

// dial connects to the sidecar's endpoint.
func (s *sidecarProc) dial() (net.Conn, error) {
	if s.tcp != "" {
		return net.Dial("tcp", s.tcp)
	}
	return net.Dial("unix", s.socket)
}

// newFaultEnv prepares shards sidecars (not started); extraArgs are added to
// every sidecar's command line.
func newFaultEnv(t *testing.T, shards int, extraArgs ...string) *faultEnv {
	t.Helper()
	e := &faultEnv{
		t:            t,
		dir:          t.TempDir(),
		sidecarBin:   testbin.Path(t, testbin.SidecarEnv),
		collectorBin: testbin.Path(t, testbin.CollectorEnv),
	}
	// Unix socket paths are limited to 108 bytes: t.TempDir's names, made
	// of the test's name, can be longer.
	sockDir, err := os.MkdirTemp("", "sdpfault")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	for i := range shards {
		s := &sidecarProc{
			socket: filepath.Join(sockDir, fmt.Sprintf("s%d.sock", i)),
			outDir: filepath.Join(e.dir, fmt.Sprintf("sidecar-%d-out", i)),
		}
		s.args = append([]string{"-listen", s.endpoint(), "-mode", "file", "-dir", s.outDir, "-stats-interval", "0"}, extraArgs...)
		e.sidecars = append(e.sidecars, s)
	}
	return e
}

// startSidecar starts (or restarts, on the same socket and output
// directory) sidecar i and waits until it accepts connections.
func (e *faultEnv) startSidecar(i int) {
	e.t.Helper()
	s := e.sidecars[i]
	s.proc = testbin.Start(e.t, e.dir, fmt.Sprintf("sidecar-%d", i), e.sidecarBin, s.args, nil)
	s.proc.WaitReady(e.t, startTimeout, func() error {
		conn, err := s.dial()
		if err != nil {
			return err
		}
		return conn.Close()
	})
}

func (e *faultEnv) startSidecars() {
	e.t.Helper()
	for i := range e.sidecars {
		e.startSidecar(i)
	}
}

// outDirs returns the sidecars' output directories.
func (e *faultEnv) outDirs() []string {
	dirs := make([]string, len(e.sidecars))
	for i, s := range e.sidecars {
		dirs[i] = s.outDir
	}
	return dirs
}

// collectorSettings is what a scenario adds to the Collector's
// configuration: lines under processors::sdpshard (indented by four
// spaces), extension definitions (indented by two) and their names.
type collectorSettings struct {
	Processor      string
	Extensions     string
	ExtensionNames []string
}

// writeConfig writes the Collector's configuration: an OTLP/gRPC receiver,
// the sdpshard processor with the sidecars' endpoints and nothing else
// set but what the scenario adds (the defaults are what is under test),
// the debug exporter, health_check, pprof, and the Prometheus endpoint of
// the Collector's own telemetry.
func (e *faultEnv) writeConfig(s collectorSettings) {
	e.t.Helper()
	ports := testbin.FreePorts(e.t, 4)
	host := "127.0.0.1"
	e.grpcEndpoint = net.JoinHostPort(host, strconv.Itoa(ports[0]))
	health := net.JoinHostPort(host, strconv.Itoa(ports[1]))
	pprof := net.JoinHostPort(host, strconv.Itoa(ports[2]))
	e.healthURL = "http://" + health + "/"
	e.pprofURL = "http://" + pprof + "/debug/pprof/"
	e.metricsURL = "http://" + net.JoinHostPort(host, strconv.Itoa(ports[3])) + "/metrics"

	var endpoints []string
	for _, sc := range e.sidecars {
		endpoints = append(endpoints, sc.endpoint())
	}
	var b strings.Builder
	fmt.Fprintf(&b, "receivers:\n  otlp:\n    protocols:\n      grpc:\n        endpoint: %s\n", e.grpcEndpoint)
	fmt.Fprintf(&b, "processors:\n  sdpshard:\n    endpoints: [%s]\n%s", strings.Join(endpoints, ", "), s.Processor)
	b.WriteString("exporters:\n  debug:\n    verbosity: basic\n")
	fmt.Fprintf(&b, "extensions:\n  health_check:\n    endpoint: %s\n  pprof:\n    endpoint: %s\n%s", health, pprof, s.Extensions)
	names := append([]string{"health_check", "pprof"}, s.ExtensionNames...)
	fmt.Fprintf(&b, "service:\n  extensions: [%s]\n", strings.Join(names, ", "))
	fmt.Fprintf(&b, "  telemetry:\n    metrics:\n      readers:\n        - pull:\n            exporter:\n              prometheus:\n                host: %s\n                port: %d\n", host, ports[3])
	b.WriteString("  pipelines:\n    traces:\n      receivers: [otlp]\n      processors: [sdpshard]\n      exporters: [debug]\n")
	e.config = filepath.Join(e.dir, "collector.yaml")
	if err := os.WriteFile(e.config, []byte(b.String()), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// startCollector starts the Collector on the configuration written last
// and waits until its health check answers 200.
func (e *faultEnv) startCollector() {
	e.t.Helper()
	e.collector = testbin.Start(e.t, e.dir, "collector", e.collectorBin, []string{"--config", e.config}, nil)
	e.collector.WaitReady(e.t, startTimeout, func() error { return demo.CheckHealth(e.healthURL) })
}

// metric returns the sum of the Collector's samples named name whose labels
// include match.
func (e *faultEnv) metric(name string, match map[string]string) float64 {
	e.t.Helper()
	v, err := demo.ScrapeSum(e.metricsURL, name, match)
	if err != nil {
		e.t.Fatalf("collector metrics: %v", err)
	}
	return v
}

// collectGarbage makes the Collector run a garbage collection: the pprof
// heap profile does one first when asked with gc=1.
func (e *faultEnv) collectGarbage() {
	e.t.Helper()
	resp, err := http.Get(e.pprofURL + "heap?gc=1")
	if err != nil {
		e.t.Fatalf("collector pprof: %v", err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		e.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("collector pprof heap: %s", resp.Status)
	}
}

// logShutdownReport copies what the Collector logged about items it could
// not deliver at shutdown into the test log, to compare with the lost
// count.
func (e *faultEnv) logShutdownReport() {
	e.t.Helper()
	lines, items := 0, 0
	for line := range strings.Lines(e.collector.Log()) {
		if !strings.Contains(line, "undelivered") {
			continue
		}
		lines++
		if m := loggedItems.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[1])
			items += n
		} else {
			e.t.Logf("collector log: %.600s", strings.TrimSpace(line))
		}
	}
	e.t.Logf("the Collector logged %d lines about undelivered frames at shutdown, %d items in all", lines, items)
}

// loggedItems finds the item count in a JSON log field.
var loggedItems = regexp.MustCompile(`"items": ?(\d+)`)

// stopAll stops the Collector (if running) and then the sidecars (those
// running), cleanly with SIGTERM.
func (e *faultEnv) stopAll() {
	e.t.Helper()
	if e.collector != nil && !e.collector.Exited() {
		e.collector.Stop(e.t, collectorStopLimit)
	}
	for _, s := range e.sidecars {
		if s.proc != nil && !s.proc.Exited() {
			s.proc.Stop(e.t, sidecarStopLimit)
		}
	}
}
