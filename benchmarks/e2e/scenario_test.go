// SPDX-License-Identifier: Apache-2.0

package e2ebench

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestParseScenario(t *testing.T) {
	s, err := ParseScenario("configs/pdata-tee.yaml", []byte(`# bench-binary: otelcol-sdp
# bench-sidecars: 2
# bench-expect: sink, sidecars
#
# A comment that is not a header key: ignored.
receivers:
# bench-baseline: true  (after the header: ignored)
`))
	if err != nil {
		t.Fatal(err)
	}
	want := Scenario{Name: "pdata-tee", Path: "configs/pdata-tee.yaml", Binary: "otelcol-sdp", Sidecars: 2, Expect: []string{DestSink, DestSidecars}}
	if s.Name != want.Name || s.Path != want.Path || s.Binary != want.Binary || s.Sidecars != want.Sidecars ||
		!slices.Equal(s.Expect, want.Expect) || s.Baseline {
		t.Errorf("got %+v, want %+v", s, want)
	}
	if !s.Expects(DestSink) || !s.Expects(DestSidecars) {
		t.Errorf("Expects: %+v", s)
	}
	if s.SidecarKind != SidecarSDP {
		t.Errorf("SidecarKind %q, want the default %q", s.SidecarKind, SidecarSDP)
	}
	for _, signal := range Signals {
		if !s.Carries(signal) {
			t.Errorf("without bench-signals the scenario does not carry %s", signal)
		}
	}
}

