// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package dist

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// TestHelmPodsPassPodSecurityStandards evaluates every pod every release
// renders (the gateways in each mode, the fleet's consumers) against the
// "baseline" and "restricted" Pod Security Standards at the latest version,
// with the policy code of Kubernetes' own admission plugin.
func TestHelmPodsPassPodSecurityStandards(t *testing.T) {
	for _, r := range helmReleases() {
		t.Run(r.name, func(t *testing.T) {
			ws := workloads(renderRelease(t, r))
			if len(ws) == 0 {
				t.Fatal("no workload rendered")
			}
			for _, w := range ws {
				for _, level := range []api.Level{api.LevelBaseline, api.LevelRestricted} {
					for _, v := range podSecurityViolations(t, level, w.pod) {
						t.Errorf("%s %s breaks %q: %s", w.kind, w.name, level, v)
					}
				}
			}
		})
	}
}

// TestHelmPodSecurityCheckCatchesHostPorts shows the check above can fail:
// the chart's own default hostPorts in daemonset mode break "baseline".
func TestHelmPodSecurityCheckCatchesHostPorts(t *testing.T) {
	r := helmReleases()[1]
	if r.name != "daemonset" {
		t.Fatalf("release %s, want daemonset", r.name)
	}
	pod := collectorPod(t, renderRelease(t, r, "ports.otlp.hostPort=4317")).pod
	if len(podSecurityViolations(t, api.LevelBaseline, pod)) == 0 {
		t.Error("a daemonset pod with hostPort 4317 passed the baseline standard")
	}
}

// podSecurityViolations returns why pod breaks level, if it does.
func podSecurityViolations(t *testing.T, level api.Level, pod *corev1.PodTemplateSpec) []string {
	t.Helper()
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var problems []string
	for _, r := range evaluator.EvaluatePod(api.LevelVersion{Level: level, Version: api.LatestVersion()}, &pod.ObjectMeta, &pod.Spec) {
		if !r.Allowed {
			problems = append(problems, fmt.Sprintf("%s (%s)", r.ForbiddenReason, r.ForbiddenDetail))
		}
	}
	return problems
}

// TestHelmSecretsAreReadable checks that every Secret a rendered pod mounts
// is readable by the user its containers run as: Kubernetes writes the
// files owned by root with the volume's defaultMode, and the group is the
// pod's fsGroup, so a non-root pod needs fsGroup and group read, or read
// for others.
func TestHelmSecretsAreReadable(t *testing.T) {
	for _, r := range helmReleases() {
		t.Run(r.name, func(t *testing.T) {
			for _, w := range workloads(renderRelease(t, r)) {
				spec := w.pod.Spec
				for _, v := range spec.Volumes {
					if v.Secret == nil {
						continue
					}
					mode := int32(0o644)
					if v.Secret.DefaultMode != nil {
						mode = *v.Secret.DefaultMode
					}
					sc := spec.SecurityContext
					root := sc != nil && sc.RunAsUser != nil && *sc.RunAsUser == 0
					byGroup := sc != nil && sc.FSGroup != nil && mode&0o040 != 0
					if !root && !byGroup && mode&0o004 == 0 {
						t.Errorf("%s %s: secret volume %s has mode %#o and the pod no fsGroup with group read: its non-root containers cannot read it", w.kind, w.name, v.Name, mode)
					}
				}
			}
		})
	}
}
