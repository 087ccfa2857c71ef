// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package dist

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/otelcol-sdp/otelcol-sdp/test/testbin"
)

// helmValues is the part of deploy/helm/values.yaml the test reads.
type helmValues struct {
	Mode    string `yaml:"mode"`
	Command struct {
		Name string `yaml:"name"`
	} `yaml:"command"`
	Image struct {
		Repository string `yaml:"repository"`
		Tag        string `yaml:"tag"`
		PullPolicy string `yaml:"pullPolicy"`
	} `yaml:"image"`
	Config                        map[string]any       `yaml:"config"`
	PodSecurityContext            securityContext      `yaml:"podSecurityContext"`
	SecurityContext               securityContext      `yaml:"securityContext"`
	TerminationGracePeriodSeconds int                  `yaml:"terminationGracePeriodSeconds"`
	Ports                         map[string]chartPort `yaml:"ports"`
	InitContainers                []container          `yaml:"initContainers"`
	ExtraContainers               []container          `yaml:"extraContainers"`
	ExtraVolumes                  []struct {
		Name     string `yaml:"name"`
		EmptyDir *struct {
			Medium string `yaml:"medium"`
		} `yaml:"emptyDir"`
	} `yaml:"extraVolumes"`
	ExtraVolumeMounts []volumeMount `yaml:"extraVolumeMounts"`
}

// container is a Kubernetes container as the values write it.
type container struct {
	Name            string          `yaml:"name"`
	Image           string          `yaml:"image"`
	ImagePullPolicy string          `yaml:"imagePullPolicy"`
	RestartPolicy   string          `yaml:"restartPolicy"`
	Command         []string        `yaml:"command"`
	Args            []string        `yaml:"args"`
	VolumeMounts    []volumeMount   `yaml:"volumeMounts"`
	SecurityContext securityContext `yaml:"securityContext"`
}

// securityContext holds the fields of a pod's or container's security
// context that the "restricted" Pod Security Standard constrains.
type securityContext struct {
	RunAsNonRoot             *bool  `yaml:"runAsNonRoot"`
	RunAsUser                *int64 `yaml:"runAsUser"`
	AllowPrivilegeEscalation *bool  `yaml:"allowPrivilegeEscalation"`
	ReadOnlyRootFilesystem   *bool  `yaml:"readOnlyRootFilesystem"`
	Privileged               *bool  `yaml:"privileged"`
	Capabilities             struct {
		Add  []string `yaml:"add"`
		Drop []string `yaml:"drop"`
	} `yaml:"capabilities"`
	SeccompProfile struct {
		Type string `yaml:"type"`
	} `yaml:"seccompProfile"`
}

// chartPort is one entry of the chart's `ports` value.
type chartPort struct {
	Enabled       bool   `yaml:"enabled"`
	ContainerPort int    `yaml:"containerPort"`
	ServicePort   int    `yaml:"servicePort"`
	Protocol      string `yaml:"protocol"`
}

type volumeMount struct {
	Name      string `yaml:"name"`
	MountPath string `yaml:"mountPath"`
}

// TestHelmValuesConfigValidates merges the values' `config` over the chart's
// default configuration the way Helm merges values (maps merged key by key,
// null deletes, lists replaced) and validates the result with the built
// Collector, MY_POD_IP set as the chart sets it.
func TestHelmValuesConfigValidates(t *testing.T) {
	collector := testbin.Path(t, testbin.CollectorEnv)
	root := testbin.RepoRoot(t)
	values := readHelmValues(t, filepath.Join(root, "deploy", "helm", "values.yaml"))

	var defaults map[string]any
	readYAML(t, filepath.Join("testdata", "chart-default-config.yaml"), &defaults)
	merged := mergeValues(defaults, values.Config)

	// The chart refuses to render without health_check.
	service, _ := merged["service"].(map[string]any)
	extensions, _ := service["extensions"].([]any)
	if !slices.Contains(extensions, any("health_check")) {
		t.Errorf("config.service.extensions %v lacks health_check, which the chart requires", extensions)
	}

	b, err := yaml.Marshal(merged)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "relay.yaml")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(collector, "validate", "--config", file)
	// The environment the chart's pod gives the Collector.
	cmd.Env = append(os.Environ(), "MY_POD_IP=127.0.0.1", "OTEL_K8S_NODE_NAME=node-a",
		"OTEL_K8S_NODE_IP=10.0.0.1", "OTEL_K8S_NAMESPACE=observability", "OTEL_K8S_POD_NAME=sdp-0",
		"OTEL_K8S_POD_IP=127.0.0.1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("otelcol-sdp validate of the chart's configuration: %v\n%s\n--- merged configuration ---\n%s", err, out, b)
	}
}

