// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"

	"github.com/otelcol-sdp/otelcol-sdp/internal/demo"
	"github.com/otelcol-sdp/otelcol-sdp/test/testbin"
)

// The competitor's side of issue 27's comparison: contrib's loadbalancing
// exporter (in the tail-sampling anchor, an upstream v0.161 Collector) with
// routing_key traceID and its DNS resolver, through the membership change
// TestFleetRoutesByTraceIDThroughAKill puts otelcol-sdp through. The test
// documents what the exporter does; it fails only when the rig did not
// work, never because the exporter lost or split something.

// lbNameServer is the address, port 53, of the DNS server the anchors ask.
// The exporter's DNS resolver asks the system's name servers (a
// net.Resolver with no Dial), so each anchor runs in a mount namespace of its
// own in which /etc/resolv.conf names this server; nothing outside the
// anchor processes changes.
const lbNameServer = "127.0.27.53"

// lbMember is one member behind the exporter: an OTLP/gRPC trace server on
// its own loopback address that keeps every span it received, by span id,
// and answers OK.
type lbMember struct {
	ptraceotlp.UnimplementedGRPCServer
	srv *grpc.Server

	mu       sync.Mutex
	spans    map[spanID]spanAt
	requests int
	twice    int // spans it received more than once
}

func startLBMember(t *testing.T, address string) *lbMember {
	t.Helper()
	lis, err := net.Listen("tcp", address)
	if err != nil {
		t.Fatal(err)
	}
	m := &lbMember{srv: grpc.NewServer(), spans: map[spanID]spanAt{}}
	ptraceotlp.RegisterGRPCServer(m.srv, m)
	go func() { _ = m.srv.Serve(lis) }()
	t.Cleanup(m.kill)
	return m
}

func (m *lbMember) Export(_ context.Context, req ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests++
	for _, rs := range req.Traces().ResourceSpans().All() {
		service, _ := rs.Resource().Attributes().Get("service.name")
		for _, ss := range rs.ScopeSpans().All() {
			for _, span := range ss.Spans().All() {
				id := spanID(span.SpanID())
				if _, ok := m.spans[id]; ok {
					m.twice++
				}
				m.spans[id] = spanAt{Service: service.Str(), Built: span.StartTimestamp().AsTime(), Trace: span.TraceID()}
			}
		}
	}
	return ptraceotlp.NewExportResponse(), nil
}

// kill stops the server at once: open connections are closed and calls in
// progress fail, as when the member's process dies. What it answered OK
// before stays counted as received.
func (m *lbMember) kill() { m.srv.Stop() }

func (m *lbMember) received() (map[spanID]spanAt, int, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[spanID]spanAt, len(m.spans))
	for id, s := range m.spans {
		out[id] = s
	}
	return out, m.requests, m.twice
}

// lbAnchor is one anchor Collector running the loadbalancing exporter.
type lbAnchor struct {
	proc       *testbin.Process
	grpc       string
	metricsURL string
}

// lbSettings are the exporter's settings besides routing and resolving:
// lines of YAML at the exporter's level and at its otlp sub-exporters'.
type lbSettings struct{ exporter, otlp string }

// lbDefaults are the exporter's defaults: no queue or retry of its own, a
// queue and retries in each member's otlp sub-exporter.
var lbDefaults = lbSettings{}

// lbReroute is what the exporter's README advises for endpoints that come
// and go ("resiliency options 1"): a queue and retries at the exporter's
// level, which route a failed batch again over the current members. The
// sub-exporters' queues are off, so that a failure reaches that level
// instead of ending in a queue of a member that is gone.
var lbReroute = lbSettings{
	exporter: `    retry_on_failure:
      enabled: true
    sending_queue:
      enabled: true
`,
	otlp: `        sending_queue:
          enabled: false
`,
}

