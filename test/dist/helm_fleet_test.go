// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package dist

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// TestHelmFleetWiring checks that the pieces of the fleet release, as the
// chart renders them, agree: the resolver names the consumers' headless
// Service, its namespace and port; the consumers listen on the port the
// Service targets; the Role lets the gateways' service account read the
// Service's EndpointSlices; the TLS files the processor reads come from a
// mounted Secret and it asks for the name the consumers' certificate holds.
func TestHelmFleetWiring(t *testing.T) {
	r := helmReleases()[3]
	if r.name != "fleet" {
		t.Fatalf("release %s, want fleet", r.name)
	}
	objs := renderRelease(t, r)
	gateways := findObject[*appsv1.Deployment](t, objs, "")
	if gateways.Spec.Replicas == nil || *gateways.Spec.Replicas < 2 {
		t.Errorf("gateway replicas %v: the example is about several gateways agreeing", gateways.Spec.Replicas)
	}
	var config struct {
		Processors struct {
			Sdpshard struct {
				Resolver struct {
					K8s struct {
						Service string `yaml:"service"`
						Port    int32  `yaml:"port"`
					} `yaml:"k8s"`
				} `yaml:"resolver"`
				TLS map[string]string `yaml:"tls"`
			} `yaml:"sdpshard"`
		} `yaml:"processors"`
	}
	if err := yaml.Unmarshal([]byte(relayConfig(t, objs)), &config); err != nil {
		t.Fatal(err)
	}
	shard := config.Processors.Sdpshard
	name, namespace, _ := strings.Cut(shard.Resolver.K8s.Service, ".")
	if name == "" || namespace != r.namespace {
		t.Fatalf("resolver::k8s::service = %q, want name.%s (the release's namespace)", shard.Resolver.K8s.Service, r.namespace)
	}

	svc := findObject[*corev1.Service](t, objs, name)
	if svc.Namespace != namespace {
		t.Errorf("Service %s is in namespace %q, the resolver looks in %s", name, svc.Namespace, namespace)
	}
	if svc.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("Service %s is not headless (clusterIP %q): the resolver needs one endpoint per pod", name, svc.Spec.ClusterIP)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != shard.Resolver.K8s.Port {
		t.Fatalf("Service %s ports %v, want one, the resolver's port %d", name, svc.Spec.Ports, shard.Resolver.K8s.Port)
	}
	consumers := findObject[*appsv1.StatefulSet](t, objs, "")
	if consumers.Spec.ServiceName != name {
		t.Errorf("StatefulSet serviceName %q, want %s (pod hostnames are the members' IDs)", consumers.Spec.ServiceName, name)
	}
	if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(consumers.Spec.Template.Labels)) {
		t.Errorf("Service %s selects %v, which the consumers' pods (labels %v) do not match", name, svc.Spec.Selector, consumers.Spec.Template.Labels)
	}
	target := svc.Spec.Ports[0].TargetPort.String()
	sidecars := sdpSidecars(consumers.Spec.Template.Spec)
	if len(sidecars) != 1 {
		t.Fatalf("%d sdp-sidecar containers in the consumers' pod, want 1", len(sidecars))
	}
	served := slices.ContainsFunc(sidecars[0].Ports, func(p corev1.ContainerPort) bool {
		return (p.Name == target || p.ContainerPort == svc.Spec.Ports[0].TargetPort.IntVal) &&
			slices.ContainsFunc(sidecars[0].Args, func(a string) bool { return strings.HasSuffix(a, ":"+itoa(p.ContainerPort)) })
	})
	if !served {
		t.Errorf("the Service targets port %s, which the consumer neither declares nor listens on (ports %v, args %v)", target, sidecars[0].Ports, sidecars[0].Args)
	}

	role := findObject[*rbacv1.Role](t, objs, "")
	granted := role.Namespace == namespace && slices.ContainsFunc(role.Rules, func(rule rbacv1.PolicyRule) bool {
		return slices.Contains(rule.APIGroups, "discovery.k8s.io") && slices.Contains(rule.Resources, "endpointslices") &&
			slices.Contains(rule.Verbs, "get") && slices.Contains(rule.Verbs, "list") && slices.Contains(rule.Verbs, "watch")
	})
	if !granted {
		t.Errorf("the Role %v in %q does not grant get, list and watch on discovery.k8s.io endpointslices in %s", role.Rules, role.Namespace, namespace)
	}
	binding := findObject[*rbacv1.RoleBinding](t, objs, "")
	account := gateways.Spec.Template.Spec.ServiceAccountName
	if len(binding.Subjects) != 1 || binding.Subjects[0].Kind != "ServiceAccount" || binding.Subjects[0].Name != account || binding.Subjects[0].Namespace != namespace {
		t.Errorf("RoleBinding subjects %v, want the gateways' service account %s/%s", binding.Subjects, namespace, account)
	}
	if binding.RoleRef.Kind != "Role" || binding.RoleRef.Name != role.Name {
		t.Errorf("RoleBinding refers to %v, not the Role %s", binding.RoleRef, role.Name)
	}
	findObject[*corev1.ServiceAccount](t, objs, account)

	secrets := map[string]bool{}
	for _, v := range gateways.Spec.Template.Spec.Volumes {
		secrets[v.Name] = v.Secret != nil
	}
	collector := collectorOf(t, collectorPod(t, objs))
	for _, key := range []string{"ca_file", "cert_file", "key_file"} {
		path := shard.TLS[key]
		volume := ""
		for _, m := range collector.VolumeMounts {
			if strings.HasPrefix(path, strings.TrimSuffix(m.MountPath, "/")+"/") {
				volume = m.Name
			}
		}
		if !secrets[volume] {
			t.Errorf("tls::%s %q is not in a Secret the Collector mounts", key, path)
		}
	}
	if want := name + "." + namespace + ".svc"; shard.TLS["server_name_override"] != want {
		t.Errorf("tls::server_name_override %q, want %q, the name the consumers' certificate holds", shard.TLS["server_name_override"], want)
	}
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }

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
