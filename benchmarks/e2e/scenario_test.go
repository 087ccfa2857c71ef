package e2ebench

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
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
// comes first, and every scenario that forwards to sidecars names their
// endpoints.
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
		for i := range s.Sidecars {
			if v := "BENCH_SHARD" + string(rune('0'+i)) + "_ENDPOINT"; !strings.Contains(string(b), v) {
				t.Errorf("%s: has %d sidecars but does not use %s", s.Path, s.Sidecars, v)
			}
		}
		for _, v := range []string{"BENCH_OTLP_GRPC_ENDPOINT", "BENCH_OTLP_HTTP_ENDPOINT", "BENCH_SINK_ENDPOINT", "compression: none"} {
			if !strings.Contains(string(b), v) {
				t.Errorf("%s: no %s", s.Path, v)
			}
		}
	}
	want := []string{"plain", "pdata-divert", "pdata-tee", "predecode-divert", "predecode-tee"}
	if !slices.Equal(names, want) {
		t.Errorf("scenarios %v, want %v", names, want)
	}
	if !ss[0].Baseline || ss[0].Binary != "plain" || ss[0].Sidecars != 0 {
		t.Errorf("first scenario %+v, want the plain baseline", ss[0])
	}
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
