// SPDX-License-Identifier: Apache-2.0

package e2ebench

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestAddPprof(t *testing.T) {
	for name, in := range map[string]string{
		"no extensions":    "receivers: {otlp: {}}\nservice:\n  pipelines: {}\n",
		"other extensions": "extensions:\n  wirestage: {processors: [sdpshard]}\nservice:\n  extensions: [wirestage]\n",
		"already there":    "extensions:\n  pprof: {}\nservice:\n  extensions: [pprof]\n",
	} {
		t.Run(name, func(t *testing.T) {
			out, err := addPprof([]byte(in), "127.0.0.1:1777")
			if err != nil {
				t.Fatal(err)
			}
			var cfg struct {
				Extensions map[string]map[string]any `yaml:"extensions"`
				Service    struct {
					Extensions []string `yaml:"extensions"`
				} `yaml:"service"`
			}
			if err := yaml.Unmarshal(out, &cfg); err != nil {
				t.Fatal(err)
			}
			if cfg.Extensions["pprof"]["endpoint"] != "127.0.0.1:1777" {
				t.Errorf("extensions: %v", cfg.Extensions)
			}
			n := 0
			for _, id := range cfg.Service.Extensions {
				if id == "pprof" {
					n++
				}
			}
			if n != 1 {
				t.Errorf("service::extensions %v lists pprof %d times", cfg.Service.Extensions, n)
			}
			if strings.Contains(in, "wirestage") && !strings.Contains(string(out), "wirestage") {
				t.Errorf("lost the other extension:\n%s", out)
			}
		})
	}
	if _, err := addPprof([]byte("service: [a]\n"), "x"); err == nil {
		t.Error("a service that is not a mapping: no error")
	}
}