// startLBAnchor starts anchor i: OTLP/gRPC in, load_balancing out
// (routing_key traceID, the DNS resolver of host:port every 100 ms as the
// fleet rig has sdpshard resolve, settings), in a mount namespace where
// resolv names lbNameServer.
func startLBAnchor(t *testing.T, dir, bin, resolv, host string, port, i int, settings lbSettings) *lbAnchor {
	t.Helper()
	ports := testbin.FreePorts(t, 2)
	a := &lbAnchor{
		grpc:       net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0])),
		metricsURL: "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1])) + "/metrics",
	}
	config := fmt.Sprintf(`receivers:
  otlp:
    protocols:
      grpc:
        endpoint: %s
exporters:
  load_balancing:
    routing_key: traceID
%s    protocol:
      otlp:
%s        tls:
          insecure: true
    resolver:
      dns:
        hostname: %s
        port: "%d"
        interval: 100ms
        timeout: 1s
service:
  telemetry:
    logs:
      level: info
    metrics:
      readers:
        - pull:
            exporter:
              prometheus:
                host: 127.0.0.1
                port: %d
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [load_balancing]
`, a.grpc, settings.exporter, settings.otlp, host, port, ports[1])
	path := filepath.Join(dir, fmt.Sprintf("anchor-%d.yaml", i))
	if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	// unshare runs sh in a new mount namespace; sh binds the test's
	// resolv.conf over /etc/resolv.conf there and becomes the anchor.
	const script = `mount --bind "$1" /etc/resolv.conf && shift && exec "$@"`
	a.proc = testbin.Start(t, dir, fmt.Sprintf("anchor-%d", i), "unshare",
		[]string{"--mount", "--propagation", "private", "sh", "-c", script, "sh", resolv, bin, "--config", path}, nil)
	a.proc.WaitReady(t, startTimeout, func() error {
		conn, err := net.Dial("tcp", a.grpc)
		if err != nil {
			return err
		}
		return conn.Close()
	})
	return a
}

// backends is the number of members the anchor's exporter routes over.
func (a *lbAnchor) backends(t *testing.T) int {
	t.Helper()
	v, err := demo.ScrapeSum(a.metricsURL, "otelcol_loadbalancer_num_backends", nil)
	if err != nil {
		t.Fatalf("anchor metrics: %v", err)
	}
	return int(v)
}

