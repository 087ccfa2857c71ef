// SPDX-License-Identifier: Apache-2.0

package e2ebench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/otelcol-sdp/otelcol-sdp/benchmarks/internal/perfstat"
	"github.com/otelcol-sdp/otelcol-sdp/benchmarks/internal/procstat"
)

// Options configure a harness run.
type Options struct {
	// Collectors maps a scenario's bench-binary to the executable.
	Collectors map[string]string
	Sidecar    string // sdp-sidecar executable
	Signals    []string
	Protocols  []string
	Shape      Shape
	Items      int // items each case measures (rounded up to whole requests)
	Warmup     int // requests sent before the measurement, not measured
	Clients    int // concurrent clients
	// Compression of the requests: "" (none) or "gzip".
	Compression string
	// Settle bounds the wait, after the last request was answered, for every
	// item to reach its destinations.
	Settle time.Duration
	// Perf, when not empty, is the perf executable: each case then also
	// counts the system calls and context switches of the Collector and of
	// each sidecar over its measured window (perfstat; Linux only).
	Perf     string
	WorkDir  string    // parent of each case's sockets, logs and stats files
	Progress io.Writer // one line per case
}

// Case is one measured combination.
type Case struct {
	Scenario Scenario
	Signal   string
	Protocol string
}

// String names the case SCENARIO/SIGNAL/PROTO, the form -profile takes.
func (c Case) String() string { return c.Scenario.Name + "/" + c.Signal + "/" + c.Protocol }

// Measurement is the outcome of one case in one round.
type Measurement struct {
	Case
	Round   int           // 1-based; 0 outside Plan.Run's rounds
	Items   int64         // items measured (warm-up excluded)
	Elapsed time.Duration // from the first measured request until every item arrived
	// Collector and Sidecars are the processes' rusage after a graceful
	// stop; when StartupExcluded, minus the CPU they had used by the end of
	// the warm-up. Their PeakAnon is sampled from start to stop.
	Collector       procstat.Usage
	Sidecars        procstat.Usage
	StartupExcluded bool
	Retries         int64
	// Requests is the number of requests measured (warm-up excluded).
	Requests int64
	// Latency is the measured requests' latency percentiles.
	Latency Latency
	// CollectorKernel and SidecarsKernel (summed) are the crossings over
	// the measured window, when KernelCounted (Options.Perf).
	CollectorKernel, SidecarsKernel perfstat.Crossings
	KernelCounted                   bool
}

// profiling is what runCase does to profile a case: fetch is called during
// the load with the Collector's pprof endpoint, and sidecar names the file
// each sidecar writes its own CPU profile to (-cpuprofile) when it stops.
type profiling struct {
	fetch   func(endpoint string) error
	sidecar func(i int) string
}

