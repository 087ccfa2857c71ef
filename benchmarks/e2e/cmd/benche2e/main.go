// SPDX-License-Identifier: Apache-2.0

// Command benche2e is the end-to-end benchmark of otelcol-sdp: it starts each
// system under test (a Collector configuration in benchmarks/e2e/configs,
// with its sidecars and an OTLP sink), drives it with pre-marshalled OTLP
// over gRPC and HTTP, and reports items/s, CPU seconds per million items,
// peak RSS and peak anonymous memory against a plain otlp → otlp Collector.
// See benchmarks/e2e/README.md.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	e2ebench "github.com/otelcol-sdp/otelcol-sdp/benchmarks/e2e"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("benche2e", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		configs   = fs.String("configs", "benchmarks/e2e/configs", "directory of scenario configurations (*.yaml)")
		only      = fs.String("scenarios", "", "comma-separated scenario names to run (default: all in -configs)")
		collector = fs.String("collector", "bin/otelcol-sdp", "otelcol-sdp binary")
		sidecar   = fs.String("sidecar", "bin/sdp-sidecar", "sdp-sidecar binary")
		plain     = fs.String("plain", "", "plain Collector binary (default: build -plain-manifest with -ocb into -cache)")
		floor     = fs.String("floor", "", "floor server binary (default: build benchmarks/e2e/cmd/otlpfloor with -go)")
		ocb       = fs.String("ocb", ".tools/bin/builder", "ocb binary, to build the plain Collector")
		manifest  = fs.String("plain-manifest", "benchmarks/e2e/plain-builder-config.yaml", "ocb manifest of the plain Collector")
		anchor    = fs.String("anchor", "", "anchor Collector binary, for bench-binary: anchor (default: build -anchor-manifest with -anchor-ocb into -cache, as make tailsampling-anchor does)")
		anchorOCB = fs.String("anchor-ocb", ".tools/ocb-v0.161.0/builder", "ocb binary of the anchor's version")
		anchorMan = fs.String("anchor-manifest", "benchmarks/anchors/tailsampling/builder-config.yaml", "ocb manifest of the anchor Collector")
		cache     = fs.String("cache", defaultCache(), "where the plain Collector is built")
		signals   = fs.String("signals", "traces,metrics,logs", "signals to send: traces, metrics, logs, profiles (profiles only when listed, so that the default runs stay comparable)")
		protocols = fs.String("protocols", "grpc,http", "protocols to send over")
		items     = fs.Int("items", 200000, "items measured per case (rounded up to whole requests)")
		warmup    = fs.Int("warmup", 50, "requests sent before each measurement, not measured")
		clients   = fs.Int("clients", 4, "concurrent clients, one connection each")
		resources = fs.Int("resources", 10, "resources per request")
		perRes    = fs.Int("items-per-resource", 10, "spans, data points, log records or samples per resource")
		payload   = fs.String("payload", e2ebench.PayloadSmall, "item shape: small (5 attributes) or sdk (instrumented-service output, about 1 KB a span)")
		compress  = fs.String("compression", "none", "request compression: none or gzip")
		rounds    = fs.Int("rounds", 3, "rounds; the report shows medians")
		settle    = fs.Duration("settle", 30*time.Second, "how long items may stop arriving before a case fails")
		out       = fs.String("out", "", "also write the report (Markdown) to this file")
		jsonOut   = fs.String("json", "", "also write every case's per-round and median figures and the load shape (JSON, for e2echart) to this file")
		profile   = fs.String("profile", "", "after the rounds, profile the Collector in these cases (comma-separated SCENARIO/SIGNAL/PROTO, e.g. plain/traces/grpc,pdata-divert/traces/grpc)")
		profSecs  = fs.Int("profile-seconds", 5, "length of the CPU profile")
		goTool    = fs.String("go", "go", "go command, for `go tool pprof`")
		perf      = fs.String("perf", "", "perf executable: also count each process's system calls and context switches per request over the measured window (Linux; e.g. -perf perf)")
	)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := bench(ctx, stdout, stderr, benchArgs{
		configs: *configs, only: split(*only), collector: *collector, sidecar: *sidecar, plain: *plain, floor: *floor,
		anchor: *anchor, anchorOCB: *anchorOCB, anchorManifest: *anchorMan,
		ocb: *ocb, manifest: *manifest, cache: *cache, out: *out, jsonOut: *jsonOut, profile: *profile, profSecs: *profSecs,
		goTool: *goTool, rounds: *rounds, cmdline: strings.Join(append([]string{"benche2e"}, args...), " "),
		opts: e2ebench.Options{
			Sidecar: *sidecar, Signals: split(*signals), Protocols: split(*protocols),
			Shape: e2ebench.Shape{Resources: *resources, ItemsPerResource: *perRes, Kind: *payload},
			Items: *items, Warmup: *warmup, Clients: *clients, Compression: compression(*compress), Settle: *settle, Perf: *perf, Progress: stderr,
		},
	}); err != nil {
		fmt.Fprintln(stderr, "benche2e:", err)
		return 1
	}
	return 0
}

