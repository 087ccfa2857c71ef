// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package dist

import (
	"fmt"
	"slices"
	"strings"
)

// restrictedViolations lists what in pod breaks the "restricted" Pod
// Security Standard (which includes "baseline"): host namespaces, host
// ports, volume types, privilege, escalation, capabilities, root, seccomp.
func restrictedViolations(pod renderedPod) []string {
	var problems []string
	if pod.HostNetwork {
		problems = append(problems, "hostNetwork is true")
	}
	if pod.HostPID {
		problems = append(problems, "hostPID is true")
	}
	if pod.SecurityContext.RunAsUser != nil && *pod.SecurityContext.RunAsUser == 0 {
		problems = append(problems, "podSecurityContext.runAsUser is 0")
	}
	allowedVolumes := []string{"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"}
	for _, v := range pod.Volumes {
		for key := range v {
			if key != "name" && !slices.Contains(allowedVolumes, key) {
				problems = append(problems, fmt.Sprintf("volume %v is of type %s", v["name"], key))
			}
		}
	}
	for _, c := range append(slices.Clone(pod.Containers), pod.InitContainers...) {
		sc, podSC := c.SecurityContext, pod.SecurityContext
		var p []string
		for _, port := range c.Ports {
			if port.HostPort != 0 {
				p = append(p, fmt.Sprintf("port %s has hostPort %d", port.Name, port.HostPort))
			}
		}
		if !isTrue(sc.RunAsNonRoot) && !(sc.RunAsNonRoot == nil && isTrue(podSC.RunAsNonRoot)) {
			p = append(p, "runAsNonRoot is not true on the container or the pod")
		}
		if sc.RunAsUser != nil && *sc.RunAsUser == 0 {
			p = append(p, "runAsUser is 0")
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			p = append(p, "allowPrivilegeEscalation is not false")
		}
		if isTrue(sc.Privileged) {
			p = append(p, "privileged")
		}
		if !slices.Contains(sc.Capabilities.Drop, "ALL") {
			p = append(p, "capabilities.drop lacks ALL")
		}
		for _, add := range sc.Capabilities.Add {
			if add != "NET_BIND_SERVICE" {
				p = append(p, "adds capability "+add)
			}
		}
		seccomp := sc.SeccompProfile.Type
		if seccomp == "" {
			seccomp = podSC.SeccompProfile.Type
		}
		if seccomp != "RuntimeDefault" && seccomp != "Localhost" {
			p = append(p, "seccompProfile.type is "+strings.TrimSpace(seccomp+" (unset)")+", want RuntimeDefault")
		}
		for _, s := range p {
			problems = append(problems, "container "+c.Name+": "+s)
		}
	}
	return problems
}
