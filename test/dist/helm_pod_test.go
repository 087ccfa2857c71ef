// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package dist

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/otelcol-sdp/otelcol-sdp/test/testbin"
)

// readValuesMap reads deploy/helm/values.yaml as the generic values Helm merges.
func readValuesMap(t *testing.T) map[string]any {
	t.Helper()
	var values map[string]any
	readYAML(t, filepath.Join(testbin.RepoRoot(t), "deploy", "helm", "values.yaml"), &values)
	return values
}

// distVersion returns dist.version of builder-config.yaml: the version of
// the otelcol-sdp distribution, and the tag of its image.
func distVersion(t *testing.T) string {
	t.Helper()
	var manifest struct {
		Dist struct {
			Version string `yaml:"version"`
		} `yaml:"dist"`
	}
	readYAML(t, filepath.Join(testbin.RepoRoot(t), "builder-config.yaml"), &manifest)
	if manifest.Dist.Version == "" {
		t.Fatal("builder-config.yaml has no dist.version")
	}
	return manifest.Dist.Version
}

// TestHelmPodPassesRestrictedInEveryMode renders the pod of the values with
// the chart's templating rules (renderChartPod) in every mode the README
// offers and checks it against the "restricted" Pod Security Standard: in
// daemonset mode this is what catches the chart's default hostPorts.
func TestHelmPodPassesRestrictedInEveryMode(t *testing.T) {
	defaults, values := readChartDefaults(t), readValuesMap(t)
	for _, mode := range chartModes {
		t.Run(mode, func(t *testing.T) {
			pod, err := renderChartPod(defaults, values, mode)
			if err != nil {
				t.Fatal(err)
			}
			if len(pod.InitContainers) == 0 {
				t.Fatal("the rendered pod has no sidecar containers")
			}
			for _, problem := range restrictedViolations(pod) {
				t.Errorf("fails the restricted Pod Security Standard: %s", problem)
			}
			// Not part of the standard, but promised by the README.
			for _, c := range append(slices.Clone(pod.Containers), pod.InitContainers...) {
				if !isTrue(c.SecurityContext.ReadOnlyRootFilesystem) {
					t.Errorf("container %s: readOnlyRootFilesystem is not true", c.Name)
				}
			}
		})
	}
}

