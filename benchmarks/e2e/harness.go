// SPDX-License-Identifier: Apache-2.0

package e2ebench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Available splits scenarios into those whose binary exists and accepts
// their configuration (`validate --config`) and those that are not
// available, with the reason.
func Available(ctx context.Context, o Options, scenarios []Scenario) ([]Scenario, []Unavailable) {
	var ok []Scenario
	var not []Unavailable
	for _, s := range scenarios {
		bin := o.Collectors[s.Binary]
		if bin == "" {
			not = append(not, Unavailable{s.Name, fmt.Sprintf("no binary for bench-binary %q", s.Binary)})
			continue
		}
		if s.Sidecars > 0 && s.SidecarKind == SidecarSDP && o.Sidecar == "" {
			not = append(not, Unavailable{s.Name, "no sidecar binary"})
			continue
		}
		if s.Sidecars > 0 && s.SidecarKind == SidecarFloor && o.Collectors[FloorBinary] == "" {
			not = append(not, Unavailable{s.Name, "no floor binary for its sidecars"})
			continue
		}
		if err := validate(ctx, bin, s); err != nil {
			not = append(not, Unavailable{s.Name, err.Error()})
			continue
		}
		ok = append(ok, s)
	}
	return ok, not
}

// validate runs `BIN validate --config` on the scenario, with placeholder
// values for the variables the harness sets at run time.
func validate(ctx context.Context, bin string, s Scenario) error {
	cmd := exec.CommandContext(ctx, bin, collectorArgs(s, "validate", "--config", s.Path)...)
	cmd.Env = append(os.Environ(), placeholderEnv(s.Sidecars, s.SidecarKind)...)
	out, err := cmd.CombinedOutput()
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s validate rejects %s: %s", filepath.Base(bin), filepath.Base(s.Path), validateReason(out, err))
}

// placeholderEnv gives every BENCH_* variable a valid value for validate:
// a sidecar's endpoint is a unix socket URL, or HOST:PORT when the sidecars
// are floor servers.
func placeholderEnv(sidecars int, kind string) []string {
	env := []string{
		"BENCH_OTLP_GRPC_ENDPOINT=127.0.0.1:4317",
		"BENCH_OTLP_HTTP_ENDPOINT=127.0.0.1:4318",
		"BENCH_SINK_ENDPOINT=127.0.0.1:4319",
		"BENCH_METRICS_PORT=8888",
	}
	var endpoints []string
	for i := range sidecars {
		e := fmt.Sprintf("unix:///tmp/otelcol-sdp-bench-%d.sock", i)
		if kind == SidecarFloor {
			e = fmt.Sprintf("127.0.0.1:%d", 4320+i)
		}
		endpoints = append(endpoints, e)
	}
	return append(env, endpointsEnv(endpoints)...)
}

// endpointsEnv gives each sidecar's endpoint to the configuration twice:
// one by one (BENCH_SHARDi_ENDPOINT) and as one YAML list
// (MembersVariable), for the configurations whose number of sidecars the
// run chooses.
func endpointsEnv(endpoints []string) []string {
	var env []string
	quoted := make([]string, len(endpoints))
	for i, e := range endpoints {
		env = append(env, fmt.Sprintf("BENCH_SHARD%d_ENDPOINT=%s", i, e))
		quoted[i] = strconv.Quote(e)
	}
	return append(env, MembersVariable+"=["+strings.Join(quoted, ", ")+"]")
}

// validateReason picks the informative part of validate's output: the
// Collector prints "Error: ..." and then the detail on the following lines.
func validateReason(out []byte, err error) string {
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	found := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "Error:") {
			found = true
		}
		if found && line != "" {
			lines = append(lines, line)
		}
	}
	if len(lines) == 0 {
		return err.Error()
	}
	reason := strings.Join(lines, " ")
	// The configuration decoder's preamble says nothing the rest does not.
	if _, detail, ok := strings.Cut(reason, "following error(s): "); ok {
		return detail
	}
	return reason
}

// Plan is a full harness run.
type Plan struct {
	Options
	Scenarios []Scenario // available ones, in report order
	Rounds    int
}

