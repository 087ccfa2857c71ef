// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package dist

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/otelcol-sdp/otelcol-sdp/test/testbin"
)

// podMounts stands in for a pod's volumes on this machine: a directory per
// volume, shared by every container that mounts it, as on a node. Secret
// volumes hold a self-signed tls.crt, tls.key and ca.crt, the files of a
// kubernetes.io/tls Secret with a CA.
type podMounts struct {
	dirs map[string]string // volume name → directory
}

func newPodMounts(t *testing.T, pod corev1.PodSpec) podMounts {
	t.Helper()
	m := podMounts{dirs: map[string]string{}}
	for _, v := range pod.Volumes {
		dir := t.TempDir()
		if v.Secret != nil {
			writeSelfSignedTLS(t, dir)
		}
		m.dirs[v.Name] = dir
	}
	return m
}

// path returns where path, as a container with mounts sees it, lies on this
// machine; it fails the test when no mount of a pod volume holds path.
func (m podMounts) path(t *testing.T, mounts []corev1.VolumeMount, path string) string {
	t.Helper()
	for _, vm := range mounts {
		rel, ok := strings.CutPrefix(path, strings.TrimSuffix(vm.MountPath, "/")+"/")
		if !ok {
			continue
		}
		dir, ok := m.dirs[vm.Name]
		if !ok {
			t.Fatalf("mount %s names volume %q, which the pod does not have", vm.MountPath, vm.Name)
		}
		return filepath.Join(dir, vm.SubPath, rel)
	}
	t.Fatalf("%s is in no volume the container mounts (read-only root filesystem: nothing else is there)", path)
	return ""
}

// rewrite moves every path under one of mounts in text to this machine.
func (m podMounts) rewrite(mounts []corev1.VolumeMount, text string) string {
	for _, vm := range mounts {
		if dir, ok := m.dirs[vm.Name]; ok {
			text = strings.ReplaceAll(text, strings.TrimSuffix(vm.MountPath, "/")+"/", filepath.Join(dir, vm.SubPath)+"/")
		}
	}
	return text
}

// sidecarArgs returns c's arguments as they run here: absolute paths and
// unix:// endpoints moved into the pod's volumes, tcp:// endpoints onto
// free loopback ports; and the endpoints it listens on after the move.
func (m podMounts) sidecarArgs(t *testing.T, c corev1.Container) (args, listens []string) {
	t.Helper()
	listening := false
	for _, a := range c.Args {
		switch {
		case strings.HasPrefix(a, "unix://"):
			a = "unix://" + m.path(t, c.VolumeMounts, strings.TrimPrefix(a, "unix://"))
		case strings.HasPrefix(a, "tcp://"):
			a = fmt.Sprintf("tcp://127.0.0.1:%d", testbin.FreePorts(t, 1)[0])
		case strings.HasPrefix(a, "/"):
			a = m.path(t, c.VolumeMounts, a)
		}
		if listening {
			listens = append(listens, a)
		}
		listening = a == "-listen" || a == "--listen"
		args = append(args, a)
	}
	if len(listens) == 0 {
		t.Fatalf("container %s: no -listen argument in %v", c.Name, c.Args)
	}
	return args, listens
}

// dialAll connects to every unix:// or tcp:// endpoint once.
func dialAll(endpoints []string) error {
	for _, e := range endpoints {
		network, addr, _ := strings.Cut(e, "://")
		conn, err := net.DialTimeout(network, addr, time.Second)
		if err != nil {
			return err
		}
		conn.Close()
	}
	return nil
}
