// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package dist

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/otelcol-sdp/otelcol-sdp/test/testbin"
)

// The Helm tests render the project's values files with real helm and the
// real official opentelemetry-collector chart, never with a model of it.
// The chart cannot be downloaded where the tests run, so the user names a
// checkout of the chart they deploy (0.170.x) in OTELCOL_SDP_HELM_CHART;
// .ci/run points it at ../shared/charts/opentelemetry-collector when that
// folder exists. Without it every Helm test skips, and TestMain prints a
// banner saying so, because a skip alone is invisible without -v.
const (
	// HelmChartEnv names the official chart's directory. A relative path is
	// taken from the repository's root.
	HelmChartEnv = "OTELCOL_SDP_HELM_CHART"
	// HelmEnv names the helm binary `make tools` installs (pinned).
	HelmEnv = "HELM_BIN"
)

// helmSkipped is set when a Helm test found no chart.
var helmSkipped sync.Once

// helmSkipBanner is what TestMain prints when the Helm tests did not run.
var helmSkipBanner = `************************************************************************
test/dist: the Helm tests did NOT run: ` + HelmChartEnv + ` is not set.
  They render deploy/helm/values.yaml and deploy/helm/fleet with real helm
  and the official opentelemetry-collector chart. To run them, point
  ` + HelmChartEnv + ` at a checkout of that chart (0.170.x), e.g.
    ` + HelmChartEnv + `=$PWD/../shared/charts/opentelemetry-collector make test
  (.ci/run sets it when ../shared/charts/opentelemetry-collector exists).
************************************************************************`

// helmChart returns the official chart's directory, or skips the test
// (recording that the banner is due) when OTELCOL_SDP_HELM_CHART is unset.
func helmChart(t *testing.T) string {
	t.Helper()
	dir := os.Getenv(HelmChartEnv)
	if dir == "" {
		helmSkipped.Do(func() {})
		t.Skipf("%s is not set: the Helm tests need the official chart (see the banner)", HelmChartEnv)
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(testbin.RepoRoot(t), dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "Chart.yaml")); err != nil {
		t.Fatalf("%s=%s is not a chart: %v", HelmChartEnv, dir, err)
	}
	return dir
}

// printHelmSkipBanner prints the banner if a Helm test skipped.
func printHelmSkipBanner() {
	printed := true
	helmSkipped.Do(func() { printed = false })
	if printed {
		fmt.Fprintln(os.Stderr, helmSkipBanner)
	}
}

// helmRelease is one way the project tells users to install the chart: a
// values file of the project, with the mode and --set flags of its install
// line.
type helmRelease struct {
	name      string // the subtest's name
	release   string
	namespace string
	values    string // relative to the repository's root
	sets      []string
}

// installSets are the --set flags of the README's and the values files'
// install lines: the image the user pushed.
var installSets = []string{"image.repository=registry.example/otelcol-sdp", "image.tag=0.1.0"}

// helmReleases are every release the project documents: the gateway values
// in each of the chart's modes (daemonset with the hostPorts the values set
// to 0) and the fleet, each as its install line says.
func helmReleases() []helmRelease {
	var rs []helmRelease
	for _, mode := range []string{"deployment", "daemonset", "statefulset"} {
		rs = append(rs, helmRelease{
			name: mode, release: "sdp", namespace: "observability",
			values: "deploy/helm/values.yaml", sets: append([]string{"mode=" + mode}, installSets...),
		})
	}
	return append(rs, helmRelease{
		name: "fleet", release: "sdp-fleet", namespace: "observability",
		values: "deploy/helm/fleet/gateway-values.yaml", sets: installSets,
	})
}

// helmArgs returns the values and --set flags of r with extra sets after.
func (r helmRelease) helmArgs(root string, extra ...string) []string {
	args := []string{"-f", filepath.Join(root, r.values)}
	for _, s := range append(append([]string(nil), r.sets...), extra...) {
		args = append(args, "--set", s)
	}
	return args
}

// runHelm runs the pinned helm and returns its standard output, or its
// error with standard error.
func runHelm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	helm := testbin.Path(t, HelmEnv)
	cmd := exec.Command(helm, args...)
	// helm keeps caches and repositories in the user's directories: keep
	// the tests off them.
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home+"/cache", "HELM_CONFIG_HOME="+home+"/config", "HELM_DATA_HOME="+home+"/data")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("helm %s: %v\n%s%s", strings.Join(args, " "), err, stderr.String(), stdout.String())
	}
	return stdout.String(), nil
}

// renderRelease runs `helm template` for r (plus extra --set flags) and
// decodes every object it renders.
func renderRelease(t *testing.T, r helmRelease, extra ...string) []runtime.Object {
	t.Helper()
	chart, root := helmChart(t), testbin.RepoRoot(t)
	args := append([]string{"template", r.release, chart, "--namespace", r.namespace}, r.helmArgs(root, extra...)...)
	out, err := runHelm(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := decodeManifests(out)
	if err != nil {
		t.Fatalf("helm template %s: %v", r.name, err)
	}
	return objs
}

// decodeManifests decodes a multi-document YAML stream into typed
// Kubernetes objects; an unknown kind or field is an error.
func decodeManifests(manifests string) ([]runtime.Object, error) {
	decoder := scheme.Codecs.UniversalDeserializer()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(manifests)))
	var objs []runtime.Object
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		obj, _, err := decoder.Decode(doc, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("%v in\n%s", err, doc)
		}
		objs = append(objs, obj)
	}
}

// stripComments drops the lines that are YAML comments (helm writes a
// "# Source:" line before every document).
func stripComments(doc []byte) []byte {
	var out []byte
	for line := range bytes.Lines(doc) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			out = append(out, line...)
		}
	}
	return out
}

// workload is a rendered object that runs pods.
type workload struct {
	kind, name string
	pod        *corev1.PodTemplateSpec
}

// workloads returns the pod templates of every Deployment, DaemonSet and
// StatefulSet in objs.
func workloads(objs []runtime.Object) []workload {
	var ws []workload
	for _, o := range objs {
		switch v := o.(type) {
		case *appsv1.Deployment:
			ws = append(ws, workload{"Deployment", v.Name, &v.Spec.Template})
		case *appsv1.DaemonSet:
			ws = append(ws, workload{"DaemonSet", v.Name, &v.Spec.Template})
		case *appsv1.StatefulSet:
			ws = append(ws, workload{"StatefulSet", v.Name, &v.Spec.Template})
		}
	}
	return ws
}

// findObject returns the one object of type T named name ("" for any).
func findObject[T interface {
	runtime.Object
	GetName() string
}](t *testing.T, objs []runtime.Object, name string) T {
	t.Helper()
	var found []T
	for _, o := range objs {
		if v, ok := o.(T); ok && (name == "" || v.GetName() == name) {
			found = append(found, v)
		}
	}
	if len(found) != 1 {
		var zero T
		t.Fatalf("%d rendered objects of type %T named %q, want 1", len(found), zero, name)
	}
	return found[0]
}
