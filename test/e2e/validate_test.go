// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/otelcol-sdp/otelcol-sdp/test/testbin"
)

// isCollectorConfig tells Collector configurations in examples/ from the
// ocb manifests kept there (builder-config-*.yaml), which test/dist builds.
func isCollectorConfig(name string) bool {
	return !strings.HasPrefix(filepath.Base(name), "builder-config")
}

func TestValidateAcceptsEveryExample(t *testing.T) {
	collector := testbin.Path(t, testbin.CollectorEnv)
	root := testbin.RepoRoot(t)
	files, err := filepath.Glob(filepath.Join(root, "examples", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	validated := 0
	for _, file := range files {
		if !isCollectorConfig(file) {
			continue
		}
		validated++
		t.Run(filepath.Base(file), func(t *testing.T) {
			out, err := exec.Command(collector, "validate", "--config", file).CombinedOutput()
			if err != nil {
				t.Fatalf("otelcol-sdp validate --config %s: %v\n%s", file, err, out)
			}
		})
	}
	if validated == 0 {
		t.Fatal("no Collector configuration found in examples/")
	}
}

// TestValidateRejectsBadConfigurations breaks examples/gateway.yaml one field
// at a time and checks that validate fails naming the component and field.
func TestValidateRejectsBadConfigurations(t *testing.T) {
	collector := testbin.Path(t, testbin.CollectorEnv)
	gateway := filepath.Join(testbin.RepoRoot(t), "examples", "gateway.yaml")
	tests := []struct {
		name string
		set  string
		want []string // every one must appear in the error
	}{
		{"sdpshard without endpoints", "processors::sdpshard::endpoints=[]", []string{"processors::sdpshard", "endpoints"}},
		{"sdpshard endpoint with unknown scheme", "processors::sdpshard::endpoints=[http://127.0.0.1:1]", []string{"processors::sdpshard", "endpoints[0]", "http"}},
		{"sdpshard duplicate endpoint", "processors::sdpshard::endpoints=[unix:///tmp/a.sock, unix:///tmp/a.sock]", []string{"processors::sdpshard", "endpoints[1]"}},
		{"sdpshard unknown routing key", "processors::sdpshard::routing_key=bogus", []string{"processors::sdpshard", "routing_key", "bogus"}},
		{"sdpshard unknown mode", "processors::sdpshard::mode=bogus", []string{"processors::sdpshard", "mode", "bogus"}},
		{"sdpshard frame limit too small", "processors::sdpshard::max_frame_bytes=10", []string{"processors::sdpshard", "max_frame_bytes"}},
		{"wirecount without groups", "processors::wirecount::max_groups=0", []string{"processors::wirecount", "max_groups"}},
		{"wirecount empty group key", `processors::wirecount::group_by=[""]`, []string{"processors::wirecount", "group_by[0]"}},
		{"wirecount unknown field", "processors::wirecount::bogus_field=1", []string{"wirecount", "bogus_field"}},
		{"sdpshard unknown field", "processors::sdpshard::bogus_field=1", []string{"sdpshard", "bogus_field"}},
		{"wirestage without stages", "extensions::wirestage::stages=[]", []string{"extensions::wirestage", "stages"}},
		{"wirestage stage of another type", "extensions::wirestage::stages=[batch]", []string{"extensions::wirestage", "stages[0]", "batch"}},
		{"wirestage non-positive retry_after", "extensions::wirestage::retry_after=0s", []string{"extensions::wirestage", "retry_after"}},
		{"wirestage negative grpc_stream_workers", "extensions::wirestage::grpc_stream_workers=-1", []string{"extensions::wirestage", "grpc_stream_workers"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := exec.Command(collector, "validate", "--config", gateway, "--set="+tt.set).CombinedOutput()
			if err == nil {
				t.Fatalf("validate accepted --set=%s\n%s", tt.set, out)
			}
			for _, want := range tt.want {
				if !strings.Contains(string(out), want) {
					t.Errorf("validate error does not name %q:\n%s", want, out)
				}
			}
		})
	}
}

// components is the part of `otelcol-sdp components` the test reads.
type components struct {
	BuildInfo struct {
		Command string `yaml:"command"`
	} `yaml:"buildinfo"`
	Receivers  []component `yaml:"receivers"`
	Processors []component `yaml:"processors"`
	Exporters  []component `yaml:"exporters"`
	Extensions []component `yaml:"extensions"`
	Connectors []component `yaml:"connectors"`
}

type component struct {
	Name   string `yaml:"name"`
	Module string `yaml:"module"`
}

func TestComponentsListsTheDistribution(t *testing.T) {
	collector := testbin.Path(t, testbin.CollectorEnv)
	out, err := exec.Command(collector, "components").Output()
	if err != nil {
		t.Fatalf("otelcol-sdp components: %v", err)
	}
	var got components
	if err := yaml.Unmarshal(out, &got); err != nil {
		t.Fatalf("components output is not YAML: %v\n%s", err, out)
	}
	if got.BuildInfo.Command != "otelcol-sdp" {
		t.Errorf("build info command = %q, want otelcol-sdp", got.BuildInfo.Command)
	}
	const ourModule = "github.com/otelcol-sdp/otelcol-sdp "
	for _, want := range []struct {
		kind   string
		list   []component
		name   string
		module string // prefix of the module line
	}{
		{"processor", got.Processors, "wirecount", ourModule},
		{"processor", got.Processors, "sdpshard", ourModule},
		{"extension", got.Extensions, "wirestage", ourModule},
		{"processor", got.Processors, "batch", "go.opentelemetry.io/collector/processor/batchprocessor v0.165.0"},
		{"processor", got.Processors, "memory_limiter", "go.opentelemetry.io/collector/processor/memorylimiterprocessor v0.165.0"},
		{"receiver", got.Receivers, "otlp", "go.opentelemetry.io/collector/receiver/otlpreceiver v0.165.0"},
		{"exporter", got.Exporters, "debug", "go.opentelemetry.io/collector/exporter/debugexporter v0.165.0"},
		{"exporter", got.Exporters, "otlp_grpc", "go.opentelemetry.io/collector/exporter/otlpexporter v0.165.0"},
		{"exporter", got.Exporters, "otlp_http", "go.opentelemetry.io/collector/exporter/otlphttpexporter v0.165.0"},
		{"extension", got.Extensions, "health_check", "github.com/open-telemetry/opentelemetry-collector-contrib/extension/healthcheckextension v0.165.0"},
		{"extension", got.Extensions, "zpages", "go.opentelemetry.io/collector/extension/zpagesextension v0.165.0"},
		{"connector", got.Connectors, "forward", "go.opentelemetry.io/collector/connector/forwardconnector v0.165.0"},
		{"extension", got.Extensions, "pprof", "github.com/open-telemetry/opentelemetry-collector-contrib/extension/pprofextension v0.165.0"},
	} {
		found := false
		for _, c := range want.list {
			if c.Name == want.name {
				found = true
				if !strings.HasPrefix(c.Module, want.module) {
					t.Errorf("%s %s comes from module %q, want %q", want.kind, want.name, c.Module, want.module)
				}
			}
		}
		if !found {
			t.Errorf("%s %s is not in the distribution", want.kind, want.name)
		}
	}
}

func TestVersionNamesTheDistribution(t *testing.T) {
	collector := testbin.Path(t, testbin.CollectorEnv)
	out, err := exec.Command(collector, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("otelcol-sdp --version: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "otelcol-sdp") {
		t.Errorf("--version output does not name otelcol-sdp: %s", out)
	}
}