// TestHelmImagesAreTheDistributionVersion checks that every container the
// values render runs the otelcol-sdp image at the distribution's version
// (builder-config.yaml dist.version), in every mode, and that the README's
// install command names the same tag.
func TestHelmImagesAreTheDistributionVersion(t *testing.T) {
	defaults, values := readChartDefaults(t), readValuesMap(t)
	version := distVersion(t)
	if tag, _ := dig(values, "image", "tag").(string); tag != version {
		t.Errorf("deploy/helm/values.yaml image.tag = %q, want builder-config.yaml dist.version %q", tag, version)
	}
	repository, _ := dig(values, "image", "repository").(string)
	want := repository + ":" + version
	for _, mode := range chartModes {
		pod, err := renderChartPod(defaults, values, mode)
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		for _, c := range append(slices.Clone(pod.Containers), pod.InitContainers...) {
			if c.Image != want {
				t.Errorf("%s: container %s runs image %q, want %q", mode, c.Name, c.Image, want)
			}
		}
	}
	readme, err := os.ReadFile(filepath.Join(testbin.RepoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	tags := regexp.MustCompile(`image\.tag=(\S+)`).FindAllStringSubmatch(string(readme), -1)
	if len(tags) == 0 {
		t.Error("README.md: no helm install line with --set image.tag=")
	}
	for _, m := range tags {
		if m[1] != version {
			t.Errorf("README.md: --set image.tag=%s, want the distribution version %s", m[1], version)
		}
	}
}

// TestHelmSidecarImagesFollowTheChartImage renders the sidecars' image the
// way the chart does and checks that it is the Collector's image after a
// user overrides image.repository, image.tag, image.digest or
// global.imageRegistry, and that an empty image.tag (with which the chart
// would run its own upstream Collector version) refuses to render.
func TestHelmSidecarImagesFollowTheChartImage(t *testing.T) {
	defaults := readChartDefaults(t)
	for _, tc := range []struct {
		name     string
		override map[string]any
	}{
		{"repository and tag", map[string]any{"image": map[string]any{"repository": "registry.example/team/otelcol-sdp", "tag": "1.2.3", "pullPolicy": "Always"}}},
		{"digest", map[string]any{"image": map[string]any{"digest": "sha256:0123"}}},
		{"global registry", map[string]any{"global": map[string]any{"imageRegistry": "mirror.example"}}},
	} {
		values := mergeValues(readValuesMap(t), tc.override)
		pod, err := renderChartPod(defaults, values, "deployment")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		collector := pod.Containers[0]
		pullPolicy, _ := dig(values, "image", "pullPolicy").(string)
		for _, c := range pod.InitContainers {
			if c.Image != collector.Image {
				t.Errorf("%s: sidecar %s renders image %q, the Collector %q", tc.name, c.Name, c.Image, collector.Image)
			}
			if c.ImagePullPolicy != pullPolicy {
				t.Errorf("%s: sidecar %s renders imagePullPolicy %q, want image.pullPolicy %q", tc.name, c.Name, c.ImagePullPolicy, pullPolicy)
			}
		}
	}
	untagged := mergeValues(readValuesMap(t), map[string]any{"image": map[string]any{"tag": ""}})
	if _, err := renderChartPod(defaults, untagged, "deployment"); err == nil || !strings.Contains(err.Error(), "image.tag") {
		t.Errorf("with image.tag empty the values render (error %v): the Collector would run the chart's appVersion %s, not otelcol-sdp", err, defaults.Chart.AppVersion)
	}
}

func isTrue(b *bool) bool { return b != nil && *b }

// TestHelmValuesDeclareTheMetricsPort checks that the port the Collector
// serves its own metrics on (the chart's default telemetry reader, kept by
// the values) is declared, so that it can be scraped.
func TestHelmValuesDeclareTheMetricsPort(t *testing.T) {
	root := testbin.RepoRoot(t)
	values := readHelmValues(t, filepath.Join(root, "deploy", "helm", "values.yaml"))
	var defaults map[string]any
	readYAML(t, filepath.Join("testdata", "chart-default-config.yaml"), &defaults)
	merged := mergeValues(defaults, values.Config)
	port := prometheusReaderPort(merged)
	if port == 0 {
		t.Fatal("the merged configuration has no Prometheus pull reader in service.telemetry.metrics")
	}
	declared := false
	for name, p := range values.Ports {
		if p.Enabled && p.ContainerPort == port {
			declared = true
			if p.Protocol != "" && p.Protocol != "TCP" {
				t.Errorf("ports.%s declares the metrics port with protocol %s, want TCP", name, p.Protocol)
			}
		}
	}
	if !declared {
		t.Errorf("no enabled entry of ports declares containerPort %d, where the Collector serves its metrics", port)
	}
}

// prometheusReaderPort returns the port of the first Prometheus pull reader
// of service.telemetry.metrics, or 0.
func prometheusReaderPort(config map[string]any) int {
	service, _ := config["service"].(map[string]any)
	telemetry, _ := service["telemetry"].(map[string]any)
	metrics, _ := telemetry["metrics"].(map[string]any)
	readers, _ := metrics["readers"].([]any)
	for _, r := range readers {
		reader, _ := r.(map[string]any)
		pull, _ := reader["pull"].(map[string]any)
		exporter, _ := pull["exporter"].(map[string]any)
		prom, _ := exporter["prometheus"].(map[string]any)
		if port, ok := prom["port"].(int); ok {
			return port
		}
	}
	return 0
}