// bench-signals lists the signals a scenario has pipelines for; the others
// it does not carry.
func TestParseScenarioSignals(t *testing.T) {
	s, err := ParseScenario("x.yaml", []byte("# bench-binary: anchor\n# bench-expect: sink\n# bench-signals: traces, logs\nexporters: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Signals, []string{"traces", "logs"}) || !s.Carries("traces") || !s.Carries("logs") ||
		s.Carries("metrics") || s.Carries("profiles") {
		t.Errorf("got %+v", s)
	}
}

// A leading SPDX comment is no header key, and bench-sidecar-kind: floor
// makes the sidecars floor servers.
func TestParseScenarioFloorSidecars(t *testing.T) {
	s, err := ParseScenario("x.yaml", []byte("# SPDX-License-Identifier: Apache-2.0\n# bench-binary: anchor\n# bench-sidecars: 2\n# bench-sidecar-kind: floor\n# bench-expect: sidecars\nexporters: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Binary != AnchorBinary || s.Sidecars != 2 || s.SidecarKind != SidecarFloor || !slices.Equal(s.Expect, []string{DestSidecars}) {
		t.Errorf("got %+v", s)
	}
}

func TestParseScenarioErrors(t *testing.T) {
	for name, tc := range map[string]struct{ header, want string }{
		"no binary":         {"# bench-expect: sink\n", "bench-binary: missing"},
		"no expect":         {"# bench-binary: plain\n", "bench-expect: missing"},
		"bad destination":   {"# bench-binary: plain\n# bench-expect: sink,backend\n", `unknown destination "backend"`},
		"sidecars not int":  {"# bench-binary: plain\n# bench-sidecars: two\n", "bench-sidecars"},
		"sidecars negative": {"# bench-binary: plain\n# bench-sidecars: -1\n", "must be in [0, 16]"},
		"no sidecars":       {"# bench-binary: otelcol-sdp\n# bench-expect: sidecars\n", "bench-sidecars is 0"},
		"unknown key":       {"# bench-binaries: plain\n", "bench-binaries: unknown key"},
		"bad bool":          {"# bench-binary: plain\n# bench-expect: sink\n# bench-baseline: sure\n", "bench-baseline"},
		"bad sidecar kind":  {"# bench-binary: plain\n# bench-sidecar-kind: agent\n", `unknown kind "agent"`},
		"bad signal":        {"# bench-binary: plain\n# bench-expect: sink\n# bench-signals: traces,events\n", `unknown signal "events"`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseScenario("x.yaml", []byte(tc.header+"receivers: {}\n"))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "x.yaml") {
				t.Errorf("error %v, want one naming x.yaml and containing %q", err, tc.want)
			}
		})
	}
}

// The scenarios shipped in configs/ parse, plain is the one baseline and
// comes first, every scenario that forwards to sidecars names their
// endpoints, and the floor is the harness's server, not a Collector.
func TestLoadScenariosRepository(t *testing.T) {
	ss, err := LoadScenarios("configs")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range ss {
		names = append(names, s.Name)
		b, err := os.ReadFile(s.Path)
		if err != nil {
			t.Fatal(err)
		}
		if s.Binary == FloorBinary {
			if !slices.Equal(s.Expect, []string{DestFloor}) || s.Sidecars != 0 || s.Baseline {
				t.Errorf("%s: the floor scenario is %+v", s.Path, s)
			}
			continue
		}
		for i := range s.Sidecars {
			if v := "BENCH_SHARD" + strconv.Itoa(i) + "_ENDPOINT"; !strings.Contains(string(b), v) && !strings.Contains(string(b), "${env:"+MembersVariable+"}") {
				t.Errorf("%s: has %d sidecars but uses neither %s nor %s", s.Path, s.Sidecars, v, MembersVariable)
			}
		}
		vars := []string{"BENCH_OTLP_GRPC_ENDPOINT", "BENCH_OTLP_HTTP_ENDPOINT", "BENCH_SINK_ENDPOINT", "compression: none"}
		if s.SidecarKind == SidecarFloor {
			// Its members are OTLP endpoints: it has no use for the sink.
			vars = slices.DeleteFunc(vars, func(v string) bool { return v == "BENCH_SINK_ENDPOINT" })
		}
		for _, v := range vars {
			if !strings.Contains(string(b), v) {
				t.Errorf("%s: no %s", s.Path, v)
			}
		}
		checkProfilesPipeline(t, s, b)
	}
	want := []string{"plain", "fleet-nowait-linger0", "fleet-nowait-linger20", "fleet-nowait-linger50", "fleet-nowait", "fleet-traceid-nowait", "fleet-traceid", "fleet-wait-linger1", "fleet", "floor", "loadbalancing-traceid",
		"pdata-divert-nowait", "pdata-divert", "pdata-tee-nowait", "pdata-tee",
		"plain-samebinary", "predecode-divert-fleet", "predecode-divert-nowait", "predecode-divert-pruned", "predecode-divert-traceid", "predecode-divert", "predecode-tee-nowait", "predecode-tee", "predecode-wirecount"}
	if !slices.Equal(names, want) {
		t.Errorf("scenarios %v, want %v", names, want)
	}
	if !ss[0].Baseline || ss[0].Binary != "plain" || ss[0].Sidecars != 0 {
		t.Errorf("first scenario %+v, want the plain baseline", ss[0])
	}
}

// Each X-nowait.yaml is X.yaml with wait_for_ack: false and nothing else
// changed but comments, so that the pair measures that one setting; X.yaml
// leaves wait_for_ack at its default.
func TestNowaitScenariosDifferOnlyInWaitForAck(t *testing.T) {
	nowait, err := filepath.Glob("configs/*-nowait.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(nowait) == 0 {
		t.Fatal("no configs/*-nowait.yaml")
	}
	const setting = "wait_for_ack: false"
	for _, path := range nowait {
		base := strings.TrimSuffix(path, "-nowait.yaml") + ".yaml"
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(base)
		if err != nil {
			t.Fatalf("%s has no default counterpart: %v", path, err)
		}
		if strings.Contains(string(want), "wait_for_ack") {
			t.Errorf("%s sets wait_for_ack; it should measure the default", base)
		}
		var lines []string
		found := 0
		for _, l := range withoutComments(string(got)) {
			if strings.TrimSpace(l) == setting {
				found++
				continue
			}
			lines = append(lines, l)
		}
		if found != 1 {
			t.Errorf("%s: %q appears %d times, want once", path, setting, found)
		}
		if !slices.Equal(lines, withoutComments(string(want))) {
			t.Errorf("%s differs from %s in more than %q", path, base, setting)
		}
	}
}

func withoutComments(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			out = append(out, l)
		}
	}
	return out
}

