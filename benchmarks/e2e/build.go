// SPDX-License-Identifier: Apache-2.0

package e2ebench

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"go.yaml.in/yaml/v3"
)

// BuildPlain returns the binary of the plain baseline Collector described by
// the ocb manifest, building it with ocb into a directory of cacheDir named
// after a hash of the manifest (which pins every component's version) and
// the platform, unless a binary is already there. ocb's own output goes to
// log.
func BuildPlain(ocb, manifest, cacheDir string, log io.Writer) (string, error) {
	return buildCached(ocb, manifest, cacheDir, "plain", "", log)
}

// BuildCollector is BuildPlain for any ocb manifest: the binary is built
// into a directory of cacheDir named prefix-KEY, where KEY hashes the
// manifest, the platform and the version ocb reports (`ocb version`), so
// that a manifest built with another ocb is built again. The anchor
// Collectors (benchmarks/anchors) are built with it.
func BuildCollector(ocb, manifest, cacheDir, prefix string, log io.Writer) (string, error) {
	out, err := exec.Command(ocb, "version").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s version: %w: %s", ocb, err, out)
	}
	version := strings.TrimSpace(string(out))
	if version == "" {
		return "", fmt.Errorf("%s version printed nothing", ocb)
	}
	return buildCached(ocb, manifest, cacheDir, prefix, version, log)
}

// buildCached builds manifest with ocb into cacheDir/prefix-KEY unless the
// binary is there; salt, when not empty, is part of KEY.
func buildCached(ocb, manifest, cacheDir, prefix, salt string, log io.Writer) (string, error) {
	b, err := os.ReadFile(manifest)
	if err != nil {
		return "", err
	}
	// ocb runs in the cache directory: a relative path to it (the -ocb
	// default) would be taken relative to that directory.
	if ocb, err = filepath.Abs(ocb); err != nil {
		return "", err
	}
	name, output, err := manifestOutput(b)
	if err != nil {
		return "", fmt.Errorf("%s: %w", manifest, err)
	}
	dir := filepath.Join(cacheDir, prefix+"-"+buildKey(b, salt, runtime.GOOS, runtime.GOARCH))
	bin := filepath.Join(dir, output, name)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "manifest.yaml"), b, 0o644); err != nil {
		return "", err
	}
	cmd := exec.Command(ocb, "--config", "manifest.yaml", "--ldflags=-s -w")
	cmd.Dir = dir
	// The same settings as the release build of otelcol-sdp (Makefile).
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("ocb --config %s (in %s): %w", manifest, dir, err)
	}
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("ocb built no %s: %w", bin, err)
	}
	return bin, nil
}

// buildKey names a cached build: the manifest, the salt (none for the plain
// baseline, whose key predates it) and the target platform.
func buildKey(manifest []byte, salt, goos, goarch string) string {
	h := sha256.New()
	h.Write(manifest)
	if salt != "" {
		fmt.Fprintf(h, "\x00%s", salt)
	}
	fmt.Fprintf(h, "\x00%s/%s", goos, goarch)
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// manifestOutput reads dist.name and dist.output_path of an ocb manifest.
func manifestOutput(manifest []byte) (name, output string, err error) {
	var m struct {
		Dist struct {
			Name       string `yaml:"name"`
			OutputPath string `yaml:"output_path"`
		} `yaml:"dist"`
	}
	if err := yaml.Unmarshal(manifest, &m); err != nil {
		return "", "", err
	}
	switch {
	case m.Dist.Name == "":
		return "", "", errors.New("dist.name is missing")
	case m.Dist.OutputPath == "" || filepath.IsAbs(m.Dist.OutputPath):
		return "", "", errors.New("dist.output_path must be a relative path")
	}
	return m.Dist.Name, filepath.Clean(m.Dist.OutputPath), nil
}

// BuildFloor builds the floor server (cmd/otlpfloor) of this module into
// dir with goTool, with the release build's settings (Makefile), and returns
// the binary. The Go build cache makes a rebuild cheap.
func BuildFloor(goTool, dir string, log io.Writer) (string, error) {
	bin := filepath.Join(dir, "otlpfloor")
	cmd := exec.Command(goTool, "build", "-trimpath", "-ldflags=-s -w", "-o", bin,
		"github.com/otelcol-sdp/otelcol-sdp/benchmarks/e2e/cmd/otlpfloor")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building the floor server: %w", err)
	}
	return bin, nil
}
