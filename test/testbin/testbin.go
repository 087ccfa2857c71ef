// SPDX-License-Identifier: Apache-2.0

// Package testbin gives the end-to-end and distribution tests (build tag
// e2e) the binaries and tools they run. `make test` builds them and passes
// their paths in environment variables; a test run without them fails with
// a message saying what to build, it never skips.
package testbin

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Environment variables naming the binaries, set by the Makefile.
const (
	// CollectorEnv names the otelcol-sdp binary built by `make build`.
	CollectorEnv = "OTELCOL_SDP_BIN"
	// SidecarEnv names the sdp-sidecar binary built by `make build`.
	SidecarEnv = "SDP_SIDECAR_BIN"
	// TelemetrygenEnv names the telemetrygen installed by `make tools`.
	TelemetrygenEnv = "TELEMETRYGEN_BIN"
	// OCBEnv names the ocb (builder) installed by `make tools`.
	OCBEnv = "OCB_BIN"
)

// Path returns the executable named by the environment variable env, and
// fails the test when it is unset or not an executable file.
func Path(t testing.TB, env string) string {
	t.Helper()
	path := os.Getenv(env)
	if path == "" {
		t.Fatalf("%s is not set: run the end-to-end tests with `make test` (or `make build tools` and set %s)", env, env)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatalf("%s=%s: %v (run `make build tools`)", env, path, err)
	}
	if info.IsDir() || info.Mode()&0o111 == 0 {
		t.Fatalf("%s=%s is not an executable file", env, path)
	}
	return path
}

// RepoRoot returns the repository's root directory: the nearest ancestor
// of the working directory holding the root go.mod and builder-config.yaml.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if fileExists(filepath.Join(dir, "go.mod")) && fileExists(filepath.Join(dir, "builder-config.yaml")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("repository root (go.mod beside builder-config.yaml) not found above the working directory")
		}
		dir = parent
	}
}

// Run runs a command in dir, fails the test with its output when it fails,
// and returns its combined output.
func Run(t testing.TB, dir string, env []string, name string, args ...string) string {
	t.Helper()
	out, err := Command(dir, env, name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v in %s: %v\n%s", name, args, dir, err, out)
	}
	return string(out)
}

// Command prepares a command in dir with env added to the test's environment.
func Command(dir string, env []string, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	return cmd
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