// TestHelmValuesWireTheSidecars checks the pod the values describe: the
// chart runs the Collector at the path the Dockerfile puts it, and every
// sdpshard endpoint is a unix socket in an in-memory emptyDir mounted in the
// Collector and served by one sidecar container that mounts it too.
func TestHelmValuesWireTheSidecars(t *testing.T) {
	root := testbin.RepoRoot(t)
	values := readHelmValues(t, filepath.Join(root, "deploy", "helm", "values.yaml"))

	if values.Command.Name != "otelcol-sdp" {
		t.Errorf("command.name = %q: the image has the Collector at /otelcol-sdp", values.Command.Name)
	}
	if !slices.Contains([]string{"deployment", "daemonset", "statefulset"}, values.Mode) {
		t.Errorf("mode = %q, want deployment, daemonset or statefulset", values.Mode)
	}
	memoryVolumes := map[string]bool{}
	for _, v := range values.ExtraVolumes {
		if v.EmptyDir != nil && v.EmptyDir.Medium == "Memory" {
			memoryVolumes[v.Name] = true
		}
	}
	processors, _ := values.Config["processors"].(map[string]any)
	sdpshard, _ := processors["sdpshard"].(map[string]any)
	endpoints, _ := sdpshard["endpoints"].([]any)
	if len(endpoints) == 0 {
		t.Fatal("config.processors.sdpshard.endpoints is empty")
	}
	for _, e := range endpoints {
		endpoint, _ := e.(string)
		socket, ok := strings.CutPrefix(endpoint, "unix://")
		if !ok {
			t.Errorf("sdpshard endpoint %q is not a unix socket", endpoint)
			continue
		}
		volume := mountedVolume(values.ExtraVolumeMounts, socket)
		if !memoryVolumes[volume] {
			t.Errorf("socket %s is not in an emptyDir with medium Memory mounted in the Collector (volume %q)", socket, volume)
			continue
		}
		servers := 0
		for _, c := range values.InitContainers {
			listens := slices.Contains(c.Args, endpoint)
			if listens && mountedVolume(c.VolumeMounts, socket) == volume {
				servers++
				if !slices.Equal(c.Command, []string{"/sdp-sidecar"}) {
					t.Errorf("container %s runs %v: the image has the sidecar at /sdp-sidecar", c.Name, c.Command)
				}
				// A native sidecar: started before the Collector and
				// stopped only after it has exited, so the Collector's
				// shutdown drain still reaches it.
				if c.RestartPolicy != "Always" {
					t.Errorf("sidecar %s has restartPolicy %q: want Always (a native sidecar, stopped after the Collector)", c.Name, c.RestartPolicy)
				}
			}
		}
		for _, c := range values.ExtraContainers {
			if slices.Contains(c.Args, endpoint) {
				t.Errorf("sidecar %s for %s is an extraContainer: Kubernetes may stop it before the Collector has drained; make it a native sidecar in initContainers", c.Name, endpoint)
			}
		}
		if servers != 1 {
			t.Errorf("%d native sidecar containers listen on %s with the socket volume mounted, want 1", servers, endpoint)
		}
	}
	if values.TerminationGracePeriodSeconds < 10 {
		t.Errorf("terminationGracePeriodSeconds = %d: too short for the Collector to drain to its sidecars", values.TerminationGracePeriodSeconds)
	}
}

// mountedVolume returns the volume whose mount holds path, or "".
func mountedVolume(mounts []volumeMount, path string) string {
	for _, m := range mounts {
		if strings.HasPrefix(path, strings.TrimSuffix(m.MountPath, "/")+"/") {
			return m.Name
		}
	}
	return ""
}

// mergeValues merges src over dst like Helm merges values: maps key by key,
// a null in src deletes the key, anything else in src replaces dst's value.
func mergeValues(dst, src map[string]any) map[string]any {
	out := make(map[string]any, len(dst))
	for k, v := range dst {
		out[k] = v
	}
	for k, v := range src {
		if v == nil {
			delete(out, k)
			continue
		}
		srcMap, srcIsMap := v.(map[string]any)
		dstMap, dstIsMap := out[k].(map[string]any)
		if srcIsMap && dstIsMap {
			out[k] = mergeValues(dstMap, srcMap)
			continue
		}
		out[k] = v
	}
	return out
}

func readHelmValues(t *testing.T, path string) helmValues {
	t.Helper()
	var v helmValues
	readYAML(t, path, &v)
	return v
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
