//go:build e2e

package dist

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/otelcol-sdp/otelcol-sdp/test/testbin"
)

const ourModule = "github.com/otelcol-sdp/otelcol-sdp"

// TestMinimalDistributionBuilds builds examples/builder-config-minimal.yaml
// with ocb against this checkout (a replace of our module by its path, as a
// user would before a release) and checks that the Collector it produces
// has our processors and accepts a configuration that uses them.
func TestMinimalDistributionBuilds(t *testing.T) {
	ocb := testbin.Path(t, testbin.OCBEnv)
	root := testbin.RepoRoot(t)

	var manifest map[string]any
	readYAML(t, filepath.Join(root, "examples", "builder-config-minimal.yaml"), &manifest)
	dist, _ := manifest["dist"].(map[string]any)
	if dist == nil {
		t.Fatal("examples/builder-config-minimal.yaml has no dist section")
	}
	out := t.TempDir()
	dist["output_path"] = filepath.Join(out, "otelcol-mine")
	manifest["replaces"] = []string{ourModule + " => " + root}
	b, err := yaml.Marshal(manifest)
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(out, "builder-config.yaml")
	if err := os.WriteFile(config, b, 0o644); err != nil {
		t.Fatal(err)
	}
	testbin.Run(t, out, nil, ocb, "--config", config)

	bin := filepath.Join(out, "otelcol-mine", "otelcol-mine")
	components := testbin.Run(t, out, nil, bin, "components")
	for _, name := range []string{"wirecount", "sdpshard"} {
		if !regexp.MustCompile(`(?m)^\s+- name: ` + name + `\n\s+module: ` + regexp.QuoteMeta(ourModule) + ` `).MatchString(components) {
			t.Errorf("the minimal distribution does not list processor %s from %s:\n%s", name, ourModule, components)
		}
	}
	cmd := exec.Command(bin, "validate", "--config", filepath.Join("testdata", "minimal-config.yaml"))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("the minimal distribution rejects testdata/minimal-config.yaml: %v\n%s", err, b)
	}
}

// TestReadmeGomodLinesMatchTheMinimalManifest keeps the README's "build your
// own Collector" lines the ones the minimal manifest (built above) uses.
func TestReadmeGomodLinesMatchTheMinimalManifest(t *testing.T) {
	root := testbin.RepoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
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
			t.Errorf("README.md lacks the manifest line %q", line)
		}
	}
	if lines == 0 {
		t.Fatalf("examples/builder-config-minimal.yaml names no component of %s", ourModule)
	}
}
