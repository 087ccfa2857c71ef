// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/otelcol-sdp/otelcol-sdp/test/testbin"
)

// TailSamplingEnv names the tail-sampling anchor Collector (an upstream
// v0.161 Collector with contrib's tail_sampling processor and file
// exporter), built by `make tailsampling-anchor`; `make example-two-tier`
// sets it.
const TailSamplingEnv = "TAILSAMPLING_BIN"

// Shape of the two-tier run.
const (
	twoTierGateways  = 2
	twoTierConsumers = 3
	// twoTierDecisionWait is the example consumer's decision_wait.
	twoTierDecisionWait = 5 * time.Second
	twoTierWaves        = 20
	twoTierPerWave      = 30 // traces begun in each wave
	twoTierServices     = 10
)

// TestTwoTierTailSampling runs examples/two-tier-tailsampling as written, on
// the real binaries and on free local ports: two otelcol-sdp gateways
// (gateway.yaml: sdpshard, routing_key traceID, divert) in front of three
// consumers, each an sdp-sidecar in mode forward and the tail-sampling
// anchor Collector (consumer.yaml: tail_sampling keeps traces with an error
// or sample.keep=true, file exporter). The load sends 600 traces of 4 to 8
// spans across 10 services; the first half of every trace's spans goes
// through gateway 0, the rest, with the span that marks a trace for keeping,
// through gateway 1, each request mixing spans of many traces and services.
// Once the consumers have decided, every kept trace must be in the files
// complete (every span, with its service) and on one consumer, and no trace
// that was not marked may be there at all.
func TestTwoTierTailSampling(t *testing.T) {
	anchor := os.Getenv(TailSamplingEnv)
	if anchor == "" {
		t.Skip(strings.Join([]string{
			"************************************************************************",
			"SKIPPED: " + TailSamplingEnv + " is not set: the two-tier example did NOT run.",
			"  It needs the tail-sampling anchor Collector (upstream v0.161 with",
			"  tail_sampling; about 10 minutes of CPU to build once): run",
			"  make example-two-tier (or set " + TailSamplingEnv + " to the path",
			"  `make -s tailsampling-anchor` prints).",
			"************************************************************************",
		}, "\n"))
	}
	anchor = testbin.Path(t, TailSamplingEnv)
	collector := testbin.Path(t, testbin.CollectorEnv)
	sidecar := testbin.Path(t, testbin.SidecarEnv)
	root := testbin.RepoRoot(t)
	example := filepath.Join(root, "examples", "two-tier-tailsampling")
	gatewayConfig := filepath.Join(example, "gateway.yaml")
	consumerConfig := filepath.Join(example, "consumer.yaml")
	requireEnvNames(t, gatewayConfig, "GATEWAY_OTLP_GRPC", "GATEWAY_METRICS_PORT", "CONSUMER_0_SDP", "CONSUMER_1_SDP", "CONSUMER_2_SDP")
	requireEnvNames(t, consumerConfig, "CONSUMER_OTLP_GRPC", "CONSUMER_METRICS_PORT", "CONSUMER_FILE")
	dir := t.TempDir()

	// The consumers: the anchor Collector, then its sidecar forwarding to it.
	var procs []*testbin.Process // in the order they are stopped
	var sdpEndpoints, files []string
	var consumers []*testbin.Process
	for i := range twoTierConsumers {
		ports := testbin.FreePorts(t, 3)
		otlp := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
		file := filepath.Join(dir, fmt.Sprintf("consumer-%d-sampled.jsonl", i))
		p := startTwoTier(t, dir, fmt.Sprintf("consumer-%d", i), anchor, []string{"--config", consumerConfig}, []string{
			"CONSUMER_OTLP_GRPC=" + otlp,
			"CONSUMER_METRICS_PORT=" + strconv.Itoa(ports[1]),
			"CONSUMER_FILE=" + file,
		})
		waitCollectorReady(t, p)
		listen := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[2]))
		sc := startTwoTier(t, dir, fmt.Sprintf("sidecar-%d", i), sidecar, []string{
			"-listen", "tcp://" + listen, "-mode", "forward", "-forward-endpoint", otlp, "-stats-interval", "0",
		}, nil)
		sc.WaitReady(t, startTimeout, func() error {
			c, err := net.Dial("tcp", listen)
			if err == nil {
				c.Close()
			}
			return err
		})
		consumers = append(consumers, p)
		procs = append(procs, sc)
		sdpEndpoints = append(sdpEndpoints, "tcp://"+listen)
		files = append(files, file)
	}
	procs = append(procs, consumers...)

	// The gateways, with the same consumer list in the same order.
	var gateways []string
	var gatewayProcs []*testbin.Process
	for g := range twoTierGateways {
		ports := testbin.FreePorts(t, 2)
		endpoint := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
		env := []string{"GATEWAY_OTLP_GRPC=" + endpoint, "GATEWAY_METRICS_PORT=" + strconv.Itoa(ports[1])}
		for i, ep := range sdpEndpoints {
			env = append(env, fmt.Sprintf("CONSUMER_%d_SDP=%s", i, ep))
		}
		p := startTwoTier(t, dir, fmt.Sprintf("gateway-%d", g), collector, []string{"--config", gatewayConfig}, env)
		waitCollectorReady(t, p)
		gateways = append(gateways, endpoint)
		gatewayProcs = append(gatewayProcs, p)
	}
	procs = append(gatewayProcs, procs...)

	// The load: every request must be answered OK (the gateways wait for
	// the sidecars' Acks, which come once the consumer took the spans).
	plan := newTwoTierPlan()
	var conns []*grpc.ClientConn
	for _, endpoint := range gateways {
		conn, err := grpc.NewClient(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conns = append(conns, conn)
	}
	start := time.Now()
	requests := 0
	for wave := range twoTierWaves {
		for g, conn := range conns {
			req := plan.request(wave, g)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			_, err := ptraceotlp.NewGRPCClient(conn).Export(ctx, ptraceotlp.NewExportRequestFromTraces(req))
			cancel()
			if err != nil {
				t.Fatalf("wave %d through gateway %d: %v\n%s", wave, g, err, gatewayProcs[g].Tail(30))
			}
			requests++
		}
		time.Sleep(100 * time.Millisecond)
	}
	sentFor := time.Since(start)
	keep := plan.kept()
	t.Logf("sent %d traces (%d spans, %d marked for keeping) in %d requests through %d gateways in %s",
		len(plan.traces), plan.spans(), len(keep), requests, len(gateways), sentFor.Round(time.Millisecond))

	// The consumers decide decision_wait after a trace's first span (on a
	// one-second tick) and the file exporter flushes every 200 ms: wait
	// until every kept trace is complete in the files (or a deadline: the
	// checks below then say what is wrong), then a little longer for
	// anything that should not be there.
	deadline := time.Now().Add(twoTierDecisionWait + 30*time.Second)
	for {
		got, err := readTwoTierFiles(files)
		if err != nil {
			t.Fatal(err)
		}
		incomplete := 0
		for _, id := range keep {
			if len(got.spans[id]) < len(plan.traces[id].spans) {
				incomplete++
			}
		}
		if incomplete == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Logf("%s after the last request %d of %d kept traces are not complete in the consumers' files", time.Since(start)-sentFor, incomplete, len(keep))
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(2*time.Second + 500*time.Millisecond)
	got, err := readTwoTierFiles(files)
	if err != nil {
		t.Fatal(err)
	}

	// Every problem is counted; the first few of each kind are shown.
	problems := map[string][]string{}
	problem := func(kind, format string, args ...any) {
		problems[kind] = append(problems[kind], fmt.Sprintf(format, args...))
	}
	perConsumer := make([]int, twoTierConsumers)
	complete, duplicates := 0, 0
	for id, spans := range got.spans {
		want, ok := plan.traces[id]
		if !ok {
			problem("never sent", "trace %x", id)
			continue
		}
		if !want.keep {
			problem("not marked, yet written", "trace %x: %d spans on consumers %v", id, len(spans), keysOf(got.consumers[id]))
			continue
		}
		if len(got.consumers[id]) != 1 {
			problem("split across consumers", "trace %x: on consumers %v", id, keysOf(got.consumers[id]))
		}
		for c := range got.consumers[id] {
			perConsumer[c]++
		}
		for span, service := range spans {
			if w, ok := want.spans[span]; !ok || w != service {
				problem("span not sent or with the wrong service", "trace %x span %d: service %q, want %q", id, span, service, w)
			}
		}
		if len(spans) != len(want.spans) {
			problem("kept incomplete", "trace %x: %d of its %d spans", id, len(spans), len(want.spans))
			continue
		}
		complete++
		duplicates += got.copies[id] - len(spans)
	}
	for _, id := range keep {
		if _, ok := got.spans[id]; !ok {
			problem("marked, yet in no file", "trace %x", id)
		}
	}
	t.Logf("the consumers kept %d complete traces of %d marked (per consumer: %v); %d spans written twice",
		complete, len(keep), perConsumer, duplicates)
	kinds := slices.Sorted(maps.Keys(problems))
	for _, kind := range kinds {
		shown := problems[kind][:min(3, len(problems[kind]))]
		t.Errorf("%s: %d traces, e.g. %s", kind, len(problems[kind]), strings.Join(shown, "; "))
	}
	for c, n := range perConsumer {
		if n == 0 {
			t.Errorf("consumer %d kept no trace: routing by trace id should spread %d traces over every consumer", c, len(keep))
		}
	}

	// Everything stops cleanly: the gateways first, then the sidecars,
	// then the consumers.
	for _, p := range procs {
		p.Stop(t, 30*time.Second)
	}
}

// TestTwoTierGatewayValidates checks the example's gateway configuration
// with otelcol-sdp validate, so that make test catches a broken gateway.yaml
// even when it skips TestTwoTierTailSampling for want of the anchor.
func TestTwoTierGatewayValidates(t *testing.T) {
	collector := testbin.Path(t, testbin.CollectorEnv)
	file := filepath.Join(testbin.RepoRoot(t), "examples", "two-tier-tailsampling", "gateway.yaml")
	out, err := exec.Command(collector, "validate", "--config", file).CombinedOutput()
	if err != nil {
		t.Fatalf("otelcol-sdp validate --config %s: %v\n%s", file, err, out)
	}
}

// twoTierTrace is one trace of the load: its span ids with their services,
// and whether it is marked for keeping.
type twoTierTrace struct {
	spans map[uint64]string
	keep  bool
	wave  int
}

// twoTierPlan holds every trace of the load and builds its requests.
type twoTierPlan struct {
	traces map[[16]byte]*twoTierTrace
	order  [][16]byte
}

// newTwoTierPlan makes twoTierWaves x twoTierPerWave traces. Trace n has
// 4 + n%5 spans, span j in service (3n+j) % twoTierServices, so every trace
// crosses services and every service holds many traces. A third of the
// traces are marked for keeping by their last span: n%6 == 0 with an error
// status, n%6 == 3 with sample.keep=true. n%6 == 1 carries
// sample.keep=false and n%6 == 4 an OK status: neither may be kept.
func newTwoTierPlan() *twoTierPlan {
	p := &twoTierPlan{traces: map[[16]byte]*twoTierTrace{}}
	for wave := range twoTierWaves {
		for k := range twoTierPerWave {
			n := wave*twoTierPerWave + k
			tr := &twoTierTrace{spans: map[uint64]string{}, keep: n%3 == 0, wave: wave}
			for j := range 4 + n%5 {
				tr.spans[twoTierSpanID(n, j)] = fmt.Sprintf("twotier-svc-%d", (3*n+j)%twoTierServices)
			}
			id := twoTierTraceID(n)
			p.traces[id] = tr
			p.order = append(p.order, id)
		}
	}
	return p
}

func twoTierTraceID(n int) [16]byte {
	sum := sha256.Sum256([]byte("two-tier trace " + strconv.Itoa(n)))
	var id [16]byte
	copy(id[:], sum[:])
	return id
}

// twoTierSpanID numbers span j of trace n (never zero).
func twoTierSpanID(n, j int) uint64 { return uint64(n+1)<<8 | uint64(j) }

// request builds the request of a wave for a gateway: gateway 0 gets the
// first half of the spans of each of the wave's traces, gateway 1 the rest
// (with the marking last span). The spans are grouped by service, one
// resource a service, so a request holds many traces in every resource.
func (p *twoTierPlan) request(wave, gateway int) ptrace.Traces {
	td := ptrace.NewTraces()
	byService := map[string]ptrace.SpanSlice{}
	now := pcommon.NewTimestampFromTime(time.Now())
	for k := range twoTierPerWave {
		n := wave*twoTierPerWave + k
		count := 4 + n%5
		from, to := 0, count/2
		if gateway == 1 {
			from, to = count/2, count
		}
		for j := from; j < to; j++ {
			service := fmt.Sprintf("twotier-svc-%d", (3*n+j)%twoTierServices)
			spans, ok := byService[service]
			if !ok {
				rs := td.ResourceSpans().AppendEmpty()
				rs.Resource().Attributes().PutStr("service.name", service)
				ss := rs.ScopeSpans().AppendEmpty()
				ss.Scope().SetName("twotier")
				spans = ss.Spans()
				byService[service] = spans
			}
			span := spans.AppendEmpty()
			span.SetTraceID(pcommon.TraceID(twoTierTraceID(n)))
			var sid [8]byte
			binary.BigEndian.PutUint64(sid[:], twoTierSpanID(n, j))
			span.SetSpanID(pcommon.SpanID(sid))
			if j > 0 {
				var parent [8]byte
				binary.BigEndian.PutUint64(parent[:], twoTierSpanID(n, 0))
				span.SetParentSpanID(pcommon.SpanID(parent))
			}
			span.SetName(fmt.Sprintf("op-%d", j))
			span.SetStartTimestamp(now)
			span.SetEndTimestamp(now)
			if j == count-1 {
				switch n % 6 {
				case 0:
					span.Status().SetCode(ptrace.StatusCodeError)
				case 3:
					span.Attributes().PutStr("sample.keep", "true")
				case 1:
					span.Attributes().PutStr("sample.keep", "false")
				case 4:
					span.Status().SetCode(ptrace.StatusCodeOk)
				}
			}
		}
	}
	return td
}

func (p *twoTierPlan) kept() [][16]byte {
	var out [][16]byte
	for _, id := range p.order {
		if p.traces[id].keep {
			out = append(out, id)
		}
	}
	return out
}

func (p *twoTierPlan) spans() int {
	n := 0
	for _, tr := range p.traces {
		n += len(tr.spans)
	}
	return n
}

// twoTierSeen is what the consumers wrote: per trace, its spans (span id to
// service), the consumers that wrote any of them and how many span records
// there were (more than spans when one was written twice).
type twoTierSeen struct {
	spans     map[[16]byte]map[uint64]string
	consumers map[[16]byte]map[int]bool
	copies    map[[16]byte]int
}

// readTwoTierFiles reads the file exporters' output: one OTLP/JSON request a
// line. A last line without its newline is still being written and is left
// for the next read.
func readTwoTierFiles(files []string) (twoTierSeen, error) {
	s := twoTierSeen{spans: map[[16]byte]map[uint64]string{}, consumers: map[[16]byte]map[int]bool{}, copies: map[[16]byte]int{}}
	var unmarshaler ptrace.JSONUnmarshaler
	for c, file := range files {
		b, err := os.ReadFile(file)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return s, err
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			b = b[:i+1]
		} else {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 64<<20)
		for line := 1; sc.Scan(); line++ {
			if len(bytes.TrimSpace(sc.Bytes())) == 0 {
				continue
			}
			td, err := unmarshaler.UnmarshalTraces(sc.Bytes())
			if err != nil {
				return s, fmt.Errorf("%s line %d: %w", file, line, err)
			}
			for _, rs := range td.ResourceSpans().All() {
				service, _ := rs.Resource().Attributes().Get("service.name")
				for _, ss := range rs.ScopeSpans().All() {
					for _, span := range ss.Spans().All() {
						id := [16]byte(span.TraceID())
						if s.spans[id] == nil {
							s.spans[id] = map[uint64]string{}
							s.consumers[id] = map[int]bool{}
						}
						sid := span.SpanID()
						s.spans[id][binary.BigEndian.Uint64(sid[:])] = service.Str()
						s.consumers[id][c] = true
						s.copies[id]++
					}
				}
			}
		}
		if err := sc.Err(); err != nil {
			return s, fmt.Errorf("%s: %w", file, err)
		}
	}
	return s, nil
}