type benchArgs struct {
	configs, collector, sidecar, plain, floor, ocb, manifest, cache, out, jsonOut, profile, goTool, cmdline string
	anchor, anchorOCB, anchorManifest                                                                       string
	only                                                                                                    []string
	profSecs, rounds                                                                                        int
	opts                                                                                                    e2ebench.Options
}

func bench(ctx context.Context, stdout, stderr io.Writer, a benchArgs) error {
	all, err := e2ebench.LoadScenarios(a.configs)
	if err != nil {
		return err
	}
	scenarios, err := e2ebench.Select(all, a.only)
	if err != nil {
		return fmt.Errorf("%w (scenarios in %s)", err, a.configs)
	}
	if err := checkValues(a); err != nil {
		return err
	}

	plain := a.plain
	if plain == "" {
		fmt.Fprintf(stderr, "plain Collector: building %s with %s (cached in %s)\n", a.manifest, a.ocb, a.cache)
		if plain, err = e2ebench.BuildPlain(a.ocb, a.manifest, a.cache, stderr); err != nil {
			return err
		}
	}
	if a.opts.WorkDir, err = os.MkdirTemp("", "sdpb"); err != nil {
		return err
	}
	floor := a.floor
	if floor == "" {
		if floor, err = e2ebench.BuildFloor(a.goTool, a.opts.WorkDir, stderr); err != nil {
			return err
		}
	}
	a.opts.Collectors = map[string]string{"plain": plain, "otelcol-sdp": a.collector, e2ebench.FloorBinary: floor}
	if slices.ContainsFunc(scenarios, func(s e2ebench.Scenario) bool { return s.Binary == e2ebench.AnchorBinary }) {
		// Without the anchor its scenarios are reported not available;
		// the others still run.
		if anchor, err := anchorBinary(a, stderr); err != nil {
			fmt.Fprintf(stderr, "anchor Collector: %v\n", err)
		} else {
			a.opts.Collectors[e2ebench.AnchorBinary] = anchor
		}
	}
	// Kept when a case failed: it holds the processes' logs and stats files.
	keep := false
	defer func() {
		if keep {
			fmt.Fprintf(stderr, "logs of the failed cases kept in %s\n", a.opts.WorkDir)
			return
		}
		os.RemoveAll(a.opts.WorkDir)
	}()

	available, unavailable := e2ebench.Available(ctx, a.opts, scenarios)
	for _, u := range unavailable {
		fmt.Fprintf(stderr, "not available: %s: %s\n", u.Scenario, u.Reason)
	}
	skipped := notCarried(available, a.opts.Signals)
	for _, c := range skipped {
		fmt.Fprintf(stderr, "not run: %s: no pipeline for the signal (bench-signals)\n", c)
	}
	plan := e2ebench.Plan{Options: a.opts, Scenarios: available, Rounds: a.rounds}
	started := time.Now().UTC()
	loadBefore := e2ebench.LoadAverage()
	ms, failures, runErr := plan.Run(ctx)
	loadAfter := e2ebench.LoadAverage()

	names := make([]string, len(available))
	baseline, floorName := "", ""
	for i, s := range available {
		names[i] = s.Name
		if s.Baseline {
			baseline = s.Name
		}
		if s.Binary == e2ebench.FloorBinary {
			floorName = s.Name
		}
	}
	var report bytes.Buffer
	writeHeader(&report, a, started, loadBefore, loadAfter)
	rows := e2ebench.Aggregate(ms, names, baseline, floorName)
	if err := e2ebench.WriteMarkdown(&report, rows, unavailable, failures); err != nil {
		return err
	}
	if len(skipped) > 0 {
		fmt.Fprintf(&report, "\nNot run, the scenario having no pipeline for the signal (bench-signals): %s.\n", strings.Join(skipped, ", "))
	}
	report.WriteString("\n")
	if err := e2ebench.WriteTargets(&report, rows, e2ebench.DefaultTargets(baseline, floorName)); err != nil {
		return err
	}
	for _, spec := range split(a.profile) {
		if runErr != nil {
			break
		}
		top, err := profileCase(ctx, plan, available, a, spec)
		if err != nil {
			failures = append(failures, e2ebench.Failure{Case: spec + " (profile)", Err: err})
			fmt.Fprintf(stderr, "profile %s: %v\n%s", spec, err, top)
			continue
		}
		fmt.Fprintf(&report, "\nCPU profile of the Collector, %s, %d s under load:\n\n```\n%s```\n", spec, a.profSecs, top)
	}
	stdout.Write(report.Bytes())
	if a.out != "" {
		if err := os.WriteFile(a.out, report.Bytes(), 0o644); err != nil {
			return err
		}
	}
	if a.jsonOut != "" {
		res := e2ebench.Results{
			Started: started, Command: a.cmdline, Machine: machine(), LoadBefore: loadBefore, LoadAfter: loadAfter,
			Load: e2ebench.LoadShapeOf(plan), Baseline: baseline, Floor: floorName,
			Cases: e2ebench.CaseResultsOf(rows, ms), Unavailable: unavailable, Failures: e2ebench.FailureRecords(failures),
		}
		if err := writeJSON(a.jsonOut, res); err != nil {
			return err
		}
	}
	keep = runErr != nil || len(failures) > 0
	if runErr != nil {
		return runErr
	}
	if len(failures) > 0 {
		return fmt.Errorf("%d case(s) failed", len(failures))
	}
	return nil
}

