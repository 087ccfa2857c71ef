// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package dist

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/otelcol-sdp/otelcol-sdp/test/testbin"
)

// generatedFiles are the files ocb writes into cmd/otelcol-sdp (go.mod and
// go.sum after its `go mod tidy`); all of them are committed.
var generatedFiles = []string{"components.go", "go.mod", "go.sum", "main.go", "main_others.go", "main_windows.go"}

// TestGeneratedSourcesAreUpToDate runs `make generate-distribution` (ocb, gofmt, SPDX lines) in
// a copy of the tree and fails on any difference from cmd/otelcol-sdp: a
// change to builder-config.yaml or to the root module's requirements must
// be followed by `make generate` and committed with it.
func TestGeneratedSourcesAreUpToDate(t *testing.T) {
	ocb := testbin.Path(t, testbin.OCBEnv)
	root := testbin.RepoRoot(t)
	tree := copyTree(t, root)
	for _, name := range generatedFiles {
		os.Remove(filepath.Join(tree, "cmd", "otelcol-sdp", name))
	}
	// OCB_STAMP= : use the given ocb instead of installing one in the copy.
	testbin.Run(t, tree, nil, "make", "--no-print-directory", "generate-distribution", "OCB="+ocb, "OCB_STAMP=")

	committed := filepath.Join(root, "cmd", "otelcol-sdp")
	regenerated := filepath.Join(tree, "cmd", "otelcol-sdp")
	if got, want := sourceNames(t, committed), sourceNames(t, regenerated); !slices.Equal(got, want) {
		t.Errorf("cmd/otelcol-sdp holds %v, ocb generates %v", got, want)
	}
	for _, name := range generatedFiles {
		want, err := os.ReadFile(filepath.Join(regenerated, name))
		if err != nil {
			t.Fatalf("ocb did not generate %s: %v", name, err)
		}
		got, err := os.ReadFile(filepath.Join(committed, name))
		if err != nil {
			t.Errorf("cmd/otelcol-sdp/%s: %v (run `make generate`)", name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("cmd/otelcol-sdp/%s differs from what ocb generates; run `make generate` and commit:\n%s",
				name, diff(filepath.Join(committed, name), filepath.Join(regenerated, name)))
		}
	}
}

// sourceNames lists the regular files of dir except the binary `go build`
// may leave there (ignored by git).
func sourceNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && e.Name() != "otelcol-sdp" {
			names = append(names, e.Name())
		}
	}
	return names
}