// awaitBackends waits until every anchor routes over n members and
// returns when.
func awaitBackends(t *testing.T, anchors []*lbAnchor, n int) time.Time {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for i, a := range anchors {
		for {
			got := a.backends(t)
			if got == n {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("anchor %d routes over %d members, want %d; its log:\n%s", i, got, n, a.proc.Tail(30))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return time.Now()
}

// lbRigAvailable says why the anchors cannot have a name server of their
// own here, or "" when they can: the mount namespace needs unshare and the
// privilege to mount, the name server port 53.
func lbRigAvailable(t *testing.T) (net.PacketConn, string) {
	t.Helper()
	if out, err := exec.Command("unshare", "--mount", "--propagation", "private", "true").CombinedOutput(); err != nil {
		return nil, fmt.Sprintf("unshare --mount failed (%v: %s): the anchors need a mount namespace (root or CAP_SYS_ADMIN)", err, strings.TrimSpace(string(out)))
	}
	pc, err := net.ListenPacket("udp", net.JoinHostPort(lbNameServer, "53"))
	if err != nil {
		return nil, fmt.Sprintf("the anchors' name server cannot listen on %s:53: %v", lbNameServer, err)
	}
	return pc, ""
}

func skipLoudly(t *testing.T, lines ...string) {
	t.Helper()
	bar := strings.Repeat("*", 72)
	t.Skip(strings.Join(append(append([]string{bar}, lines...), bar), "\n"))
}

// TestLoadBalancingExporterThroughAChange runs two anchor Collectors whose
// loadbalancing exporter routes by trace id over the members the test's DNS
// name lists, 4 -> 5 -> 3 under the load of TestFleetRoutesByTraceID (spans
// of many traces and services a request, the same traces through both
// anchors, every span a unique id): from 4 members one is added, then
// member 1 is killed and removed together with member 4. It reports the
// acknowledged spans no member received, the traces split across members
// while both anchors had the same members and over the whole run, and what
// the load clients were refused. It asserts only that the rig worked.
//
// It runs twice: with the exporter's defaults, and with the settings its
// README advises where members come and go (lbReroute).
func TestLoadBalancingExporterThroughAChange(t *testing.T) {
	if os.Getenv(TailSamplingEnv) == "" {
		skipLoudly(t,
			"SKIPPED: "+TailSamplingEnv+" is not set: the loadbalancing-exporter comparison did NOT run.",
			"  It needs the anchor Collector (upstream v0.161 with load_balancing): set",
			"  "+TailSamplingEnv+" to the path `make -s tailsampling-anchor` prints.")
	}
	anchorBin := testbin.Path(t, TailSamplingEnv)
	t.Run("defaults", func(t *testing.T) { testLoadBalancingThroughAChange(t, anchorBin, lbDefaults) })
	t.Run("reroute", func(t *testing.T) { testLoadBalancingThroughAChange(t, anchorBin, lbReroute) })
}

func testLoadBalancingThroughAChange(t *testing.T, anchorBin string, settings lbSettings) {
	pc, why := lbRigAvailable(t)
	if why != "" {
		skipLoudly(t, "SKIPPED: "+why, "  The loadbalancing-exporter comparison did NOT run.")
	}
	dir := t.TempDir()
	dnsServer := serveFleetDNS(t, fleetHost, pc)
	resolv := filepath.Join(dir, "resolv.conf")
	if err := os.WriteFile(resolv, []byte("nameserver "+lbNameServer+"\noptions timeout:1 attempts:2\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	const n = 5
	var addrs []netip.Addr
	for i := range n {
		addrs = append(addrs, netip.AddrFrom4([4]byte{127, 0, 0, byte(2 + i)}))
	}
	port := fleetPort(t, addrs)
	members := make([]*lbMember, n)
	for i, a := range addrs {
		members[i] = startLBMember(t, net.JoinHostPort(a.String(), strconv.Itoa(port)))
	}
	list := func(idx ...int) {
		var as []netip.Addr
		for _, i := range idx {
			as = append(as, addrs[i])
		}
		dnsServer.set(as...)
	}

	list(0, 1, 2, 3)
	anchors := []*lbAnchor{
		startLBAnchor(t, dir, anchorBin, resolv, fleetHost, port, 0, settings),
		startLBAnchor(t, dir, anchorBin, resolv, fleetHost, port, 1, settings),
	}
	appliedAt := awaitBackends(t, anchors, 4)

	var loads []*load
	for i, a := range anchors {
		loads = append(loads, startLoad(t, a.grpc, loadSettings{
			Senders: 2, Resources: 10, Spans: 4, Services: 200, Interval: 20 * time.Millisecond,
			Timeout: 10 * time.Second, IDBase: uint64(i+1) << 40, TraceSpans: 8,
		}))
	}
	const stable = 4 * time.Second
	const settle, guard = 300 * time.Millisecond, 500 * time.Millisecond
	var windows []window
	hold := func(in []int) {
		time.Sleep(stable)
		windows = append(windows, window{from: appliedAt.Add(settle), to: time.Now().Add(-guard), members: in})
	}
	hold([]int{0, 1, 2, 3})
	list(0, 1, 2, 3, 4)
	appliedAt = awaitBackends(t, anchors, 5)
	hold([]int{0, 1, 2, 3, 4})
	killedAt := time.Now()
	members[1].kill()
	list(0, 2, 3)
	appliedAt = awaitBackends(t, anchors, 3)
	t.Logf("member 1 killed; both anchors routed over the 3 members left %v later", appliedAt.Sub(killedAt).Round(time.Millisecond))
	hold([]int{0, 2, 3})

	var results []loadResult
	for _, l := range loads {
		results = append(results, l.stop())
	}
	for _, a := range anchors {
		a.proc.Stop(t, collectorStopLimit)
	}
	for i, a := range anchors {
		t.Logf("anchor %d: %s", i, droppedBatches(a.proc.Log()))
	}
	at := make([]map[spanID]spanAt, n)
	twice := 0
	for i, m := range members {
		m.kill()
		var requests, dup int
		at[i], requests, dup = m.received()
		twice += dup
		t.Logf("member %d: %d spans in %d requests", i, len(at[i]), requests)
		if len(at[i]) == 0 {
			t.Errorf("member %d received nothing: the exporter never routed to it", i)
		}
	}

	var ackedIDs []map[spanID]struct{}
	for i, res := range results {
		t.Logf("anchor %d load: %s", i, res)
		ackedIDs = append(ackedIDs, res.Acked)
	}
	acked, lost := unreceived(ackedIDs, at)
	if acked == 0 {
		t.Fatal("nothing acknowledged: the rig did not work")
	}
	onMany := 0
	for _, res := range results {
		for id := range res.Acked {
			k := 0
			for c := range at {
				if _, ok := at[c][id]; ok {
					k++
				}
			}
			if k > 1 {
				onMany++
			}
		}
	}

	// Per window (both anchors on the same members): traces, those that
	// came through both anchors, those split, and spans on a non-member.
	type seen struct{ members, anchors map[int]bool }
	all := map[[16]byte]map[int]bool{}
	per := make([]map[[16]byte]*seen, len(windows))
	stray := make([]int, len(windows))
	for w := range per {
		per[w] = map[[16]byte]*seen{}
	}
	for member, spans := range at {
		for id, s := range spans {
			if all[s.Trace] == nil {
				all[s.Trace] = map[int]bool{}
			}
			all[s.Trace][member] = true
			for w, win := range windows {
				if s.Built.Before(win.from) || s.Built.After(win.to) {
					continue
				}
				o := per[w][s.Trace]
				if o == nil {
					o = &seen{members: map[int]bool{}, anchors: map[int]bool{}}
					per[w][s.Trace] = o
				}
				o.members[member] = true
				o.anchors[int(spanIDNumber(id)>>40)-1] = true
				if !containsInt(win.members, member) {
					stray[w]++
				}
			}
		}
	}
	for w, traces := range per {
		both, split := 0, 0
		for _, o := range traces {
			if len(o.anchors) == 2 {
				both++
			}
			if len(o.members) != 1 {
				split++
			}
		}
		t.Logf("window %d (members %v): %d traces, %d through both anchors, %d split, %d spans on a non-member",
			w, windows[w].members, len(traces), both, split, stray[w])
		if len(traces) == 0 {
			t.Errorf("window %d: no trace: the rig did not work", w)
		}
	}
	split := 0
	for _, m := range all {
		if len(m) > 1 {
			split++
		}
	}
	t.Logf("loadbalancing exporter (%s), routing_key traceID, 4 -> 5 -> 3 with member 1 killed: %d spans acknowledged, %d of them lost (%.3f%%); "+
		"%d traces, %d on more than one member; duplicates: %d spans received twice by one member, %d acknowledged spans on more than one member",
		t.Name(), acked, lost, 100*float64(lost)/float64(acked), len(all), split, twice, onMany)
}

// droppedBatches counts the exporter's "Dropping data" errors in an
// anchor's log, by the member's endpoint each names.
func droppedBatches(log string) string {
	by := map[string]int{}
	total := 0
	for _, line := range strings.Split(log, "\n") {
		if !strings.Contains(line, "Dropping data") {
			continue
		}
		total++
		// A sub-exporter names its member; the exporter's own queue does
		// not.
		endpoint := "the exporter's own queue"
		if _, rest, ok := strings.Cut(line, `"endpoint": "`); ok {
			endpoint, _, _ = strings.Cut(rest, `"`)
		}
		if _, rest, ok := strings.Cut(line, `"error": "`); ok {
			reason, _, _ := strings.Cut(rest, `"`)
			endpoint += " (" + reason + ")"
		}
		by[endpoint]++
	}
	if total == 0 {
		return "no batch dropped in its log"
	}
	var parts []string
	for endpoint, n := range by {
		parts = append(parts, fmt.Sprintf("%s: %d", endpoint, n))
	}
	slices.Sort(parts)
	return fmt.Sprintf("%d batches dropped (\"Exporting failed. Dropping data.\"), by member: %s", total, strings.Join(parts, ", "))
}