// Run measures every case Rounds times, interleaving the scenarios: each
// round runs every signal and protocol, and for each of those every scenario
// back to back, so slow drifts of the machine hit them alike, except the
// signals a scenario does not carry (Scenario.Carries). A case that fails is
// reported and not run again.
func (p Plan) Run(ctx context.Context) ([]Measurement, []Failure, error) {
	payloads := map[string]Payload{}
	for _, signal := range p.Signals {
		pl, err := NewPayload(signal, p.Shape)
		if err != nil {
			return nil, nil, err
		}
		payloads[signal] = pl
	}
	var (
		ms       []Measurement
		failures []Failure
		failed   = map[string]bool{}
	)
	for round := 1; round <= p.Rounds; round++ {
		for _, signal := range p.Signals {
			for _, protocol := range p.Protocols {
				for _, s := range p.Scenarios {
					c := Case{Scenario: s, Signal: signal, Protocol: protocol}
					if failed[c.String()] || !s.Carries(signal) {
						continue
					}
					if err := ctx.Err(); err != nil {
						return ms, failures, err
					}
					m, err := runCase(ctx, p.Options, c, payloads[signal], 0, nil)
					if err != nil {
						failed[c.String()] = true
						failures = append(failures, Failure{Case: c.String(), Round: round, Err: err})
						fmt.Fprintf(p.Progress, "round %d %-40s FAILED: %v\n", round, c, err)
						continue
					}
					m.Round = round
					ms = append(ms, m)
					fmt.Fprintf(p.Progress, "round %d %-40s %9.0f items/s  CPU s/M: collector %.2f sidecars %.2f  retries %d\n",
						round, c, float64(m.Items)/m.Elapsed.Seconds(), perMillion(m.Collector, m.Items), perMillion(m.Sidecars, m.Items), m.Retries)
				}
			}
		}
	}
	return ms, failures, nil
}

// Profile runs one case with the pprof extension, under load for seconds +
// 2 s, takes a CPU profile of seconds from the Collector into path and
// returns `go tool pprof -top` output, by flat and by cumulative time. A
// heap profile taken right after, still under load, goes next to path,
// PATH-heap.pprof, whose top by bytes in use follows. Each sidecar of the
// case writes a CPU profile of its whole run (warm-up included) next to
// path, PATH-sidecar-N.pprof, whose flat top follows.
func (p Plan) Profile(ctx context.Context, c Case, seconds int, path, goTool string) (string, error) {
	if !c.Scenario.Carries(c.Signal) {
		return "", fmt.Errorf("%s has no %s pipeline (bench-signals: %s)", c.Scenario.Name, c.Signal, strings.Join(c.Scenario.Signals, ","))
	}
	pl, err := NewPayload(c.Signal, p.Shape)
	if err != nil {
		return "", err
	}
	base := strings.TrimSuffix(path, filepath.Ext(path))
	sidecarPath := func(i int) string { return base + fmt.Sprintf("-sidecar-%d.pprof", i) }
	heapPath := base + "-heap.pprof"
	_, err = runCase(ctx, p.Options, c, pl, time.Duration(seconds+2)*time.Second, &profiling{
		fetch: func(endpoint string) error {
			return fetchProfile(ctx, endpoint, time.Second, seconds, path, heapPath)
		},
		sidecar: sidecarPath,
	})
	if err != nil {
		return "", err
	}
	flat, err := pprofTop(goTool, path, 25, false)
	if err != nil {
		return flat, err
	}
	cum, err := pprofTop(goTool, path, 25, true)
	out := flat + "\n" + cum
	if err != nil {
		return out, err
	}
	heap, err := pprofTop(goTool, heapPath, 15, false, "-sample_index=inuse_space")
	out += fmt.Sprintf("\nheap in use (%s):\n%s", heapPath, heap)
	if err != nil {
		return out, err
	}
	for i := range c.Scenario.Sidecars {
		if c.Scenario.SidecarKind == SidecarFloor {
			break // floor sidecars are not profiled
		}
		top, err := pprofTop(goTool, sidecarPath(i), 25, false)
		out += fmt.Sprintf("\nsidecar %d (%s):\n%s", i, sidecarPath(i), top)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}