func TestManifestOutput(t *testing.T) {
	name, out, err := manifestOutput([]byte("dist:\n  name: otelcol-plain\n  output_path: ./otelcol-plain\n"))
	if err != nil || name != "otelcol-plain" || out != "otelcol-plain" {
		t.Errorf("got %q %q %v", name, out, err)
	}
	for _, bad := range []string{"dist:\n  output_path: ./x\n", "dist:\n  name: x\n", "dist:\n  name: x\n  output_path: /abs\n"} {
		if _, _, err := manifestOutput([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if buildKey([]byte("a"), "", "linux", "amd64") == buildKey([]byte("a"), "", "darwin", "arm64") ||
		buildKey([]byte("a"), "", "linux", "amd64") == buildKey([]byte("b"), "", "linux", "amd64") {
		t.Error("buildKey does not tell manifests or platforms apart")
	}
	if buildKey([]byte("a"), "ocb v0.161.0", "linux", "amd64") == buildKey([]byte("a"), "ocb v0.165.0", "linux", "amd64") ||
		buildKey([]byte("a"), "ocb v0.161.0", "linux", "amd64") == buildKey([]byte("a"), "", "linux", "amd64") {
		t.Error("buildKey does not tell ocb versions apart")
	}
	// Without a salt the key is the one the plain baseline always had, so
	// its cached builds stay valid: sha256 of the manifest, a zero byte and
	// the platform.
	sum := sha256.Sum256([]byte("a\x00linux/amd64"))
	if got, want := buildKey([]byte("a"), "", "linux", "amd64"), hex.EncodeToString(sum[:])[:16]; got != want {
		t.Errorf("buildKey without a salt = %s, want %s", got, want)
	}
}

func TestValidateReason(t *testing.T) {
	out := []byte(`2026-11-24T22:00:00Z info something
Error: failed to get config: cannot unmarshal the configuration: decoding failed due to the following error(s):

'extensions' unknown type: "wirestage" for id: "wirestage" (valid values: [pprof])
`)
	if got, want := validateReason(out, errors.New("exit status 1")), `'extensions' unknown type: "wirestage" for id: "wirestage" (valid values: [pprof])`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := validateReason([]byte("Error: invalid configuration: x\n"), errors.New("exit status 1")); got != "Error: invalid configuration: x" {
		t.Errorf("got %q", got)
	}
	if got := validateReason([]byte("panic\n"), errors.New("exit status 2")); got != "exit status 2" {
		t.Errorf("got %q", got)
	}
}

func TestCompare(t *testing.T) {
	tee := Scenario{Name: "tee", Expect: []string{DestSink, DestSidecars}}
	divert := Scenario{Name: "divert", Expect: []string{DestSidecars}}
	floor := Scenario{Name: "floor", Expect: []string{DestFloor}}
	for _, tc := range []struct {
		s                     Scenario
		sink, sidecars, floor int64
		final, ok             bool
		done                  bool // every expected destination has all 100
	}{
		{tee, 100, 100, 0, true, true, true},
		{tee, 100, 99, 0, true, false, false},   // one lost
		{tee, 99, 100, 0, false, true, false},   // still arriving
		{tee, 100, 101, 0, false, false, false}, // a duplicate fails at once
		{tee, 100, 100, 1, true, false, true},   // nothing may reach a destination it does not expect
		{divert, 0, 100, 0, true, true, true},
		{divert, 1, 100, 0, true, false, true}, // divert leaked to the sink
		{divert, 1, 50, 0, false, false, false},
		{floor, 0, 0, 100, true, true, true},
		{floor, 0, 0, 99, true, false, false},
		{floor, 0, 0, 99, false, true, false},
		{floor, 1, 0, 100, true, false, true},
	} {
		got := arrived{tc.sink, tc.sidecars, tc.floor}
		if err := compare(tc.s, 100, got, tc.final); (err == nil) != tc.ok {
			t.Errorf("%s %v final=%v: %v", tc.s.Name, got, tc.final, err)
		}
		if done := complete(tc.s, 100, got); done != tc.done {
			t.Errorf("%s %v: complete = %v, want %v", tc.s.Name, got, done, tc.done)
		}
	}
}

// BuildCollector builds once per manifest and ocb version: a second call
// finds the binary in the cache, an ocb that reports another version builds
// again beside it.
func TestBuildCollectorCachesPerOCBVersion(t *testing.T) {
	dir := t.TempDir()
	builds := filepath.Join(dir, "builds")
	// A stand-in for ocb: `version` prints $FAKE_OCB_VERSION on stderr (as
	// ocb v0.161.0 does); a build writes the manifest's binary and counts.
	ocb := filepath.Join(dir, "ocb")
	script := "#!/bin/sh\n" +
		"if [ \"$1\" = version ]; then echo \"ocb version $FAKE_OCB_VERSION\" >&2; exit 0; fi\n" +
		"echo build >> " + builds + "\n" +
		"mkdir -p out && printf '#!/bin/sh\\n' > out/otelcol-x && chmod +x out/otelcol-x\n"
	if err := os.WriteFile(ocb, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(dir, "manifest.yaml")
	if err := os.WriteFile(manifest, []byte("dist:\n  name: otelcol-x\n  output_path: ./out\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(dir, "cache")
	count := func() int {
		b, _ := os.ReadFile(builds)
		return strings.Count(string(b), "build")
	}
	build := func(version string) string {
		t.Setenv("FAKE_OCB_VERSION", version)
		bin, err := BuildCollector(ocb, manifest, cache, "anchor", io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(bin, filepath.Join(cache, "anchor-")) || filepath.Base(bin) != "otelcol-x" {
			t.Fatalf("binary %s, want %s/anchor-KEY/out/otelcol-x", bin, cache)
		}
		return bin
	}
	first := build("v0.161.0")
	if again := build("v0.161.0"); again != first || count() != 1 {
		t.Errorf("second build: %s after %d ocb runs, want the cached %s after 1", again, count(), first)
	}
	if other := build("v0.162.0"); other == first || count() != 2 {
		t.Errorf("another ocb version: %s after %d ocb runs, want a new build beside %s", other, count(), first)
	}
}
