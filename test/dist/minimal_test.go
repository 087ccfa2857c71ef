// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package dist

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/otelcol-sdp/otelcol-sdp/internal/demo"
	"github.com/otelcol-sdp/otelcol-sdp/test/testbin"
)

const ourModule = "github.com/otelcol-sdp/otelcol-sdp"

// TestMinimalDistributionBuilds builds examples/builder-config-minimal.yaml
// exactly as the README and the manifest tell a user to: the file unchanged,
// in a folder that also holds the clone as otelcol-sdp (the manifest's
// `replaces:` points there). It then checks that the Collector it produces
// lists our processors and runs a pipeline through both of them: the demo
// harness sends every signal over gRPC and HTTP, and every item must be
// counted by wirecount and reach the sidecars through sdpshard. Every
// Collector configuration in examples/ must also pass `validate` in it, as
// it does in otelcol-sdp (test/e2e): the README's manifest builds a
// Collector that runs the examples.
func TestMinimalDistributionBuilds(t *testing.T) {
	ocb := testbin.Path(t, testbin.OCBEnv)
	root := testbin.RepoRoot(t)

	manifest, err := os.ReadFile(filepath.Join(root, "examples", "builder-config-minimal.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var parsed struct {
		Dist struct {
			Name       string `yaml:"name"`
			OutputPath string `yaml:"output_path"`
		} `yaml:"dist"`
		Replaces []string `yaml:"replaces"`
	}
	if err := yaml.Unmarshal(manifest, &parsed); err != nil {
		t.Fatalf("examples/builder-config-minimal.yaml: %v", err)
	}
	if !slices.Contains(parsed.Replaces, ourModule+" => ../otelcol-sdp") {
		t.Fatalf("the minimal manifest's replaces %q lack %q, which the README documents", parsed.Replaces, ourModule+" => ../otelcol-sdp")
	}
	work := t.TempDir()
	if err := os.Symlink(root, filepath.Join(work, "otelcol-sdp")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "builder-config-minimal.yaml"), manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	testbin.Run(t, work, nil, ocb, "--config", "builder-config-minimal.yaml")

	bin := filepath.Join(work, parsed.Dist.OutputPath, parsed.Dist.Name)
	components := testbin.Run(t, work, nil, bin, "components")
	for _, name := range []string{"wirecount", "sdpshard"} {
		if !regexp.MustCompile(`(?m)^\s+- name: ` + name + `\n\s+module: ` + regexp.QuoteMeta(ourModule) + ` `).MatchString(components) {
			t.Errorf("the minimal distribution does not list processor %s from %s:\n%s", name, ourModule, components)
		}
	}

	examples, err := filepath.Glob(filepath.Join(root, "examples", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	validated := 0
	for _, file := range examples {
		if strings.HasPrefix(filepath.Base(file), "builder-config") {
			continue // an ocb manifest, not a Collector configuration
		}
		validated++
		t.Run("validate/"+filepath.Base(file), func(t *testing.T) {
			out, err := testbin.Command(work, nil, bin, "validate", "--config", file).CombinedOutput()
			if err != nil {
				t.Errorf("%s validate --config %s: %v\n%s", parsed.Dist.Name, file, err, out)
			}
		})
	}
	if validated == 0 {
		t.Error("no Collector configuration found in examples/")
	}

	opts := demo.Options{
		Binaries: demo.Binaries{
			Collector:    bin,
			Sidecar:      testbin.Path(t, testbin.SidecarEnv),
			Telemetrygen: testbin.Path(t, testbin.TelemetrygenEnv),
		},
		Config:   filepath.Join(root, "test", "dist", "testdata", "minimal-config.yaml"),
		Items:    20,
		Services: 2,
		WorkDir:  t.TempDir(),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	report, err := demo.Run(ctx, opts)
	if err != nil {
		t.Fatalf("running the minimal distribution: %v", err)
	}
	var table strings.Builder
	report.WriteTo(&table)
	t.Logf("minimal distribution:\n%s", table.String())
	if len(report.Results) == 0 {
		t.Fatal("no case ran")
	}
	if err := report.Err(); err != nil {
		t.Error(err)
	}
}

// TestGuideGomodLinesMatchTheMinimalManifest keeps the lines of
// docs/build-your-own.md the ones the minimal manifest (built above) uses.
func TestGuideGomodLinesMatchTheMinimalManifest(t *testing.T) {
	root := testbin.RepoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "docs", "build-your-own.md"))
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := os.ReadFile(filepath.Join(root, "examples", "builder-config-minimal.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, line := range strings.Split(string(manifest), "\n") {
		trimmed := strings.TrimSpace(line)
		if !strings.Contains(trimmed, ourModule) || strings.HasPrefix(trimmed, "#") {
			continue
		}
		lines++
		if !strings.Contains(string(readme), line+"\n") {
			t.Errorf("docs/build-your-own.md lacks the manifest line %q", line)
		}
	}
	if lines == 0 {
		t.Fatalf("examples/builder-config-minimal.yaml names no component of %s", ourModule)
	}
}
