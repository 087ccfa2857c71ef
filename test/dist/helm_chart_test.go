// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package dist

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"text/template"

	"go.yaml.in/yaml/v3"
)

// chartModes are the chart's workload modes the README offers for the values.
var chartModes = []string{"deployment", "daemonset", "statefulset"}

// The pod the official opentelemetry-collector chart renders, modelled on the
// facts of its 0.170.0 templates that decide what the Pod Security
// Standards and the image tags see. Checked against the chart's sources
// (templates/_pod.tpl, _config.tpl's podPortsConfig, deployment.yaml,
// daemonset.yaml, statefulset.yaml, values.yaml); the chart cannot be fetched
// where the tests run, so these facts are encoded here and its default values
// in testdata/chart-0.170.0-pod-defaults.yaml:
//
//   - Values: the user's values are merged over the chart's defaults, maps key
//     by key, null deleting a key, lists and scalars replaced (mergeValues).
//     So `ports.otlp.hostPort: 0` keeps the chart's otlp port and only
//     changes its hostPort.
//   - Modes: deployment.yaml, daemonset.yaml and statefulset.yaml each
//     include the one pod template ("opentelemetry-collector.pod"); only
//     daemonset.yaml passes isAgent true. daemonset.yaml and statefulset.yaml
//     set hostNetwork from .Values.hostNetwork and hostPID from
//     .Values.hostPID (statefulset: or presets.profiling.enabled).
//   - Ports (podPortsConfig): every enabled entry of `ports` becomes a
//     container port (containerPort, protocol); it gets a hostPort only when
//     isAgent, the entry's hostPort is non-empty and non-zero, and
//     distribution is not gke/autopilot. The chart's default otlp and
//     otlp-http ports carry hostPort 4317 and 4318: in daemonset mode they
//     reach the pod unless the values override them.
//   - Pod securityContext: podSecurityContext as is. Collector container
//     securityContext: securityContext as is, except that an empty one with
//     presets.logsCollection.storeCheckpoints becomes runAsUser 0.
//   - Collector image: global.imageRegistry + "/" when set, then
//     repository@digest when image.digest is set, else repository:tag with
//     `image.tag | default .Chart.AppVersion` (an empty tag becomes the
//     chart's appVersion, an upstream Collector version).
//   - initContainers and extraContainers: passed through `tpl (toYaml …)`
//     with the chart's context, so their strings are templates over .Values
//     and .Chart (renderValueTemplate implements default, required and quote).
//   - Volumes: the config map (configMap.create) and extraVolumes; presets
//     (logsCollection, hostMetrics) would add hostPath volumes, which is why
//     the test refuses values that enable a preset.
func renderChartPod(defaults chartDefaults, userValues map[string]any, mode string) (renderedPod, error) {
	values := mergeValues(defaults.Values, userValues)
	values["mode"] = mode
	if err := noPresetEnabled(values); err != nil {
		return renderedPod{}, err
	}
	isAgent := mode == "daemonset"
	var pod renderedPod
	if err := convertYAML(values["podSecurityContext"], &pod.SecurityContext); err != nil {
		return pod, fmt.Errorf("podSecurityContext: %w", err)
	}
	if mode == "daemonset" || mode == "statefulset" {
		pod.HostNetwork = truthy(values["hostNetwork"])
		pod.HostPID = truthy(values["hostPID"])
	}

	collector := renderedContainer{Name: defaults.Chart.Name}
	sc, _ := values["securityContext"].(map[string]any)
	if len(sc) == 0 && truthy(dig(values, "presets", "logsCollection", "storeCheckpoints")) {
		sc = map[string]any{"runAsUser": 0, "runAsGroup": 0}
	}
	if err := convertYAML(sc, &collector.SecurityContext); err != nil {
		return pod, fmt.Errorf("securityContext: %w", err)
	}
	repository, _ := dig(values, "image", "repository").(string)
	if registry, _ := dig(values, "global", "imageRegistry").(string); registry != "" {
		repository = registry + "/" + repository
	}
	if digest, _ := dig(values, "image", "digest").(string); digest != "" {
		collector.Image = repository + "@" + digest
	} else {
		tag, _ := dig(values, "image", "tag").(string)
		if tag == "" {
			tag = defaults.Chart.AppVersion
		}
		collector.Image = repository + ":" + tag
	}
	ports, _ := values["ports"].(map[string]any)
	names := make([]string, 0, len(ports))
	for name := range ports {
		names = append(names, name)
	}
	slices.Sort(names) // the chart ranges over the map in key order
	for _, name := range names {
		p, _ := ports[name].(map[string]any)
		if !truthy(p["enabled"]) {
			continue
		}
		port := renderedPort{Name: name, ContainerPort: toInt(p["containerPort"]), Protocol: fmt.Sprint(p["protocol"])}
		if isAgent && truthy(p["hostPort"]) && values["distribution"] != "gke/autopilot" {
			port.HostPort = toInt(p["hostPort"])
		}
		collector.Ports = append(collector.Ports, port)
	}
	pod.Containers = append(pod.Containers, collector)

	ctx := map[string]any{"Values": values, "Chart": map[string]any{
		"Name": defaults.Chart.Name, "Version": defaults.Chart.Version, "AppVersion": defaults.Chart.AppVersion,
	}}
	for _, list := range []struct {
		key string
		dst *[]renderedContainer
	}{{"extraContainers", &pod.Containers}, {"initContainers", &pod.InitContainers}} {
		items, _ := values[list.key].([]any)
		if len(items) == 0 {
			continue
		}
		text, err := yaml.Marshal(items)
		if err != nil {
			return pod, err
		}
		rendered, err := renderValueTemplate(string(text), ctx)
		if err != nil {
			return pod, fmt.Errorf("%s: %w", list.key, err)
		}
		var cs []renderedContainer
		if err := yaml.Unmarshal([]byte(rendered), &cs); err != nil {
			return pod, fmt.Errorf("%s as rendered: %w\n%s", list.key, err, rendered)
		}
		*list.dst = append(*list.dst, cs...)
	}

	if truthy(dig(values, "configMap", "create")) {
		pod.Volumes = append(pod.Volumes, map[string]any{"name": "opentelemetry-collector-configmap", "configMap": map[string]any{}})
	}
	extra, _ := values["extraVolumes"].([]any)
	for _, v := range extra {
		m, _ := v.(map[string]any)
		pod.Volumes = append(pod.Volumes, m)
	}
	return pod, nil
}

