// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package dist

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/otelcol-sdp/otelcol-sdp/test/testbin"
)

// The Collector release train every Collector and contrib module of the
// repository is on: core's unstable modules and contrib at trainUnstable,
// core's stable modules at trainStable.
const (
	trainUnstable = "v0.165.0"
	trainStable   = "v1.71.0"
)

// offTrain lists the modules allowed at another version, each with the
// version and the only directory whose Go files may import it. The module
// proxy refuses every later pdatautil (v0.162.0 to v0.166.0 answer 403), and
// only the otlpwire side-by-side benchmark uses it, as the contrib baseline
// of the routing hash: neither a component nor the distribution links it.
var offTrain = map[string]struct{ version, onlyUnder string }{
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatautil": {"v0.161.0", "benchmarks/"},
}

// trainModule matches a Collector or contrib module and its version, in a
// go.mod require line or an ocb manifest's gomod line.
var trainModule = regexp.MustCompile(`\b((?:go\.opentelemetry\.io/collector|github\.com/open-telemetry/opentelemetry-collector-contrib)(?:/[^\s"]+)?)\s+(v[0-9][^\s"]*)`)

// TestOneReleaseTrain checks that every go.mod of the repository, both ocb
// manifests and the Makefile's ocb pin name Collector and contrib modules of
// one train only, the listed exceptions aside, and that each exception is
// imported only where it is allowed.
func TestOneReleaseTrain(t *testing.T) {
	root := testbin.RepoRoot(t)
	out, err := exec.Command("git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard",
		"go.mod", "*/go.mod", "builder-config.yaml", "examples/builder-config-minimal.yaml").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	files := strings.Fields(string(out))
	if len(files) < 3 {
		t.Fatalf("found only %v: want the go.mod files and both ocb manifests", files)
	}
	for _, rel := range files {
		f, err := os.Open(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for line := 1; sc.Scan(); line++ {
			text, _, _ := strings.Cut(sc.Text(), "//")
			if strings.HasPrefix(strings.TrimSpace(text), "#") {
				continue // a comment of the ocb manifest
			}
			for _, m := range trainModule.FindAllStringSubmatch(text, -1) {
				module, version := m[1], m[2]
				if ex, ok := offTrain[module]; ok {
					if version != ex.version {
						t.Errorf("%s:%d: %s %s: the listed exception is %s; update offTrain, README and RESULTS.md, or move it onto the train", rel, line, module, version, ex.version)
					}
					continue
				}
				if version != trainUnstable && version != trainStable {
					t.Errorf("%s:%d: %s %s is off the %s / %s train", rel, line, module, version, trainUnstable, trainStable)
				}
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}

	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^OCB_VERSION := ` + regexp.QuoteMeta(trainUnstable) + `$`).Match(makefile) {
		t.Errorf("Makefile: OCB_VERSION is not %s", trainUnstable)
	}

	// Where the exceptions are imported.
	goFiles, err := exec.Command("git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard", "*.go").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, rel := range strings.Fields(string(goFiles)) {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			continue // deleted in the work tree
		}
		for module, ex := range offTrain {
			imports := regexp.MustCompile(`(?m)^\s*(?:import\s+)?(?:[\w.]+\s+)?"` + regexp.QuoteMeta(module) + `(?:/[^"]*)?"\s*$`)
			if imports.Match(b) && !strings.HasPrefix(rel, ex.onlyUnder) {
				t.Errorf("%s imports %s, which is off the train and allowed only under %s", rel, module, ex.onlyUnder)
			}
		}
	}
}