// anchorBinary is -anchor, or the anchor built (once, cached) from
// -anchor-manifest with -anchor-ocb under the prefix make tailsampling-anchor
// uses, so that both find the same build.
func anchorBinary(a benchArgs, stderr io.Writer) (string, error) {
	if a.anchor != "" {
		return a.anchor, nil
	}
	fmt.Fprintf(stderr, "anchor Collector: building %s with %s (cached in %s)\n", a.anchorManifest, a.anchorOCB, a.cache)
	return e2ebench.BuildCollector(a.anchorOCB, a.anchorManifest, a.cache, "tailsampling", stderr)
}

// notCarried names, as SCENARIO/SIGNAL, the signals of a run that a
// scenario has no pipeline for (Scenario.Carries): their cases are not run.
func notCarried(scenarios []e2ebench.Scenario, signals []string) []string {
	var out []string
	for _, s := range scenarios {
		for _, signal := range signals {
			if !s.Carries(signal) {
				out = append(out, s.Name+"/"+signal)
			}
		}
	}
	return out
}

func checkValues(a benchArgs) error {
	o := a.opts
	switch {
	case a.rounds < 1:
		return errors.New("-rounds must be at least 1")
	case o.Items < 1 || o.Warmup < 1 || o.Clients < 1:
		return errors.New("-items, -warmup and -clients must be at least 1")
	case o.Shape.Resources < 1 || o.Shape.ItemsPerResource < 1:
		return errors.New("-resources and -items-per-resource must be at least 1")
	case !slices.Contains(e2ebench.PayloadKinds, o.Shape.Kind):
		return fmt.Errorf("-payload: unknown kind %q (want one of %s)", o.Shape.Kind, strings.Join(e2ebench.PayloadKinds, ", "))
	case o.Compression != "" && o.Compression != "gzip":
		return fmt.Errorf("-compression: unknown %q (want none or gzip)", o.Compression)
	}
	for _, s := range o.Signals {
		if !slices.Contains(e2ebench.Signals, s) {
			return fmt.Errorf("-signals: unknown signal %q (want some of %s)", s, strings.Join(e2ebench.Signals, ", "))
		}
	}
	for _, p := range o.Protocols {
		if !slices.Contains(e2ebench.Protocols, p) {
			return fmt.Errorf("-protocols: unknown protocol %q", p)
		}
	}
	return nil
}

