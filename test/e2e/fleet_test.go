// SPDX-License-Identifier: Apache-2.0

//go:build e2e

// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/otelcol-sdp/otelcol-sdp/internal/demo"
	"github.com/otelcol-sdp/otelcol-sdp/test/testbin"
)

// fleetHost is the DNS name of the consumers' headless Service in the test.
const fleetHost = "consumers.fleet.test"

// fleetRig runs the consumers (reference sidecars in mode file, each on its
// own loopback address and the same port, with mutual TLS) and two
// gateways whose sdpshard processors find the consumers through the
// test's DNS server.
type fleetRig struct {
	t          *testing.T
	dir        string
	dns        *fleetDNS
	port       int
	certs      fleetCerts
	sidecarBin string
	addrs      []netip.Addr
	sidecars   []*testbin.Process
	outDirs    []string
	gateways   []*fleetGateway
	// static lists the consumers as an endpoints list instead of the DNS
	// resolver; ejection, when set, is the sdpshard processor's ejection
	// block (indented under it).
	static   bool
	ejection string
	// routingKey, when set, is the processor's routing_key.
	routingKey string
}

type fleetGateway struct {
	proc       *testbin.Process
	grpc       string
	health     string
	metricsURL string
}

// fleetPort finds a TCP port free on every address.
func fleetPort(t *testing.T, addrs []netip.Addr) int {
	t.Helper()
	for range 20 {
		l, err := net.Listen("tcp", net.JoinHostPort(addrs[0].String(), "0"))
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		free := true
		var others []net.Listener
		for _, a := range addrs[1:] {
			o, err := net.Listen("tcp", net.JoinHostPort(a.String(), strconv.Itoa(port)))
			if err != nil {
				free = false
				break
			}
			others = append(others, o)
		}
		l.Close()
		for _, o := range others {
			o.Close()
		}
		if free {
			return port
		}
	}
	t.Fatal("no TCP port free on every fleet address")
	return 0
}

func newFleetRig(t *testing.T, members int) *fleetRig {
	t.Helper()
	r := &fleetRig{t: t, dir: t.TempDir(), sidecarBin: testbin.Path(t, testbin.SidecarEnv)}
	for i := range members {
		r.addrs = append(r.addrs, netip.AddrFrom4([4]byte{127, 0, 0, byte(2 + i)}))
	}
	r.port = fleetPort(t, r.addrs)
	r.certs = writeFleetCerts(t, r.dir, r.addrs)
	r.dns = startFleetDNS(t, fleetHost)
	r.sidecars = make([]*testbin.Process, members)
	for i := range members {
		r.outDirs = append(r.outDirs, filepath.Join(r.dir, fmt.Sprintf("consumer-%d-out", i)))
	}
	return r
}

func (r *fleetRig) endpoint(i int) string {
	return "tcp://" + net.JoinHostPort(r.addrs[i].String(), strconv.Itoa(r.port))
}

// startSidecar starts (or restarts, with the same address and output
// directory) consumer i.
func (r *fleetRig) startSidecar(i int) {
	r.t.Helper()
	args := []string{"-listen", r.endpoint(i), "-mode", "file", "-dir", r.outDirs[i], "-stats-interval", "0",
		"-tls-cert", r.certs.ServerCert, "-tls-key", r.certs.ServerKey, "-tls-client-ca", r.certs.CA}
	p := testbin.Start(r.t, r.dir, fmt.Sprintf("consumer-%d", i), r.sidecarBin, args, nil)
	address := net.JoinHostPort(r.addrs[i].String(), strconv.Itoa(r.port))
	p.WaitReady(r.t, startTimeout, func() error {
		conn, err := net.Dial("tcp", address)
		if err != nil {
			return err
		}
		return conn.Close()
	})
	r.sidecars[i] = p
}

// members points the DNS name at consumers idx.
func (r *fleetRig) members(idx ...int) {
	var addrs []netip.Addr
	for _, i := range idx {
		addrs = append(addrs, r.addrs[i])
	}
	r.dns.set(addrs...)
}

func (r *fleetRig) startGateway(i int) *fleetGateway {
	r.t.Helper()
	ports := testbin.FreePorts(r.t, 3)
	g := &fleetGateway{
		grpc:       net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0])),
		health:     net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1])),
		metricsURL: "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[2])) + "/metrics",
	}
	config := fmt.Sprintf(`receivers:
  otlp:
    protocols:
      grpc:
        endpoint: %s
processors:
  sdpshard:
%s
    tls:
      ca_file: %s
      cert_file: %s
      key_file: %s
exporters:
  debug:
    verbosity: basic
extensions:
  health_check:
    endpoint: %s
service:
  extensions: [health_check]
  telemetry:
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
      processors: [sdpshard]
      exporters: [debug]
    metrics:
      receivers: [otlp]
      processors: [sdpshard]
      exporters: [debug]
`, g.grpc, r.processorMembers(), r.certs.CA, r.certs.ClientCert, r.certs.ClientKey, g.health, ports[2])
	path := filepath.Join(r.dir, fmt.Sprintf("gateway-%d.yaml", i))
	if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
		r.t.Fatal(err)
	}
	bin := testbin.Path(r.t, testbin.CollectorEnv)
	g.proc = testbin.Start(r.t, r.dir, fmt.Sprintf("gateway-%d", i), bin, []string{"--config", path}, nil)
	healthURL := "http://" + g.health + "/"
	g.proc.WaitReady(r.t, startTimeout, func() error { return demo.CheckHealth(healthURL) })
	r.gateways = append(r.gateways, g)
	return g
}

