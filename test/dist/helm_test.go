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
	"time"

	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/otelcol-sdp/otelcol-sdp/test/testbin"
)

// collectorContainer is the name the chart gives the Collector's container.
const collectorContainer = "opentelemetry-collector"

// TestHelmLintStrict runs `helm lint --strict` on every documented release,
// with its values as shipped and with its install line's --set flags.
func TestHelmLintStrict(t *testing.T) {
	chart, root := helmChart(t), testbin.RepoRoot(t)
	for _, r := range helmReleases() {
		t.Run(r.name, func(t *testing.T) {
			shipped := r
			shipped.sets = slices.DeleteFunc(slices.Clone(r.sets), func(s string) bool { return slices.Contains(installSets, s) })
			for _, rel := range []helmRelease{shipped, r} {
				args := append([]string{"lint", "--strict", chart, "--namespace", r.namespace}, rel.helmArgs(root)...)
				if _, err := runHelm(t, args...); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// TestHelmRenderedConfigValidates validates the Collector configuration
// the chart renders for every release (the chart's defaults merged with the
// values, templates expanded) with the built otelcol-sdp, in the
// environment the chart gives the pod and with the files its mounts hold.
func TestHelmRenderedConfigValidates(t *testing.T) {
	collector := testbin.Path(t, testbin.CollectorEnv)
	for _, r := range helmReleases() {
		t.Run(r.name, func(t *testing.T) {
			objs := renderRelease(t, r)
			pod := collectorPod(t, objs)
			mounts := newPodMounts(t, pod.pod.Spec)
			config := mounts.rewrite(collectorOf(t, pod).VolumeMounts, relayConfig(t, objs))
			file := filepath.Join(t.TempDir(), "relay.yaml")
			if err := os.WriteFile(file, []byte(config), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(collector, "validate", "--config", file)
			cmd.Env = append(os.Environ(), "MY_POD_IP=127.0.0.1", "K8S_NODE_NAME=node-a", "K8S_NAMESPACE="+r.namespace, "K8S_POD_NAME=sdp-0")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("otelcol-sdp validate of the rendered configuration: %v\n%s\n--- configuration ---\n%s", err, out, config)
			}
		})
	}
}

// TestHelmSidecarsRunAsRendered starts every sdp-sidecar container of every
// rendered pod with the built sdp-sidecar and exactly its rendered
// arguments (paths moved into a directory per volume, listen ports onto
// loopback): a flag the binary does not know, or a file it cannot find in
// the container's mounts, fails here. Then every unix socket the rendered
// Collector configuration sends to, read through the Collector's own
// mounts, must be served by one of them: the sockets and volumes match.
func TestHelmSidecarsRunAsRendered(t *testing.T) {
	sidecar := testbin.Path(t, testbin.SidecarEnv)
	for _, r := range helmReleases() {
		t.Run(r.name, func(t *testing.T) {
			objs := renderRelease(t, r)
			started := 0
			for _, w := range workloads(objs) {
				mounts := newPodMounts(t, w.pod.Spec)
				for _, c := range sdpSidecars(w.pod.Spec) {
					args, listens := mounts.sidecarArgs(t, c)
					p := testbin.Start(t, t.TempDir(), c.Name, sidecar, args, nil)
					p.WaitReady(t, 15*time.Second, func() error { return dialAll(listens) })
					t.Cleanup(func() { p.Stop(t, 10*time.Second) })
					started++
				}
				if hasContainer(w.pod.Spec, collectorContainer) {
					collector := collectorOf(t, w)
					for _, e := range sdpshardEndpoints(t, relayConfig(t, objs)) {
						path, ok := strings.CutPrefix(e, "unix://")
						if !ok {
							continue
						}
						if err := dialAll([]string{"unix://" + mounts.path(t, collector.VolumeMounts, path)}); err != nil {
							t.Errorf("sdpshard endpoint %s, through the Collector's mounts, reaches no sidecar: %v", e, err)
						}
					}
				}
			}
			if started == 0 {
				t.Fatal("no sdp-sidecar container rendered")
			}
		})
	}
}

// TestHelmSidecarsOutliveTheCollector checks the gateway pod's sidecars are
// native sidecars (init containers with restartPolicy Always, stopped only
// after the Collector has exited, so its shutdown drain reaches them), and
// that the pod gives the drain time.
func TestHelmSidecarsOutliveTheCollector(t *testing.T) {
	for _, r := range helmReleases() {
		t.Run(r.name, func(t *testing.T) {
			pod := collectorPod(t, renderRelease(t, r)).pod.Spec
			for _, c := range pod.Containers {
				if c.Name != collectorContainer && slices.Equal(c.Command, []string{"/sdp-sidecar"}) {
					t.Errorf("sidecar %s is a plain container: Kubernetes may stop it before the Collector has drained", c.Name)
				}
			}
			for _, c := range pod.InitContainers {
				if slices.Equal(c.Command, []string{"/sdp-sidecar"}) && (c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways) {
					t.Errorf("sidecar %s is not a native sidecar (restartPolicy Always)", c.Name)
				}
			}
			if g := pod.TerminationGracePeriodSeconds; g == nil || *g < 10 {
				t.Errorf("terminationGracePeriodSeconds %v: too short for the Collector to drain", g)
			}
		})
	}
}

// TestHelmImagesFollowTheValues checks that every container the releases
// render runs the one image the values name, as the chart builds the
// Collector's: the install line's repository and tag (the distribution's
// version), global.imageRegistry, image.digest; and that an empty tag,
// which would make the chart run its own upstream Collector version,
// refuses to render.
func TestHelmImagesFollowTheValues(t *testing.T) {
	version := distVersion(t)
	for _, r := range helmReleases() {
		t.Run(r.name, func(t *testing.T) {
			if !slices.Contains(r.sets, "image.tag="+version) {
				t.Errorf("the install line sets %v, not image.tag=%s (builder-config.yaml's dist.version)", r.sets, version)
			}
			for _, c := range []struct {
				sets []string
				want string
			}{
				{nil, "registry.example/otelcol-sdp:0.1.0"},
				{[]string{"global.imageRegistry=mirror.example"}, "mirror.example/registry.example/otelcol-sdp:0.1.0"},
				{[]string{"image.digest=sha256:0123"}, "registry.example/otelcol-sdp@sha256:0123"},
			} {
				images := 0
				for _, w := range workloads(renderRelease(t, r, c.sets...)) {
					for _, ctr := range slices.Concat(w.pod.Spec.InitContainers, w.pod.Spec.Containers) {
						images++
						if ctr.Image != c.want {
							t.Errorf("%v: %s %s container %s runs %q, want %q", c.sets, w.kind, w.name, ctr.Name, ctr.Image, c.want)
						}
					}
				}
				if images < 2 {
					t.Errorf("%v: %d containers rendered, want the Collector and its SDP consumers", c.sets, images)
				}
			}
			chart, root := helmChart(t), testbin.RepoRoot(t)
			_, err := runHelm(t, append([]string{"template", r.release, chart}, r.helmArgs(root, "image.tag=")...)...)
			if err == nil || !strings.Contains(err.Error(), "image.tag must be the otelcol-sdp version") {
				t.Errorf("an empty image.tag rendered, or failed without naming image.tag: %v", err)
			}
		})
	}
}

// TestHelmMetricsPortIsDeclared checks that the Collector's own metrics,
// which hold wirecount's and sdpshard's counters, are served on a declared
// container port that a Service or PodMonitor can scrape.
func TestHelmMetricsPortIsDeclared(t *testing.T) {
	for _, r := range helmReleases() {
		t.Run(r.name, func(t *testing.T) {
			objs := renderRelease(t, r)
			var config map[string]any
			if err := yaml.Unmarshal([]byte(relayConfig(t, objs)), &config); err != nil {
				t.Fatal(err)
			}
			port := prometheusReaderPort(config)
			if port == 0 {
				t.Fatal("the rendered configuration serves no Prometheus metrics endpoint")
			}
			collector := collectorOf(t, collectorPod(t, objs))
			if !slices.ContainsFunc(collector.Ports, func(p corev1.ContainerPort) bool { return int(p.ContainerPort) == port }) {
				t.Errorf("the metrics port %d is not a container port of the Collector (ports %v)", port, collector.Ports)
			}
		})
	}
}

// prometheusReaderPort returns the port of the first pull Prometheus reader
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

// collectorPod returns the one rendered workload that runs the Collector.
func collectorPod(t *testing.T, objs []runtime.Object) workload {
	t.Helper()
	var found []workload
	for _, w := range workloads(objs) {
		if hasContainer(w.pod.Spec, collectorContainer) {
			found = append(found, w)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d rendered workloads run the Collector, want 1", len(found))
	}
	return found[0]
}

// collectorOf returns the Collector's container of w.
func collectorOf(t *testing.T, w workload) corev1.Container {
	t.Helper()
	for _, c := range w.pod.Spec.Containers {
		if c.Name == collectorContainer {
			return c
		}
	}
	t.Fatalf("%s %s has no %s container", w.kind, w.name, collectorContainer)
	return corev1.Container{}
}

func hasContainer(pod corev1.PodSpec, name string) bool {
	return slices.ContainsFunc(pod.Containers, func(c corev1.Container) bool { return c.Name == name })
}

// sdpSidecars returns the containers of pod that run /sdp-sidecar.
func sdpSidecars(pod corev1.PodSpec) []corev1.Container {
	var cs []corev1.Container
	for _, c := range slices.Concat(pod.InitContainers, pod.Containers) {
		if slices.Equal(c.Command, []string{"/sdp-sidecar"}) {
			cs = append(cs, c)
		}
	}
	return cs
}

// relayConfig returns the Collector configuration the chart rendered: the
// `relay` key of its ConfigMap.
func relayConfig(t *testing.T, objs []runtime.Object) string {
	t.Helper()
	var configs []string
	for _, o := range objs {
		if cm, ok := o.(*corev1.ConfigMap); ok {
			if relay, ok := cm.Data["relay"]; ok {
				configs = append(configs, relay)
			}
		}
	}
	if len(configs) != 1 {
		t.Fatalf("%d rendered ConfigMaps hold a relay configuration, want 1", len(configs))
	}
	return configs[0]
}

// sdpshardEndpoints returns processors.sdpshard.endpoints of config.
func sdpshardEndpoints(t *testing.T, config string) []string {
	t.Helper()
	var c struct {
		Processors struct {
			Sdpshard struct {
				Endpoints []string `yaml:"endpoints"`
			} `yaml:"sdpshard"`
		} `yaml:"processors"`
	}
	if err := yaml.Unmarshal([]byte(config), &c); err != nil {
		t.Fatal(err)
	}
	return c.Processors.Sdpshard.Endpoints
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
