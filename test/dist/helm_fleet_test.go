// SPDX-License-Identifier: Apache-2.0

//go:build e2e

// SPDX-License-Identifier: Apache-2.0

package dist

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/otelcol-sdp/otelcol-sdp/test/testbin"
)

// fleetValues is the part of deploy/helm/fleet/gateway-values.yaml the
// fleet tests read.
type fleetValues struct {
	Mode           string         `yaml:"mode"`
	ReplicaCount   int            `yaml:"replicaCount"`
	Config         map[string]any `yaml:"config"`
	ServiceAccount struct {
		Create bool   `yaml:"create"`
		Name   string `yaml:"name"`
	} `yaml:"serviceAccount"`
	ExtraVolumes []struct {
		Name   string `yaml:"name"`
		Secret *struct {
			SecretName string `yaml:"secretName"`
		} `yaml:"secret"`
	} `yaml:"extraVolumes"`
	ExtraVolumeMounts []volumeMount `yaml:"extraVolumeMounts"`
}

// TestHelmFleetConfigValidates merges the fleet gateways' `config` over the
// chart's default configuration as Helm does and validates the result with
// the built Collector.
func TestHelmFleetConfigValidates(t *testing.T) {
	collector := testbin.Path(t, testbin.CollectorEnv)
	root := testbin.RepoRoot(t)
	var values fleetValues
	readYAML(t, filepath.Join(root, "deploy", "helm", "fleet", "gateway-values.yaml"), &values)
	var defaults map[string]any
	readYAML(t, filepath.Join("testdata", "chart-default-config.yaml"), &defaults)
	merged := mergeValues(defaults, values.Config)
	b, err := yaml.Marshal(merged)
	if err != nil {
		t.Fatal(err)
	}
	// validate creates the processors, which load the TLS files: point
	// the Secret's mount at a directory with a certificate of the same
	// file names.
	tlsDir := t.TempDir()
	writeSelfSignedTLS(t, tlsDir)
	b = bytes.ReplaceAll(b, []byte("/etc/sdp/tls/"), []byte(tlsDir+"/"))
	file := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(collector, "validate", "--config", file)
	cmd.Env = append(os.Environ(), "MY_POD_IP=127.0.0.1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("otelcol-sdp validate of the fleet gateways' configuration: %v\n%s\n--- merged configuration ---\n%s", err, out, b)
	}
}