// renderValueTemplate renders text as the chart's `tpl` does, with the
// Helm functions the values use: default, required and quote.
func renderValueTemplate(text string, ctx map[string]any) (string, error) {
	empty := func(v any) bool {
		s, isString := v.(string)
		return v == nil || (isString && s == "")
	}
	funcs := template.FuncMap{
		"default": func(fallback, v any) any {
			if empty(v) {
				return fallback
			}
			return v
		},
		"required": func(msg string, v any) (any, error) {
			if empty(v) {
				return nil, errors.New(msg)
			}
			return v, nil
		},
		"quote": func(v any) string { return fmt.Sprintf("%q", fmt.Sprint(v)) },
	}
	tmpl, err := template.New("tpl").Funcs(funcs).Option("missingkey=error").Parse(text)
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	if err := tmpl.Execute(&out, ctx); err != nil {
		return "", err
	}
	return out.String(), nil
}

// chartDefaults is testdata/chart-0.170.0-pod-defaults.yaml.
type chartDefaults struct {
	Chart struct {
		Name       string `yaml:"name"`
		Version    string `yaml:"version"`
		AppVersion string `yaml:"appVersion"`
	} `yaml:"chart"`
	Values map[string]any `yaml:"values"`
}

func readChartDefaults(t *testing.T) chartDefaults {
	t.Helper()
	var d chartDefaults
	readYAML(t, filepath.Join("testdata", "chart-0.170.0-pod-defaults.yaml"), &d)
	if d.Chart.AppVersion == "" || len(d.Values) == 0 {
		t.Fatal("testdata/chart-0.170.0-pod-defaults.yaml: no chart appVersion or values")
	}
	return d
}