// runCase starts the system under test of c, drives it and stops it. When
// prof is not nil the Collector runs with the pprof extension, the sidecars
// with -cpuprofile, and prof.fetch is called during the load; the load then
// lasts duration.
func runCase(ctx context.Context, o Options, c Case, payload Payload, duration time.Duration, prof *profiling) (m Measurement, err error) {
	m.Case = c
	dir, err := os.MkdirTemp(o.WorkDir, "case")
	if err != nil {
		return m, err
	}
	sink, err := NewSink()
	if err != nil {
		return m, err
	}
	defer sink.Stop()

	var (
		procs      []*procstat.Process // sidecars, then the Collector
		statsFiles []string
		// countSidecars are the sdp-sidecar processes writing statsFiles.
		countSidecars []*procstat.Process
		endpoints     []string // the sidecars', in order
		// floorSidecarStats are the stats files of floor-kind sidecars.
		floorSidecarStats []string
		floorStats        = filepath.Join(dir, "floor.json")
		env               = []string{"BENCH_SINK_ENDPOINT=" + sink.Endpoint(), "BENCH_FLOOR_STATS_FILE=" + floorStats}
		anon              = procstat.StartAnonPeaks(procstat.AnonInterval)
	)
	defer func() {
		// The sampler stops first: it must not read the pid of a process
		// that has been reaped.
		anon.Stop()
		for _, p := range procs {
			p.Kill()
		}
		if err == nil {
			os.RemoveAll(dir)
		}
	}()
	for i := range c.Scenario.Sidecars {
		if c.Scenario.SidecarKind == SidecarFloor {
			p, stats, endpoint, err := startFloorSidecar(ctx, o, c.Scenario, dir, i)
			if p != nil {
				procs = append(procs, p)
				anon.Watch(p.Pid())
			}
			if err != nil {
				return m, err
			}
			floorSidecarStats = append(floorSidecarStats, stats)
			endpoints = append(endpoints, endpoint)
			continue
		}
		socket := filepath.Join(dir, fmt.Sprintf("s%d.sock", i))
		stats := filepath.Join(dir, fmt.Sprintf("sidecar-%d.json", i))
		args := []string{"-listen", "unix://" + socket, "-mode", "count", "-stats-file", stats, "-stats-interval", "0s"}
		if prof != nil {
			args = append(args, "-cpuprofile", prof.sidecar(i))
		}
		p, err := procstat.Start(fmt.Sprintf("sidecar-%d", i), o.Sidecar, args, nil, filepath.Join(dir, fmt.Sprintf("sidecar-%d.log", i)))
		if err != nil {
			return m, err
		}
		procs = append(procs, p)
		anon.Watch(p.Pid())
		statsFiles = append(statsFiles, stats)
		countSidecars = append(countSidecars, p)
		if err := waitDial(ctx, p, "unix", socket, 15*time.Second); err != nil {
			return m, err
		}
		endpoints = append(endpoints, "unix://"+socket)
	}

	ports, err := freePorts(4)
	if err != nil {
		return m, err
	}
	grpcEndpoint := "127.0.0.1:" + strconv.Itoa(ports[0])
	httpEndpoint := "127.0.0.1:" + strconv.Itoa(ports[1])
	env = append(env, endpointsEnv(endpoints)...)
	env = append(env,
		"BENCH_OTLP_GRPC_ENDPOINT="+grpcEndpoint,
		"BENCH_OTLP_HTTP_ENDPOINT="+httpEndpoint,
		"BENCH_METRICS_PORT="+strconv.Itoa(ports[2]))
	config := c.Scenario.Path
	pprofEndpoint := "127.0.0.1:" + strconv.Itoa(ports[3])
	if prof != nil {
		config = filepath.Join(dir, "config.yaml")
		if err := writeWithPprof(c.Scenario.Path, config, pprofEndpoint); err != nil {
			return m, err
		}
		// The floor server is no Collector: it reads its pprof endpoint
		// from the environment.
		env = append(env, "BENCH_FLOOR_PPROF_ENDPOINT="+pprofEndpoint)
	}
	collector, err := procstat.Start("collector", o.Collectors[c.Scenario.Binary], collectorArgs(c.Scenario, "--config", config), env, filepath.Join(dir, "collector.log"))
	if err != nil {
		return m, err
	}
	procs = append(procs, collector)
	anon.Watch(collector.Pid())
	// The receivers start last, once the pipelines behind them run.
	for _, ep := range []string{grpcEndpoint, httpEndpoint} {
		if err := waitDial(ctx, collector, "tcp", ep, 60*time.Second); err != nil {
			return m, err
		}
	}

	endpoint := grpcEndpoint
	if c.Protocol == "http" {
		endpoint = httpEndpoint
	}
	load := Load{Protocol: c.Protocol, Endpoint: endpoint, Payload: payload, Clients: o.Clients, Compression: o.Compression}
	counts := deliveryCounter{sink: sink, statsFiles: statsFiles, floorSidecarStats: floorSidecarStats, floorStats: floorStats, signal: c.Signal, sidecars: countSidecars}

	// Warm up (connections, pools, the Go heap), let it arrive, then take the
	// CPU already used so that startup and warm-up are not charged to the run.
	load.Requests = o.Warmup
	warm, err := load.Run(ctx)
	if err != nil {
		return m, fmt.Errorf("warm-up: %w", err)
	}
	if _, err := counts.wait(ctx, c.Scenario, warm.Items, o.Settle); err != nil {
		return m, fmt.Errorf("warm-up: %w", err)
	}
	base := make([]time.Duration, len(procs))
	m.StartupExcluded = true
	for i, p := range procs {
		if base[i], err = procstat.CPUTime(p.Pid()); err != nil {
			m.StartupExcluded = false
			clear(base)
			break
		}
	}

	var counters []*perfstat.Counter // indexed like procs
	if o.Perf != "" {
		defer func() {
			for _, k := range counters {
				k.Kill()
			}
		}()
		for _, p := range procs {
			k, err := perfstat.Start(o.Perf, p.Pid(), dir, p.Name())
			if err != nil {
				return m, err
			}
			counters = append(counters, k)
		}
		for _, k := range counters {
			if err := k.Enable(); err != nil {
				return m, err
			}
		}
	}

	load.Requests = (o.Items + payload.Items - 1) / payload.Items
	load.Duration = duration
	profErr := make(chan error, 1)
	if prof != nil {
		go func() { profErr <- prof.fetch(pprofEndpoint) }()
	}
	start := time.Now()
	res, err := load.Run(ctx)
	if err != nil {
		return m, err
	}
	m.Retries = res.Retries
	arrived, err := counts.wait(ctx, c.Scenario, warm.Items+res.Items, o.Settle)
	if err != nil {
		return m, err
	}
	m.Elapsed = arrived.Sub(start)
	m.Requests = res.Requests
	m.Latency = res.Latency
	if len(counters) > 0 {
		if m.CollectorKernel, m.SidecarsKernel, err = countedCrossings(procs, collector, counters); err != nil {
			return m, err
		}
		counters = nil
		m.KernelCounted = true
	}
	if prof != nil {
		if err := <-profErr; err != nil {
			return m, fmt.Errorf("profile: %w", err)
		}
	}

	// Stop the Collector first, so that it hands everything on, then the
	// sidecars, and check the final counts against what was sent.
	var errs []error
	for i := len(procs) - 1; i >= 0; i-- {
		peakAnon := anon.Take(procs[i].Pid())
		u, err := procs[i].Stop()
		errs = append(errs, err)
		u.CPU -= base[i]
		u.PeakAnon = peakAnon
		if procs[i] == collector {
			m.Collector = u
		} else {
			m.Sidecars = m.Sidecars.Add(u)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return m, err
	}
	if err := counts.check(c.Scenario, warm.Items+res.Items); err != nil {
		return m, err
	}
	m.Items = res.Items
	if !m.StartupExcluded {
		m.Items += warm.Items
	}
	return m, nil
}

// profilesGate is the Collector feature gate that allows profiles
// pipelines: the profiles signal is in development on the v0.165 train, and
// a Collector refuses a configuration with a profiles pipeline without it.
// The scenarios in configs/ carry a profiles pipeline beside their traces,
// metrics and logs pipelines, so every Collector, plain or otelcol-sdp (and
// the anchor, whose configuration has none, alike), is validated and started
// with it, whatever signals a run sends.
const profilesGate = "--feature-gates=service.profilesSupport"

// collectorArgs is the command line of the scenario's binary: args, and the
// profiles feature gate for a Collector. The floor server is no Collector
// and takes no feature gates.
func collectorArgs(s Scenario, args ...string) []string {
	if s.Binary == FloorBinary {
		return args
	}
	return append(args, profilesGate)
}

// countedCrossings turns the counters off and reads them: the Collector's,
// and the sum of the others (the sidecars). The counters are stopped
// whatever happens.
func countedCrossings(procs []*procstat.Process, collector *procstat.Process, counters []*perfstat.Counter) (coll, sidecars perfstat.Crossings, err error) {
	var errs []error
	for _, k := range counters {
		errs = append(errs, k.Disable())
	}
	for i, k := range counters {
		c, err := k.Stop()
		errs = append(errs, err)
		if procs[i] == collector {
			coll = c
		} else {
			sidecars = sidecars.Add(c)
		}
	}
	return coll, sidecars, errors.Join(errs...)
}

// startFloorSidecar starts sidecar i of a scenario whose sidecars are floor
// servers (SidecarFloor): the floor binary on two free loopback ports, its
// items counted in its own stats file. It returns the process (nil when it
// did not start), the stats file and the OTLP/gRPC endpoint, HOST:PORT.
// A floor sidecar is not profiled.
func startFloorSidecar(ctx context.Context, o Options, s Scenario, dir string, i int) (*procstat.Process, string, string, error) {
	bin := o.Collectors[FloorBinary]
	if bin == "" {
		return nil, "", "", errors.New("no floor binary for the floor sidecars")
	}
	ports, err := freePorts(2)
	if err != nil {
		return nil, "", "", err
	}
	grpcEndpoint := "127.0.0.1:" + strconv.Itoa(ports[0])
	stats := filepath.Join(dir, fmt.Sprintf("sidecar-%d-floor.json", i))
	env := []string{
		"BENCH_OTLP_GRPC_ENDPOINT=" + grpcEndpoint,
		"BENCH_OTLP_HTTP_ENDPOINT=127.0.0.1:" + strconv.Itoa(ports[1]),
		"BENCH_FLOOR_STATS_FILE=" + stats,
	}
	// The floor reads only its environment; --config must name a readable
	// file, and the scenario is one.
	p, err := procstat.Start(fmt.Sprintf("sidecar-%d", i), bin, []string{"--config", s.Path}, env, filepath.Join(dir, fmt.Sprintf("sidecar-%d.log", i)))
	if err != nil {
		return nil, "", "", err
	}
	if err := waitDial(ctx, p, "tcp", grpcEndpoint, 15*time.Second); err != nil {
		return p, "", "", err
	}
	return p, stats, grpcEndpoint, nil
}
