// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"go.yaml.in/yaml/v3"
)

// persistentQueue is the Collector configuration of the persistent-queue
// scenario: a file_storage extension in the test's directory, named by the
// sdpshard processor's storage setting (as exporterhelper's
// sending_queue.storage names one), and OK before the sidecars' ack
// (wait_for_ack: false), the mode that only the storage keeps safe.
func persistentQueue(t *testing.T, e *faultEnv) collectorSettings {
	t.Helper()
	dir := filepath.Join(e.dir, "storage")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return collectorSettings{
		Processor:      "    wait_for_ack: false\n    storage: file_storage\n",
		Extensions:     fmt.Sprintf("  file_storage:\n    directory: %s\n", dir),
		ExtensionNames: []string{"file_storage"},
	}
}

// requirePersistentQueue fails the test, saying what is missing, unless the
// Collector binary has the file_storage extension and accepts the
// configuration e wrote (the sdpshard processor's storage setting).
func requirePersistentQueue(t *testing.T, e *faultEnv) {
	t.Helper()
	out, err := exec.Command(e.collectorBin, "components").Output()
	if err != nil {
		t.Fatalf("otelcol-sdp components: %v", err)
	}
	var got components
	if err := yaml.Unmarshal(out, &got); err != nil {
		t.Fatalf("components output is not YAML: %v", err)
	}
	if !slices.ContainsFunc(got.Extensions, func(c component) bool { return c.Name == "file_storage" }) {
		t.Fatalf("the persistent queue cannot be tested: %s has no file_storage extension "+
			"(`otelcol-sdp components` does not list it; builder-config.yaml needs "+
			"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage v0.165.0)", e.collectorBin)
	}
	if out, err := exec.Command(e.collectorBin, "validate", "--config", e.config).CombinedOutput(); err != nil {
		t.Fatalf("the persistent queue cannot be tested: otelcol-sdp validate refuses the sdpshard processor's "+
			"storage setting (storage: file_storage with wait_for_ack: false): %v\n%s", err, out)
	}
}