// processorMembers is the sdpshard processor's members block: the DNS resolver,
// or every consumer as an endpoints list, and the ejection block.
func (r *fleetRig) processorMembers() string {
	block := fmt.Sprintf(`    resolver:
      dns:
        hostname: %s
        port: %d
        interval: 100ms
        server: %s`, fleetHost, r.port, r.dns.addr)
	if r.static {
		var endpoints []string
		for i := range r.addrs {
			endpoints = append(endpoints, strconv.Quote(r.endpoint(i)))
		}
		block = "    endpoints: [" + strings.Join(endpoints, ", ") + "]"
	}
	if r.ejection != "" {
		block += "\n" + r.ejection
	}
	if r.routingKey != "" {
		block += "\n    routing_key: " + r.routingKey
	}
	return block
}

// metric sums a gateway's samples of a counter or gauge, under the names
// the Collector's Prometheus endpoint may give it.
func (g *fleetGateway) metric(t *testing.T, name string) float64 {
	t.Helper()
	total := 0.0
	for _, n := range []string{name, name + "_total"} {
		v, err := demo.ScrapeSum(g.metricsURL, n, nil)
		if err != nil {
			t.Fatalf("gateway metrics: %v", err)
		}
		total += v
	}
	return total
}

// awaitApplied waits until every gateway has applied its changes-th
// membership change, to a fleet of members, and returns when.
func (r *fleetRig) awaitApplied(changes, members int) time.Time {
	r.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for _, g := range r.gateways {
		for {
			c := g.metric(r.t, "otelcol_processor_sdpshard_membership_changes")
			m := g.metric(r.t, "otelcol_processor_sdpshard_members")
			if int(c) == changes && int(m) == members {
				break
			}
			if int(c) > changes || time.Now().After(deadline) {
				r.t.Fatalf("gateway at %d changes and %d members, want %d and %d", int(c), int(m), changes, members)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return time.Now()
}

// window is a stretch of time in which both gateways route over the same
// members: from a little after both applied a change to a little before
// the next one begins.
type window struct {
	from, to time.Time
	members  []int
}

// TestFleetChangesLoseNothingAndMoveLittle runs two gateways in front of a
// fleet that goes 3 -> 4 -> 2 -> 3 members under load, one member of the
// shrink killed first (its unacknowledged frames must be re-routed). It
// checks that no acknowledged span is lost, that both gateways send every
// resource to the same member while they agree on the members, and that
// each change moves about the share of resources it should.
func TestFleetChangesLoseNothingAndMoveLittle(t *testing.T) {
	r := newFleetRig(t, 4)
	for i := range 4 {
		r.startSidecar(i)
	}
	r.members(0, 1, 2)
	r.startGateway(0)
	r.startGateway(1)
	appliedAt := r.awaitApplied(1, 3)

	settings := loadSettings{Senders: 2, Resources: 10, Spans: 2, Services: 300, Interval: 20 * time.Millisecond, Timeout: 10 * time.Second}
	var loads []*load
	for i, g := range r.gateways {
		s := settings
		s.IDBase = uint64(i+1) << 40
		loads = append(loads, startLoad(t, g.grpc, s))
	}

	const stable = 4 * time.Second
	const settle, guard = 300 * time.Millisecond, 500 * time.Millisecond
	var windows []window
	hold := func(members []int) {
		time.Sleep(stable)
		windows = append(windows, window{from: appliedAt.Add(settle), to: time.Now().Add(-guard), members: members})
	}
	hold([]int{0, 1, 2})

	r.members(0, 1, 2, 3)
	appliedAt = r.awaitApplied(2, 4)
	hold([]int{0, 1, 2, 3})

	// Consumer 1 dies and then leaves with consumer 3: what the gateways
	// held for consumer 1 goes to the resources' new owners.
	r.sidecars[1].Kill(t)
	r.members(0, 2)
	appliedAt = r.awaitApplied(3, 2)
	hold([]int{0, 2})

	r.startSidecar(1)
	r.members(0, 1, 2)
	appliedAt = r.awaitApplied(4, 3)
	hold([]int{0, 1, 2})

	var results []loadResult
	for _, l := range loads {
		results = append(results, l.stop())
	}
	rerouted := 0.0
	for _, g := range r.gateways {
		rerouted += g.metric(t, "otelcol_processor_sdpshard_rerouted_frames")
	}
	// The killed consumer held unacknowledged frames when it left.
	t.Logf("frames re-routed by both gateways: %.0f", rerouted)
	if rerouted == 0 {
		t.Error("no frame was re-routed although a consumer died with frames in flight and left")
	}
	for _, g := range r.gateways {
		g.proc.Stop(t, collectorStopLimit)
	}
	for _, p := range r.sidecars {
		if !p.Exited() {
			p.Stop(t, sidecarStopLimit)
		}
	}
	for i, res := range results {
		t.Logf("gateway %d load: %s", i, res)
		if res.OK == 0 {
			t.Fatalf("gateway %d acknowledged nothing", i)
		}
	}
	for i, g := range r.gateways {
		for line := range strings.Lines(g.proc.Log()) {
			if strings.Contains(line, "Fleet membership changed") {
				t.Logf("gateway %d: %.400s", i, strings.TrimSpace(line))
			}
		}
	}

	// What each consumer received, and from which gateway (by span id).
	at := make([]map[spanID]spanAt, len(r.sidecars))
	for i := range r.sidecars {
		at[i] = readSpans(t, r.outDirs[i])
	}
	var acked []map[spanID]struct{}
	for _, res := range results {
		acked = append(acked, res.Acked)
	}
	_, lost := unreceived(acked, at)
	if lost > 0 {
		t.Errorf("%d acknowledged spans reached no consumer", lost)
	}

	// owners[w][service] is the set of consumers that received spans of
	// the service built in window w, with the gateways that sent them.
	type seen struct{ consumers, gateways map[int]bool }
	owners := make([]map[string]*seen, len(windows))
	for w := range windows {
		owners[w] = map[string]*seen{}
	}
	for consumer, spans := range at {
		for id, s := range spans {
			gateway := int(spanIDNumber(id)>>40) - 1
			for w, win := range windows {
				if s.Built.Before(win.from) || s.Built.After(win.to) {
					continue
				}
				o := owners[w][s.Service]
				if o == nil {
					o = &seen{consumers: map[int]bool{}, gateways: map[int]bool{}}
					owners[w][s.Service] = o
				}
				o.consumers[consumer] = true
				o.gateways[gateway] = true
				if !slices.Contains(win.members, consumer) {
					t.Errorf("window %d: consumer %d, not a member, received %s", w, consumer, s.Service)
				}
			}
		}
	}
	for w, win := range windows {
		perGateway := [2]int{}
		for consumer := range at {
			for id, s := range at[consumer] {
				if !s.Built.Before(win.from) && !s.Built.After(win.to) {
					perGateway[int(spanIDNumber(id)>>40)-1]++
				}
			}
		}
		t.Logf("window %d: %s to %s, spans by gateway %v", w, win.from.Format("15:04:05.000"), win.to.Format("15:04:05.000"), perGateway)
	}
	for w := range windows {
		both, split := 0, 0
		for service, o := range owners[w] {
			if len(o.gateways) == 2 {
				both++
			}
			if len(o.consumers) != 1 {
				split++
				if split <= 3 {
					t.Errorf("window %d: %s went to consumers %v", w, service, o.consumers)
				}
			}
		}
		t.Logf("window %d (members %v): %d resources, %d seen from both gateways, %d split", w, windows[w].members, len(owners[w]), both, split)
		if both < settings.Services*8/10 {
			t.Errorf("window %d: only %d of %d resources came through both gateways; the agreement check is too weak", w, both, settings.Services)
		}
	}

	// The fraction of resources that changed owner between two windows,
	// against the share a change of that size should move: r removed of N
	// moves r/N, a added to N moves a/(N+a).
	for w := 1; w < len(windows); w++ {
		prev, next := windows[w-1].members, windows[w].members
		var common, moved int
		for service, o := range owners[w] {
			p := owners[w-1][service]
			if p == nil || len(p.consumers) != 1 || len(o.consumers) != 1 {
				continue
			}
			common++
			if !sameSet(p.consumers, o.consumers) {
				moved++
			}
		}
		removed, added := 0, 0
		for _, m := range prev {
			if !slices.Contains(next, m) {
				removed++
			}
		}
		for _, m := range next {
			if !slices.Contains(prev, m) {
				added++
			}
		}
		ideal := float64(removed)/float64(len(prev)) + float64(added)/float64(len(next))
		got := float64(moved) / float64(common)
		t.Logf("change %v -> %v: %d of %d resources moved (%.3f, ideal %.3f)", prev, next, moved, common, got, ideal)
		if got < ideal/1.5 || got > ideal*1.5 {
			t.Errorf("change %v -> %v moved %.3f of the resources, want within 1.5x of %.3f", prev, next, got, ideal)
		}
	}
}

func spanIDNumber(id spanID) uint64 {
	var n uint64
	for _, b := range id {
		n = n<<8 | uint64(b)
	}
	return n
}

// sameSet reports whether a and b hold the same keys.
func sameSet(a, b map[int]bool) bool {
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return len(a) == len(b)
}