func TestLoadScenariosErrors(t *testing.T) {
	if _, err := LoadScenarios(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no *.yaml") {
		t.Errorf("empty dir: %v", err)
	}
	dir := t.TempDir()
	for _, name := range []string{"a.yaml", "b.yaml"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("# bench-binary: plain\n# bench-expect: sink\n# bench-baseline: true\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := LoadScenarios(dir); err == nil || !strings.Contains(err.Error(), "more than one") {
		t.Errorf("two baselines: %v", err)
	}
}

// checkProfilesPipeline requires a Collector scenario that carries profiles
// to route them as it routes traces: a profiles pipeline with the traces
// pipeline's receivers, processors and exporters. One that does not carry
// them (bench-signals) must have no profiles pipeline.
func checkProfilesPipeline(t *testing.T, s Scenario, config []byte) {
	t.Helper()
	var cfg struct {
		Service struct {
			Pipelines map[string]map[string][]string `yaml:"pipelines"`
		} `yaml:"service"`
	}
	if err := yaml.Unmarshal(config, &cfg); err != nil {
		t.Fatalf("%s: %v", s.Path, err)
	}
	traces, ok := cfg.Service.Pipelines["traces"]
	profiles, has := cfg.Service.Pipelines["profiles"]
	switch {
	case !ok:
		t.Errorf("%s: no traces pipeline", s.Path)
	case !s.Carries("profiles"):
		if has {
			t.Errorf("%s: a profiles pipeline, but bench-signals leaves profiles out", s.Path)
		}
	case !has:
		t.Errorf("%s: no profiles pipeline", s.Path)
	case !reflect.DeepEqual(profiles, traces):
		t.Errorf("%s: profiles pipeline %v, traces pipeline %v", s.Path, profiles, traces)
	}
}

// NAME@N runs a scenario whose endpoints are one list with N sidecars;
// the baseline and the floor come along; a scenario that lists its
// endpoints one by one, or a number out of range, is refused by name.
func TestSelectMembers(t *testing.T) {
	all, err := LoadScenarios("configs")
	if err != nil {
		t.Fatal(err)
	}
	got, err := Select(all, []string{"fleet-nowait@2", "fleet-nowait@32", "predecode-divert"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range got {
		names = append(names, fmt.Sprintf("%s/%d", s.Name, s.Sidecars))
	}
	want := []string{"plain/0", "fleet-nowait@2/2", "fleet-nowait@32/32", "floor/0", "predecode-divert/2"}
	if !slices.Equal(names, want) {
		t.Errorf("Select = %v, want %v", names, want)
	}
	if got[1].Path != got[2].Path || !strings.HasSuffix(got[1].Path, "fleet-nowait.yaml") {
		t.Errorf("paths %s, %s: want both fleet-nowait.yaml", got[1].Path, got[2].Path)
	}
	for _, tc := range []struct{ name, want string }{
		{"predecode-divert@4", "lists its endpoints one by one"},
		{"fleet-nowait@0", "members must be in [1, 64]"},
		{"fleet-nowait@65", "members must be in [1, 64]"},
		{"fleet-nowait@x", `"x" is not a number of members`},
		{"plain@2", "starts no sidecars"},
		{"nosuch@2", "no nosuch.yaml"},
		{"nosuch", "no nosuch.yaml"},
	} {
		if _, err := Select(all, []string{tc.name}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Select(%s) = %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}

// The endpoints reach a configuration one by one and as one YAML list.
func TestEndpointsEnv(t *testing.T) {
	got := endpointsEnv([]string{"unix:///a.sock", "127.0.0.1:4320"})
	want := []string{"BENCH_SHARD0_ENDPOINT=unix:///a.sock", "BENCH_SHARD1_ENDPOINT=127.0.0.1:4320", `BENCH_SHARD_ENDPOINTS=["unix:///a.sock", "127.0.0.1:4320"]`}
	if !slices.Equal(got, want) {
		t.Errorf("endpointsEnv = %q, want %q", got, want)
	}
}