// renderedPod is the part of a rendered pod spec the checks read.
type renderedPod struct {
	SecurityContext securityContext
	HostNetwork     bool
	HostPID         bool
	Containers      []renderedContainer
	InitContainers  []renderedContainer
	Volumes         []map[string]any
}

// renderedContainer is a container of the rendered pod.
type renderedContainer struct {
	Name            string          `yaml:"name"`
	Image           string          `yaml:"image"`
	ImagePullPolicy string          `yaml:"imagePullPolicy"`
	SecurityContext securityContext `yaml:"securityContext"`
	Ports           []renderedPort  `yaml:"ports"`
}

type renderedPort struct {
	Name          string `yaml:"name"`
	ContainerPort int    `yaml:"containerPort"`
	HostPort      int    `yaml:"hostPort"`
	Protocol      string `yaml:"protocol"`
}

// noPresetEnabled refuses values that turn on a chart preset: presets add
// volumes, ports and security settings this model does not encode.
func noPresetEnabled(values map[string]any) error {
	presets, _ := values["presets"].(map[string]any)
	for name, p := range presets {
		if truthy(dig(map[string]any{"p": p}, "p", "enabled")) {
			return fmt.Errorf("presets.%s is enabled: the chart model in helm_chart_test.go does not encode presets", name)
		}
	}
	return nil
}

// dig returns the value at the path of nested maps, or nil.
func dig(m map[string]any, path ...string) any {
	var v any = m
	for _, k := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

// truthy is Go template truth: not nil, false, 0 or "".
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case int:
		return x != 0
	case float64:
		return x != 0
	case string:
		return x != ""
	}
	return true
}

func toInt(v any) int {
	switch x := v.(type) {
	case int:
		return x
	case float64:
		return int(x)
	}
	return 0
}

// convertYAML decodes a generic value into a typed one through YAML.
func convertYAML(v, dst any) error {
	if v == nil {
		return nil
	}
	b, err := yaml.Marshal(v)
	if err != nil {
		return err
	}
	return yaml.Unmarshal(b, dst)
}

// TestChartModelMatchesTheChartFacts pins the model against what the chart
// is known to do with its own defaults, so that a wrong model cannot pass
// the values: in daemonset mode the default ports carry hostPorts and an
// empty image tag becomes the chart's appVersion; an empty securityContext
// fails restricted.
func TestChartModelMatchesTheChartFacts(t *testing.T) {
	defaults := readChartDefaults(t)
	user := map[string]any{"image": map[string]any{"repository": "otel/opentelemetry-collector-k8s"}}
	for _, mode := range chartModes {
		pod, err := renderChartPod(defaults, user, mode)
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		c := pod.Containers[0]
		if want := "otel/opentelemetry-collector-k8s:" + defaults.Chart.AppVersion; c.Image != want {
			t.Errorf("%s: image %q, want %q (empty tag: the chart's appVersion)", mode, c.Image, want)
		}
		hostPorts := map[string]int{}
		for _, p := range c.Ports {
			if p.HostPort != 0 {
				hostPorts[p.Name] = p.HostPort
			}
		}
		if mode == "daemonset" {
			if hostPorts["otlp"] != 4317 || hostPorts["otlp-http"] != 4318 {
				t.Errorf("daemonset with the chart's defaults: hostPorts %v, want otlp 4317 and otlp-http 4318", hostPorts)
			}
		} else if len(hostPorts) != 0 {
			t.Errorf("%s: hostPorts %v, want none outside daemonset mode", mode, hostPorts)
		}
		if v := restrictedViolations(pod); len(v) == 0 {
			t.Errorf("%s: the chart's defaults pass restricted in the model; they set no securityContext and must fail", mode)
		}
	}
	user["image"].(map[string]any)["digest"] = "sha256:abc"
	pod, err := renderChartPod(defaults, user, "deployment")
	if err != nil {
		t.Fatal(err)
	}
	if got := pod.Containers[0].Image; got != "otel/opentelemetry-collector-k8s@sha256:abc" {
		t.Errorf("with image.digest: image %q, want repository@digest", got)
	}
}