// TestHelmFleetWiring checks that the pieces of the fleet example agree: the
// resolver names the consumers' headless Service and port, the Role lets
// the gateways' service account read its EndpointSlices, and the TLS files
// the processor reads come from a mounted Secret.
func TestHelmFleetWiring(t *testing.T) {
	root := testbin.RepoRoot(t)
	dir := filepath.Join(root, "deploy", "helm", "fleet")
	var values fleetValues
	readYAML(t, filepath.Join(dir, "gateway-values.yaml"), &values)
	docs := readManifests(t, filepath.Join(dir, "rbac.yaml"), filepath.Join(dir, "consumers.yaml"))

	if values.ReplicaCount < 2 {
		t.Errorf("replicaCount = %d: the example is about several gateways agreeing", values.ReplicaCount)
	}
	processors, _ := values.Config["processors"].(map[string]any)
	sdpshard, _ := processors["sdpshard"].(map[string]any)
	resolver, _ := sdpshard["resolver"].(map[string]any)
	k8s, _ := resolver["k8s"].(map[string]any)
	service, _ := k8s["service"].(string)
	port, _ := k8s["port"].(int)
	name, namespace, _ := strings.Cut(service, ".")
	if name == "" || namespace == "" {
		t.Fatalf("resolver::k8s::service = %q, want name.namespace", service)
	}

	svc := findManifest(t, docs, "Service", name)
	spec, _ := svc["spec"].(map[string]any)
	if spec["clusterIP"] != "None" {
		t.Errorf("Service %s is not headless (clusterIP %v): the resolver needs one endpoint per pod", name, spec["clusterIP"])
	}
	ports, _ := spec["ports"].([]any)
	if len(ports) != 1 || ports[0].(map[string]any)["port"] != port {
		t.Errorf("Service %s ports %v, want the resolver's port %d", name, ports, port)
	}
	if ns := findManifest(t, docs, "Service", name)["metadata"].(map[string]any)["namespace"]; ns != namespace {
		t.Errorf("Service %s is in namespace %v, the resolver looks in %s", name, ns, namespace)
	}
	sts := findManifest(t, docs, "StatefulSet", "")
	if sts["spec"].(map[string]any)["serviceName"] != name {
		t.Errorf("StatefulSet serviceName %v, want %s (pod hostnames are the members' IDs)", sts["spec"].(map[string]any)["serviceName"], name)
	}

	role := findManifest(t, docs, "Role", "")
	if role["metadata"].(map[string]any)["namespace"] != namespace {
		t.Errorf("Role is not in the Service's namespace %s", namespace)
	}
	granted := false
	for _, r := range role["rules"].([]any) {
		rule := r.(map[string]any)
		if slices.Contains(rule["apiGroups"].([]any), any("discovery.k8s.io")) && slices.Contains(rule["resources"].([]any), any("endpointslices")) {
			verbs := rule["verbs"].([]any)
			granted = slices.Contains(verbs, any("get")) && slices.Contains(verbs, any("list")) && slices.Contains(verbs, any("watch"))
		}
	}
	if !granted {
		t.Error("the Role does not grant get, list and watch on discovery.k8s.io endpointslices")
	}
	binding := findManifest(t, docs, "RoleBinding", "")
	subjects := binding["subjects"].([]any)
	if !values.ServiceAccount.Create || len(subjects) != 1 || subjects[0].(map[string]any)["name"] != values.ServiceAccount.Name {
		t.Errorf("RoleBinding subjects %v do not name the chart's service account %q", subjects, values.ServiceAccount.Name)
	}
	if binding["roleRef"].(map[string]any)["name"] != role["metadata"].(map[string]any)["name"] {
		t.Error("the RoleBinding does not refer to the Role")
	}

	tls, _ := sdpshard["tls"].(map[string]any)
	secrets := map[string]bool{}
	for _, v := range values.ExtraVolumes {
		if v.Secret != nil {
			secrets[v.Name] = true
		}
	}
	for _, key := range []string{"ca_file", "cert_file", "key_file"} {
		path, _ := tls[key].(string)
		if !secrets[mountedVolume(values.ExtraVolumeMounts, path)] {
			t.Errorf("tls::%s %q is not in a mounted Secret", key, path)
		}
	}
}

// writeSelfSignedTLS writes tls.crt, tls.key and ca.crt (the certificate
// itself) as a kubernetes.io/tls Secret with a CA would hold them.
func writeSelfSignedTLS(t *testing.T, dir string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sdp-consumers.observability.svc"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, DNSNames: []string{"sdp-consumers.observability.svc"},
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	for name, b := range map[string][]byte{
		"tls.crt": cert, "ca.crt": cert,
		"tls.key": pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// readManifests decodes every YAML document of the files.
func readManifests(t *testing.T, paths ...string) []map[string]any {
	t.Helper()
	var docs []map[string]any
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(b))
		for {
			var doc map[string]any
			if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			docs = append(docs, doc)
		}
	}
	return docs
}

// findManifest returns the one document of kind (named name, when given).
func findManifest(t *testing.T, docs []map[string]any, kind, name string) map[string]any {
	t.Helper()
	var found []map[string]any
	for _, d := range docs {
		meta, _ := d["metadata"].(map[string]any)
		if d["kind"] == kind && (name == "" || meta["name"] == name) {
			found = append(found, d)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d manifests of kind %s named %q, want 1", len(found), kind, name)
	}
	return found[0]
}