func profileCase(ctx context.Context, plan e2ebench.Plan, available []e2ebench.Scenario, a benchArgs, spec string) (string, error) {
	parts := strings.Split(spec, "/")
	if len(parts) != 3 || !slices.Contains(e2ebench.Signals, parts[1]) || !slices.Contains(e2ebench.Protocols, parts[2]) {
		return "", fmt.Errorf("-profile %q: want SCENARIO/SIGNAL/PROTO", spec)
	}
	i := slices.IndexFunc(available, func(s e2ebench.Scenario) bool { return s.Name == parts[0] })
	if i < 0 {
		return "", fmt.Errorf("-profile: scenario %q is not available", parts[0])
	}
	path := filepath.Join(os.TempDir(), fmt.Sprintf("benche2e-%s-%s-%s.pprof", parts[0], parts[1], parts[2]))
	if a.out != "" {
		path = strings.TrimSuffix(a.out, filepath.Ext(a.out)) + fmt.Sprintf("-%s-%s-%s.pprof", parts[0], parts[1], parts[2])
	}
	fmt.Fprintf(a.opts.Progress, "profiling %s for %d s into %s\n", spec, a.profSecs, path)
	return plan.Profile(ctx, e2ebench.Case{Scenario: available[i], Signal: parts[1], Protocol: parts[2]}, a.profSecs, path, a.goTool)
}

func writeHeader(w io.Writer, a benchArgs, started time.Time, loadBefore, loadAfter string) {
	o := a.opts
	fmt.Fprintf(w, "benche2e, %s: %s\n", started.Format("2006-01-02 15:04 UTC"), machine())
	fmt.Fprintf(w, "command: %s\n", a.cmdline)
	fmt.Fprintf(w, "machine load average (1, 5, 15 min): %s before, %s after the rounds\n", loadBefore, loadAfter)
	compression := o.Compression
	if compression == "" {
		compression = "none"
	}
	fmt.Fprintf(w, "load: %d items per case in requests of %d resources x %d items (%s payload, compression %s), %d clients, %d warm-up requests; %d round(s), medians with min–max\n\n",
		o.Items, o.Shape.Resources, o.Shape.ItemsPerResource, o.Shape.Kind, compression, o.Clients, o.Warmup, a.rounds)
}

// machine names the platform, its CPUs and the Go version.
func machine() string {
	return fmt.Sprintf("%s/%s, %d CPUs%s, %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), cpuModel(), runtime.Version())
}

func writeJSON(path string, res e2ebench.Results) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := res.WriteJSON(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// compression maps the -compression flag to Options.Compression.
func compression(flag string) string {
	if flag == "none" {
		return ""
	}
	return flag
}

// cpuModel names the processor where the system says it portably enough:
// /proc/cpuinfo on Linux, sysctl on macOS; nothing elsewhere.
func cpuModel() string {
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				return " (" + strings.TrimSpace(v) + ")"
			}
		}
	}
	if out, err := exec.Command("sysctl", "-n", "machdep.cpu.brand_string").Output(); err == nil && len(bytes.TrimSpace(out)) > 0 {
		return " (" + string(bytes.TrimSpace(out)) + ")"
	}
	return ""
}

func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func defaultCache() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "otelcol-sdp-bench")
	}
	return filepath.Join(dir, "otelcol-sdp-bench")
}
