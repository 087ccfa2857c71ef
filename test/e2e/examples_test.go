// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.yaml.in/yaml/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/otelcol-sdp/otelcol-sdp/internal/sidecar"
	"github.com/otelcol-sdp/otelcol-sdp/test/testbin"
)

// TestExamplesRunAsWritten runs every Collector configuration in examples/
// the way its header comment tells a user to, and checks that data reaches
// the sidecars:
//
//   - the header must hold the commands, from the repository root: `mkdir -p`
//     for the sockets' directories, one `bin/sdp-sidecar` per sidecar whose
//     -listen endpoints are exactly the sdpshard endpoints of the file,
//     `bin/otelcol-sdp --config examples/<file>`, and a telemetrygen line;
//   - the test starts those sidecars with those flags and the Collector with
//     the example unchanged, plus a second --config that moves only the
//     addresses to free local ones (sockets in a temporary directory, free
//     ports, the backend exporters to a sink in the test, the Collector's
//     metrics to a free port); an address the test does not know how to
//     move fails the test;
//   - it sends every signal the example has a pipeline for, over OTLP/gRPC,
//     OTLP/HTTP protobuf and OTLP/HTTP JSON (those the receiver serves), each
//     request of six resources of six tenants, and waits until the sidecars'
//     statistics (-stats-file) show exactly the items sent and wirecount's
//     metric counted them; every sidecar must have received some, and only
//     frames of the shards it serves;
//   - it runs the header's telemetrygen line against the Collector and waits
//     for the sidecars' item count of that signal to grow;
//   - it stops the Collector (it must exit cleanly) and, for a divert
//     example, checks that the backend received nothing.
func TestExamplesRunAsWritten(t *testing.T) {
	bins := exampleBins{
		collector:    testbin.Path(t, testbin.CollectorEnv),
		sidecar:      testbin.Path(t, testbin.SidecarEnv),
		telemetrygen: testbin.Path(t, testbin.TelemetrygenEnv),
	}
	root := testbin.RepoRoot(t)
	files, err := filepath.Glob(filepath.Join(root, "examples", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, file := range files {
		if !isCollectorConfig(file) {
			continue
		}
		ran++
		t.Run(filepath.Base(file), func(t *testing.T) { runExample(t, bins, file) })
	}
	if ran == 0 {
		t.Fatal("no Collector configuration found in examples/")
	}
}

type exampleBins struct{ collector, sidecar, telemetrygen string }

// exampleSignals are the signals the test sends, in order.
var exampleSignals = []string{"traces", "metrics", "logs"}

func runExample(t *testing.T, bins exampleBins, file string) {
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	header := parseExampleHeader(string(raw))
	var cfg map[string]any
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatalf("%s: %v", file, err)
	}

	// The header's commands against the file.
	if want := []string{"bin/otelcol-sdp", "--config", "examples/" + filepath.Base(file)}; !slices.Equal(header.collector, want) {
		t.Errorf("the header's Collector command is %q, want %q", strings.Join(header.collector, " "), strings.Join(want, " "))
	}
	shard := exampleShardEndpoints(t, cfg)
	if len(shard.endpoints) == 0 {
		t.Fatal("the example has no sdpshard processor with endpoints: nothing would reach a sidecar")
	}
	if len(header.sidecars) == 0 {
		t.Fatal("the header has no `bin/sdp-sidecar` command")
	}
	listened := map[string]int{}
	for _, argv := range header.sidecars {
		for _, ep := range flagValues(argv, "listen") {
			listened[ep]++
			if path, ok := strings.CutPrefix(ep, "unix://"); ok {
				if dir := filepath.Dir(path); dir != "/tmp" && !slices.Contains(header.mkdirs, dir) {
					t.Errorf("the header starts a sidecar on %s but creates no %s (`mkdir -p %s`): sdp-sidecar does not create it", ep, dir, dir)
				}
			}
		}
	}
	for _, ep := range shard.endpoints {
		if listened[ep] != 1 {
			t.Errorf("sdpshard endpoint %s is served by %d of the header's sidecar commands, want 1", ep, listened[ep])
		}
	}
	for ep := range listened {
		if !slices.Contains(shard.endpoints, ep) {
			t.Errorf("the header starts a sidecar on %s, which no sdpshard endpoint names", ep)
		}
	}
	if len(header.senders) == 0 {
		t.Error("the header shows no telemetrygen command to send the example some telemetry")
	}
	if t.Failed() {
		t.FailNow()
	}

	// Short paths: a unix socket path is limited to about 100 bytes.
	dir, err := os.MkdirTemp("", "sdpex-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) }) // runs last: after the processes stop
	sink := startExampleSink(t)
	ov := exampleOverrides(t, cfg, dir, sink.addr)
	overrides, err := yaml.Marshal(ov.config)
	if err != nil {
		t.Fatal(err)
	}
	overridePath := filepath.Join(dir, "addresses.yaml")
	if err := os.WriteFile(overridePath, overrides, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("moved the addresses with a second --config:\n%s", overrides)

	// The sidecars, as the header starts them, on the moved endpoints and
	// each with a statistics file the test reads.
	var sidecars []exampleSidecar
	for i, argv := range header.sidecars {
		sc := exampleSidecar{stats: filepath.Join(dir, fmt.Sprintf("sidecar-%d.json", i))}
		args := rewriteFlag(argv[1:], "listen", func(v string) string {
			var moved []string
			for _, ep := range strings.Split(v, ",") {
				moved = append(moved, ov.endpoints[ep])
				sc.shards = append(sc.shards, strconv.Itoa(slices.Index(shard.endpoints, ep)))
				sc.endpoints = append(sc.endpoints, ov.endpoints[ep])
			}
			return strings.Join(moved, ",")
		})
		args = rewriteFlag(args, "dir", func(string) string { return filepath.Join(dir, fmt.Sprintf("sidecar-%d-out", i)) })
		args = rewriteFlag(args, "stats-file", func(string) string { return sc.stats })
		args = append(args, "-stats-file", sc.stats, "-stats-interval", "200ms")
		sc.proc = startProc(t, dir, fmt.Sprintf("sidecar-%d", i), bins.sidecar, args...)
		sidecars = append(sidecars, sc)
	}
	for _, sc := range sidecars {
		for _, ep := range sc.endpoints {
			network, addr := "tcp", strings.TrimPrefix(ep, "tcp://")
			if path, ok := strings.CutPrefix(ep, "unix://"); ok {
				network, addr = "unix", path
			}
			sc.proc.WaitReady(t, 30*time.Second, func() error {
				c, err := net.Dial(network, addr)
				if err == nil {
					c.Close()
				}
				return err
			})
		}
	}

	collector := startProc(t, dir, "collector", bins.collector, "--config", file, "--config", overridePath)
	collector.WaitReady(t, 60*time.Second, func() error {
		if !strings.Contains(collector.Log(), "Everything is ready") {
			return errors.New(`no "Everything is ready" in its log yet`)
		}
		return nil
	})

	// Every signal with a pipeline, over every transport the receiver serves.
	var transports []string
	if ov.grpcAddr != "" {
		transports = append(transports, "grpc")
	}
	if ov.httpAddr != "" {
		transports = append(transports, "http", "json")
	}
	var conn *grpc.ClientConn
	if ov.grpcAddr != "" {
		conn, err = grpc.NewClient(ov.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
	}
	sent := map[string]int{}
	for _, signal := range exampleSignals {
		if shard.perSignal[signal] == 0 {
			continue
		}
		for _, transport := range transports {
			req := newExampleRequest(t, signal, fmt.Sprintf("example-%s-%s", signal, transport))
			if err := req.send(conn, "http://"+ov.httpAddr, transport); err != nil {
				t.Fatalf("sending %s over %s: %v\n%s", signal, transport, err, collector.Tail(30))
			}
			sent[signal] += req.items
		}
	}
	if len(sent) == 0 {
		t.Fatal("the example has no pipeline of traces, metrics or logs with an sdpshard processor")
	}

	var last map[string]int
	eventually(t, 30*time.Second, func() error {
		got, err := sidecarItems(sidecars)
		if err != nil {
			return err
		}
		last = got
		var diffs []string
		for signal, n := range sent {
			if want := n * shard.perSignal[signal]; got[signal] != want {
				diffs = append(diffs, fmt.Sprintf("sidecars have %d %s items, want %d", got[signal], signal, want))
			}
			counted, err := metricSum(ov.metricsURL, "otelcol_processor_wirecount_items", `otelcol_signal="`+signal+`"`)
			if err != nil {
				return err
			}
			if want := n * ov.wirecounts[signal]; int(counted) != want {
				diffs = append(diffs, fmt.Sprintf("wirecount counted %v %s items, want %d", counted, signal, want))
			}
		}
		if len(diffs) > 0 {
			return errors.New(strings.Join(diffs, "; "))
		}
		return nil
	})
	t.Logf("sent %v; the sidecars received %v", sent, last)
	for i, sc := range sidecars {
		stats, err := readSidecarStats(sc.stats)
		if err != nil {
			t.Fatal(err)
		}
		if stats.Totals["all"].Items == 0 {
			t.Errorf("sidecar %d (%s) received nothing: the resources of six tenants should spread over every shard", i, strings.Join(header.sidecars[i], " "))
		}
		for s := range stats.Shards {
			if !slices.Contains(sc.shards, s) {
				t.Errorf("sidecar %d serves shards %v but received frames of shard %s", i, sc.shards, s)
			}
		}
	}

	// The header's telemetrygen commands, pointed at the Collector.
	for _, argv := range header.senders {
		if len(argv) < 2 || !slices.Contains(exampleSignals, argv[1]) {
			t.Errorf("telemetrygen command %q: want `telemetrygen traces|metrics|logs ...`", strings.Join(argv, " "))
			continue
		}
		signal := argv[1]
		endpoint := ov.grpcAddr
		if slices.Contains(argv, "--otlp-http") {
			endpoint = ov.httpAddr
		}
		before, err := sidecarItems(sidecars)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, bins.telemetrygen, append(slices.Clone(argv[1:]), "--otlp-endpoint", endpoint)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("%s (on %s): %v\n%s", strings.Join(argv, " "), endpoint, err, testbin.TailLines(string(out), 20))
		}
		eventually(t, 30*time.Second, func() error {
			got, err := sidecarItems(sidecars)
			if err != nil {
				return err
			}
			if got[signal] <= before[signal] {
				return fmt.Errorf("after %q the sidecars still have %d %s items", strings.Join(argv, " "), got[signal], signal)
			}
			return nil
		})
	}

	collector.Stop(t, 60*time.Second)
	if shard.mode == "divert" && ov.backends > 0 {
		if n := sink.items.Load(); n != 0 {
			t.Errorf("the backend received %d items: in divert mode it gets only what no sidecar took, and every resource the test sent fits in a frame", n)
		}
	}
}

// exampleHeader holds the commands of an example's leading comment.
type exampleHeader struct {
	mkdirs    []string   // directories of `mkdir -p` lines
	sidecars  [][]string // `bin/sdp-sidecar ...` lines, without a trailing &
	collector []string   // the `bin/otelcol-sdp ...` line
	senders   [][]string // `.tools/bin/telemetrygen ...` lines
}

// parseExampleHeader reads the comment lines at the top of an example: lines
// ending in a backslash continue on the next one; words are split as a
// shell would for unquoted, 'single-quoted' and "double-quoted" words.
func parseExampleHeader(text string) exampleHeader {
	var h exampleHeader
	var pending string
	for line := range strings.Lines(text) {
		rest, ok := strings.CutPrefix(line, "#")
		if !ok {
			break
		}
		cmd := pending + strings.TrimSpace(rest)
		if c, ok := strings.CutSuffix(cmd, `\`); ok {
			pending = c + " "
			continue
		}
		pending = ""
		argv := shellWords(cmd)
		if n := len(argv); n > 0 && argv[n-1] == "&" {
			argv = argv[:n-1]
		}
		if len(argv) == 0 {
			continue
		}
		switch argv[0] {
		case "mkdir":
			for _, a := range argv[1:] {
				if !strings.HasPrefix(a, "-") {
					h.mkdirs = append(h.mkdirs, filepath.Clean(a))
				}
			}
		case "bin/sdp-sidecar":
			h.sidecars = append(h.sidecars, argv)
		case "bin/otelcol-sdp":
			h.collector = argv
		case ".tools/bin/telemetrygen":
			h.senders = append(h.senders, argv)
		}
	}
	return h
}

func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// flagValues returns the values of a Go flag (-name v, -name=v, --name v).
func flagValues(argv []string, name string) []string {
	var out []string
	for i := 0; i < len(argv); i++ {
		a := strings.TrimPrefix(strings.TrimPrefix(argv[i], "-"), "-")
		if a == argv[i] {
			continue
		}
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			out = append(out, strings.Split(v, ",")...)
		} else if a == name && i+1 < len(argv) {
			out = append(out, strings.Split(argv[i+1], ",")...)
			i++
		}
	}
	return out
}

// rewriteFlag replaces every value of a Go flag in args with fn(value).
func rewriteFlag(args []string, name string, fn func(string) string) []string {
	out := slices.Clone(args)
	for i := 0; i < len(out); i++ {
		a := strings.TrimPrefix(strings.TrimPrefix(out[i], "-"), "-")
		if a == out[i] {
			continue
		}
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			out[i] = "-" + name + "=" + fn(v)
		} else if a == name && i+1 < len(out) {
			out[i+1] = fn(out[i+1])
			i++
		}
	}
	return out
}

// envDefault resolves ${env:NAME:-default} to its default, which is what a
// user who sets no variable runs.
var envDefault = regexp.MustCompile(`^\$\{env:[A-Za-z_][A-Za-z0-9_]*:-(.*)\}$`)

func resolveDefault(v string) string {
	if m := envDefault.FindStringSubmatch(v); m != nil {
		return m[1]
	}
	return v
}

func componentType(id string) string {
	typ, _, _ := strings.Cut(id, "/")
	return typ
}

// mapAt walks nested maps by keys; a missing or non-map step gives nil.
func mapAt(m map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		next, ok := m[k].(map[string]any)
		if !ok {
			return nil
		}
		m = next
	}
	return m
}

// pipelinesOf returns the example's pipelines: id to processors and
// exporters, for the pipelines fed by an otlp receiver.
func pipelinesOf(cfg map[string]any) map[string]struct{ processors, exporters []string } {
	out := map[string]struct{ processors, exporters []string }{}
	for id, p := range mapAt(cfg, "service", "pipelines") {
		pm, _ := p.(map[string]any)
		strs := func(key string) []string {
			var s []string
			list, _ := pm[key].([]any)
			for _, v := range list {
				s = append(s, fmt.Sprint(v))
			}
			return s
		}
		if !slices.ContainsFunc(strs("receivers"), func(r string) bool { return componentType(r) == "otlp" }) {
			continue
		}
		out[id] = struct{ processors, exporters []string }{strs("processors"), strs("exporters")}
	}
	return out
}

// shardSetup is what the example's sdpshard processors ask for.
type shardSetup struct {
	// endpoints are the sdpshard endpoints, defaults of ${env:...} resolved,
	// in order (their index is the shard number).
	endpoints []string
	// perSignal counts, per signal, the sdpshard processors its pipelines
	// run: each forwards every resource once.
	perSignal map[string]int
	// mode is the processors' mode (tee when unset).
	mode string
}

func exampleShardEndpoints(t *testing.T, cfg map[string]any) shardSetup {
	t.Helper()
	s := shardSetup{perSignal: map[string]int{}}
	var ids []string
	for id, p := range mapAt(cfg, "processors") {
		if componentType(id) != "sdpshard" {
			continue
		}
		ids = append(ids, id)
		pm, _ := p.(map[string]any)
		if _, ok := pm["resolver"]; ok {
			t.Fatalf("processors::%s uses a resolver: the test knows only fixed endpoints", id)
		}
		list, _ := pm["endpoints"].([]any)
		for _, ep := range list {
			s.endpoints = append(s.endpoints, resolveDefault(fmt.Sprint(ep)))
		}
		mode := "tee"
		if m, ok := pm["mode"].(string); ok {
			mode = m
		}
		if s.mode != "" && s.mode != mode {
			t.Fatalf("the example's sdpshard processors run in modes %s and %s: the test expects one", s.mode, mode)
		}
		s.mode = mode
	}
	if len(ids) > 1 {
		t.Fatalf("the example has several sdpshard processors (%v): the test knows how to check one", ids)
	}
	for id, p := range pipelinesOf(cfg) {
		for _, proc := range p.processors {
			if componentType(proc) == "sdpshard" {
				s.perSignal[componentType(id)]++
			}
		}
	}
	return s
}

// exampleOverride is the second configuration file that moves an example's
// addresses, and where they went.
type exampleOverride struct {
	config map[string]any
	// endpoints maps each sdpshard endpoint of the example to the test's.
	endpoints          map[string]string
	grpcAddr, httpAddr string
	metricsURL         string
	// wirecounts counts, per signal, the wirecount processors its pipelines run.
	wirecounts map[string]int
	// backends counts the exporters sent to the test's sink.
	backends int
}

func exampleOverrides(t *testing.T, cfg map[string]any, dir, sinkAddr string) exampleOverride {
	t.Helper()
	ov := exampleOverride{config: map[string]any{}, endpoints: map[string]string{}, wirecounts: map[string]int{}}
	moved := map[string]bool{} // paths of the addresses moved
	set := func(value any, path ...string) {
		m := ov.config
		for _, k := range path[:len(path)-1] {
			next, ok := m[k].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[k] = next
			}
			m = next
		}
		m[path[len(path)-1]] = value
		moved[strings.Join(path, "::")] = true
	}
	port := func() string { return freePort(t) }

	for id := range mapAt(cfg, "receivers") {
		if componentType(id) != "otlp" {
			t.Fatalf("receivers::%s: the test knows how to feed only otlp receivers", id)
		}
		if ov.grpcAddr != "" || ov.httpAddr != "" {
			t.Fatalf("receivers::%s: the test knows how to feed one otlp receiver", id)
		}
		if mapAt(cfg, "receivers", id, "protocols", "grpc") != nil {
			ov.grpcAddr = port()
			set(ov.grpcAddr, "receivers", id, "protocols", "grpc", "endpoint")
		}
		if mapAt(cfg, "receivers", id, "protocols", "http") != nil {
			ov.httpAddr = port()
			set(ov.httpAddr, "receivers", id, "protocols", "http", "endpoint")
		}
	}
	for id, p := range mapAt(cfg, "processors") {
		if componentType(id) != "sdpshard" {
			continue
		}
		pm, _ := p.(map[string]any)
		list, _ := pm["endpoints"].([]any)
		var eps []any
		for i, raw := range list {
			ep := resolveDefault(fmt.Sprint(raw))
			u, err := url.Parse(ep)
			if err != nil {
				t.Fatalf("processors::%s::endpoints[%d] %q: %v", id, i, ep, err)
			}
			switch u.Scheme {
			case "unix":
				ov.endpoints[ep] = "unix://" + filepath.Join(dir, fmt.Sprintf("s%d-%s", i, filepath.Base(u.Path)))
			case "tcp":
				ov.endpoints[ep] = "tcp://" + port()
			default:
				t.Fatalf("processors::%s::endpoints[%d] %q: the test knows unix:// and tcp://", id, i, ep)
			}
			eps = append(eps, ov.endpoints[ep])
		}
		set(eps, "processors", id, "endpoints")
	}
	for id := range mapAt(cfg, "exporters") {
		e := mapAt(cfg, "exporters", id)
		if _, ok := e["endpoint"]; !ok {
			continue
		}
		switch componentType(id) {
		case "otlp_grpc", "otlp":
			set(sinkAddr, "exporters", id, "endpoint")
			ov.backends++
		default:
			t.Fatalf("exporters::%s: the test knows how to move only otlp_grpc exporters", id)
		}
	}
	for id := range mapAt(cfg, "extensions") {
		if _, ok := mapAt(cfg, "extensions", id)["endpoint"]; ok {
			set(port(), "extensions", id, "endpoint")
		}
	}
	metricsPort := testbin.FreePorts(t, 1)[0]
	ov.metricsURL = fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)
	set([]any{map[string]any{"pull": map[string]any{"exporter": map[string]any{"prometheus": map[string]any{
		"host": "127.0.0.1", "port": metricsPort,
	}}}}}, "service", "telemetry", "metrics", "readers")

	// Every address of the example must have been moved.
	var walk func(v any, path []string)
	walk = func(v any, path []string) {
		p := strings.Join(path, "::")
		if moved[p] {
			return
		}
		switch v := v.(type) {
		case map[string]any:
			for k, c := range v {
				walk(c, append(slices.Clone(path), k))
			}
		case []any:
			for i, c := range v {
				walk(c, append(slices.Clone(path), strconv.Itoa(i)))
			}
		}
		if last := path[len(path)-1]; last == "endpoint" || last == "endpoints" || last == "host" || last == "port" {
			t.Fatalf("%s: an address the test does not know how to move to a free one", p)
		}
	}
	for k, v := range cfg {
		walk(v, []string{k})
	}

	for id, p := range pipelinesOf(cfg) {
		for _, proc := range p.processors {
			if componentType(proc) == "wirecount" {
				ov.wirecounts[componentType(id)]++
			}
		}
	}
	return ov
}

// exampleSidecar is one sidecar the header starts.
type exampleSidecar struct {
	proc      *testbin.Process
	stats     string
	endpoints []string // the test's endpoints it serves
	shards    []string // the shard numbers of those endpoints
}

func readSidecarStats(path string) (sidecar.Stats, error) {
	var s sidecar.Stats
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil // not written yet: nothing received
	}
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// sidecarItems sums, per signal, the items the sidecars have accepted.
func sidecarItems(sidecars []exampleSidecar) (map[string]int, error) {
	out := map[string]int{}
	for _, sc := range sidecars {
		s, err := readSidecarStats(sc.stats)
		if err != nil {
			return nil, err
		}
		for _, signal := range exampleSignals {
			out[signal] += int(s.Totals[signal].Items)
		}
	}
	return out, nil
}

// exampleRequest is one OTLP request of six resources, each of its own
// tenant (tenant.id) and service, with two items each.
type exampleRequest struct {
	signal string
	items  int
	proto  []byte
	json   []byte
	export func(context.Context, *grpc.ClientConn) error
}

const exampleTenants = 6

func newExampleRequest(t *testing.T, signal, prefix string) exampleRequest {
	t.Helper()
	r := exampleRequest{signal: signal}
	var err error
	tenant := func(i int) string { return fmt.Sprintf("tenant-%d", i) }
	switch signal {
	case "traces":
		td := batch(prefix, exampleTenants, 2)
		for i, rs := range td.ResourceSpans().All() {
			rs.Resource().Attributes().PutStr("tenant.id", tenant(i))
		}
		r.items = td.SpanCount()
		req := ptraceotlp.NewExportRequestFromTraces(td)
		r.proto, err = req.MarshalProto()
		if err == nil {
			r.json, err = (&ptrace.JSONMarshaler{}).MarshalTraces(td)
		}
		r.export = func(ctx context.Context, conn *grpc.ClientConn) error {
			_, err := ptraceotlp.NewGRPCClient(conn).Export(ctx, req)
			return err
		}
	case "metrics":
		md := metricsRequest(prefix, exampleTenants, 2)
		for i, rm := range md.ResourceMetrics().All() {
			rm.Resource().Attributes().PutStr("tenant.id", tenant(i))
		}
		r.items = md.DataPointCount()
		req := pmetricotlp.NewExportRequestFromMetrics(md)
		r.proto, err = req.MarshalProto()
		if err == nil {
			r.json, err = (&pmetric.JSONMarshaler{}).MarshalMetrics(md)
		}
		r.export = func(ctx context.Context, conn *grpc.ClientConn) error {
			_, err := pmetricotlp.NewGRPCClient(conn).Export(ctx, req)
			return err
		}
	case "logs":
		ld := logsRequest(prefix, exampleTenants, 2)
		for i, rl := range ld.ResourceLogs().All() {
			rl.Resource().Attributes().PutStr("tenant.id", tenant(i))
		}
		r.items = ld.LogRecordCount()
		req := plogotlp.NewExportRequestFromLogs(ld)
		r.proto, err = req.MarshalProto()
		if err == nil {
			r.json, err = (&plog.JSONMarshaler{}).MarshalLogs(ld)
		}
		r.export = func(ctx context.Context, conn *grpc.ClientConn) error {
			_, err := plogotlp.NewGRPCClient(conn).Export(ctx, req)
			return err
		}
	default:
		t.Fatalf("unknown signal %q", signal)
	}
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// send sends the request over transport: grpc, http (protobuf) or json.
func (r exampleRequest) send(conn *grpc.ClientConn, httpBase, transport string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var code int
	var err error
	switch transport {
	case "grpc":
		return r.export(ctx, conn)
	case "http":
		code, _, err = postOTLP(ctx, httpBase+"/v1/"+r.signal, "application/x-protobuf", r.proto, false)
	case "json":
		code, _, err = postOTLP(ctx, httpBase+"/v1/"+r.signal, "application/json", r.json, false)
	default:
		return fmt.Errorf("unknown transport %q", transport)
	}
	if err == nil && code != http.StatusOK {
		err = fmt.Errorf("HTTP status %d", code)
	}
	return err
}

// exampleSink is an OTLP/gRPC server standing in for the examples' backend:
// it accepts every request and counts the items.
type exampleSink struct {
	addr  string
	items atomic.Int64
}

type sinkTraces struct {
	ptraceotlp.UnimplementedGRPCServer
	s *exampleSink
}

func (h sinkTraces) Export(_ context.Context, req ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	h.s.items.Add(int64(req.Traces().SpanCount()))
	return ptraceotlp.NewExportResponse(), nil
}

type sinkMetrics struct {
	pmetricotlp.UnimplementedGRPCServer
	s *exampleSink
}

func (h sinkMetrics) Export(_ context.Context, req pmetricotlp.ExportRequest) (pmetricotlp.ExportResponse, error) {
	h.s.items.Add(int64(req.Metrics().DataPointCount()))
	return pmetricotlp.NewExportResponse(), nil
}

type sinkLogs struct {
	plogotlp.UnimplementedGRPCServer
	s *exampleSink
}

func (h sinkLogs) Export(_ context.Context, req plogotlp.ExportRequest) (plogotlp.ExportResponse, error) {
	h.s.items.Add(int64(req.Logs().LogRecordCount()))
	return plogotlp.NewExportResponse(), nil
}

func startExampleSink(t *testing.T) *exampleSink {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &exampleSink{addr: l.Addr().String()}
	srv := grpc.NewServer()
	ptraceotlp.RegisterGRPCServer(srv, &sinkTraces{s: s})
	pmetricotlp.RegisterGRPCServer(srv, &sinkMetrics{s: s})
	plogotlp.RegisterGRPCServer(srv, &sinkLogs{s: s})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(l)
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-done
	})
	return s
}