func keysOf(m map[int]bool) []int {
	var out []int
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// requireEnvNames fails the test when the example's configuration no longer
// reads one of the environment variables the test moves its addresses with.
func requireEnvNames(t *testing.T, file string, names ...string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if !strings.Contains(string(b), "${env:"+name+":-") {
			t.Fatalf("%s does not read ${env:%s:-...}: the test moves its addresses with that variable", file, name)
		}
	}
}

// startTwoTier starts a process of the two-tier rig with env added; at
// cleanup it is stopped with SIGTERM (if the test did not stop it) and,
// when the test failed, its log's tail is shown.
func startTwoTier(t *testing.T, dir, name, bin string, args, env []string) *testbin.Process {
	t.Helper()
	p := testbin.Start(t, dir, name, bin, args, env)
	t.Cleanup(func() {
		if !p.Exited() {
			_ = syscall.Kill(p.Pid(), syscall.SIGTERM)
			_ = p.Wait(t, 20*time.Second)
		}
		if t.Failed() {
			t.Log(p.Tail(40))
		}
	})
	return p
}

// waitCollectorReady waits for a Collector's "Everything is ready" log line.
func waitCollectorReady(t *testing.T, p *testbin.Process) {
	t.Helper()
	p.WaitReady(t, 60*time.Second, func() error {
		if !strings.Contains(p.Log(), "Everything is ready") {
			return errors.New(`no "Everything is ready" in its log yet`)
		}
		return nil
	})
}
