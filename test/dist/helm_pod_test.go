//go:build e2e

package dist

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"text/template"

	"github.com/otelcol-sdp/otelcol-sdp/test/testbin"
)

// renderChartTemplate renders a value the chart passes through `tpl` (its
// extraContainers, initContainers and volumes) with the subset of Helm's
// template language the values use: .Values, .Chart and `default`.
func renderChartTemplate(t *testing.T, text string, values helmValues, appVersion string) string {
	t.Helper()
	funcs := template.FuncMap{
		// Helm's default: the fallback when the piped value is empty.
		"default": func(fallback, v any) any {
			if s, ok := v.(string); v == nil || (ok && s == "") {
				return fallback
			}
			return v
		},
	}
	tmpl, err := template.New("value").Funcs(funcs).Option("missingkey=error").Parse(text)
	if err != nil {
		t.Fatalf("template %q: %v", text, err)
	}
	data := map[string]any{
		"Values": map[string]any{"image": map[string]any{
			"repository": values.Image.Repository, "tag": values.Image.Tag, "pullPolicy": values.Image.PullPolicy,
		}},
		"Chart": map[string]any{"AppVersion": appVersion},
	}
	var out bytes.Buffer
	if err := tmpl.Execute(&out, data); err != nil {
		t.Fatalf("template %q: %v", text, err)
	}
	return out.String()
}

// TestHelmSidecarImagesFollowTheChartImage renders the sidecars' image the
// way the chart does and checks that it is the Collector's image, also after
// a user overrides image.repository and image.tag (and with the tag left to
// the chart's appVersion).
func TestHelmSidecarImagesFollowTheChartImage(t *testing.T) {
	root := testbin.RepoRoot(t)
	values := readHelmValues(t, filepath.Join(root, "deploy", "helm", "values.yaml"))
	if len(values.InitContainers) == 0 {
		t.Fatal("deploy/helm/values.yaml has no sidecar containers")
	}
	overridden := values
	overridden.Image.Repository, overridden.Image.Tag, overridden.Image.PullPolicy = "registry.example/team/otelcol-sdp", "1.2.3", "Always"
	untagged := values
	untagged.Image.Tag = ""
	for _, c := range append(slices.Clone(values.InitContainers), values.ExtraContainers...) {
		for _, tc := range []struct {
			name   string
			values helmValues
			want   string
		}{
			{"as shipped", values, values.Image.Repository + ":" + values.Image.Tag},
			{"overridden", overridden, "registry.example/team/otelcol-sdp:1.2.3"},
			{"tag from appVersion", untagged, values.Image.Repository + ":0.158.0"},
		} {
			if got := renderChartTemplate(t, c.Image, tc.values, "0.158.0"); got != tc.want {
				t.Errorf("%s: container %s renders image %q, want the Collector's %q", tc.name, c.Name, got, tc.want)
			}
			if got := renderChartTemplate(t, c.ImagePullPolicy, tc.values, "0.158.0"); got != tc.values.Image.PullPolicy {
				t.Errorf("%s: container %s renders imagePullPolicy %q, want image.pullPolicy %q", tc.name, c.Name, got, tc.values.Image.PullPolicy)
			}
		}
	}
}

// TestHelmValuesPassRestrictedPodSecurity checks the pod and every container
// the values describe against the "restricted" Pod Security Standard: non-root,
// no privilege escalation, every capability dropped, the RuntimeDefault
// seccomp profile (set on the pod or on the container).
func TestHelmValuesPassRestrictedPodSecurity(t *testing.T) {
	root := testbin.RepoRoot(t)
	values := readHelmValues(t, filepath.Join(root, "deploy", "helm", "values.yaml"))
	pod := values.PodSecurityContext
	if pod.RunAsUser != nil && *pod.RunAsUser == 0 {
		t.Error("podSecurityContext.runAsUser is 0 (root)")
	}
	containers := append([]container{{Name: "otelcol-sdp (the chart's Collector container)", SecurityContext: values.SecurityContext}},
		values.InitContainers...)
	containers = append(containers, values.ExtraContainers...)
	for _, c := range containers {
		sc := c.SecurityContext
		var problems []string
		if !isTrue(sc.RunAsNonRoot) && !isTrue(pod.RunAsNonRoot) {
			problems = append(problems, "runAsNonRoot is not true on the container or the pod")
		}
		if sc.RunAsUser != nil && *sc.RunAsUser == 0 {
			problems = append(problems, "runAsUser is 0")
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			problems = append(problems, "allowPrivilegeEscalation is not false")
		}
		if isTrue(sc.Privileged) {
			problems = append(problems, "privileged")
		}
		if !slices.Contains(sc.Capabilities.Drop, "ALL") {
			problems = append(problems, "capabilities.drop lacks ALL")
		}
		for _, add := range sc.Capabilities.Add {
			if add != "NET_BIND_SERVICE" {
				problems = append(problems, "adds capability "+add)
			}
		}
		seccomp := sc.SeccompProfile.Type
		if seccomp == "" {
			seccomp = pod.SeccompProfile.Type
		}
		if seccomp != "RuntimeDefault" && seccomp != "Localhost" {
			problems = append(problems, "seccompProfile.type is "+strings.TrimSpace(seccomp+" (unset)")+", want RuntimeDefault")
		}
		if len(problems) > 0 {
			t.Errorf("container %s fails the restricted Pod Security Standard: %s", c.Name, strings.Join(problems, "; "))
		}
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
