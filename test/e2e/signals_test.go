// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/otelcol-sdp/otelcol-sdp/internal/demo"
	"github.com/otelcol-sdp/otelcol-sdp/test/testbin"
)

// TestSignalsAreCountedAndDelivered runs the demo harness (the same code and
// options as `make demo`) and checks, for each signal over gRPC and over
// HTTP, that the items telemetrygen sent equal the items the wirecount
// processor published at the Collector's metrics endpoint and the items the
// sidecars received, and that the README shows the table this run printed
// (every number in it is deterministic: the split over the shards depends
// only on the resources' attributes).
func TestSignalsAreCountedAndDelivered(t *testing.T) {
	root := testbin.RepoRoot(t)
	opts := demo.Options{
		Binaries: demo.Binaries{
			Collector:    testbin.Path(t, testbin.CollectorEnv),
			Sidecar:      testbin.Path(t, testbin.SidecarEnv),
			Telemetrygen: testbin.Path(t, testbin.TelemetrygenEnv),
		},
		// Items and Services left to the demo's defaults, as `make demo` does.
		Config:   filepath.Join(root, "examples", "gateway.yaml"),
		WorkDir:  t.TempDir(),
		Progress: testWriter{t},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	report, err := demo.Run(ctx, opts)
	if err != nil {
		t.Fatalf("demo run: %v", err)
	}
	var table strings.Builder
	report.WriteTo(&table)
	t.Logf("report:\n%s", table.String())

	if got, want := len(report.Results), len(demo.Signals)*len(demo.Protocols); got != want {
		t.Fatalf("%d cases ran, want %d (every signal over every protocol)", got, want)
	}
	var perShard [demo.Shards]int
	for _, res := range report.Results {
		t.Run(res.Signal+"/"+res.Protocol, func(t *testing.T) {
			if res.Sent == 0 {
				t.Fatal("nothing was sent")
			}
			if res.Counted != res.Sent {
				t.Errorf("wirecount counted %d items, telemetrygen sent %d", res.Counted, res.Sent)
			}
			if res.ReceivedTotal() != res.Sent {
				t.Errorf("sidecars received %d items %v, telemetrygen sent %d", res.ReceivedTotal(), res.Received, res.Sent)
			}
		})
		for shard, n := range res.Received {
			perShard[shard] += n
		}
	}
	// 24 distinct resources went through the consistent hash: each shard
	// must have had some (all on one shard has odds of 2 in 2^24).
	for shard, n := range perShard {
		if n == 0 {
			t.Errorf("shard %d received nothing: the resources were not spread over the sidecars (%v)", shard, perShard)
		}
	}
	if err := report.Err(); err != nil {
		t.Error(err)
	}
	if got := readmeDemoTable(t, filepath.Join(root, "README.md")); got != trimLines(table.String()) {
		t.Errorf("README.md's demo table differs from this run's (paste `make demo`'s table):\n--- README.md\n%s\n--- this run\n%s", got, table.String())
	}
}

// readmeDemoTable returns the fenced block of README.md that holds the demo
// report: the one whose first line is the report's header.
func readmeDemoTable(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var header strings.Builder
	(&demo.Report{}).WriteTo(&header)
	first, _, _ := strings.Cut(header.String(), "\n")
	_, rest, ok := strings.Cut(string(b), "```\n"+first+"\n")
	if !ok {
		t.Fatalf("%s: no fenced block starting with the demo's header %q", path, first)
	}
	block, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatalf("%s: the demo's block is not closed", path)
	}
	// The table ends at the total line; what follows it (the run's time) varies.
	lines := strings.Split(first+"\n"+block, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "total") {
			lines = lines[:i+1]
			break
		}
	}
	return trimLines(strings.Join(lines, "\n"))
}

// trimLines drops trailing spaces of each line and trailing newlines.
func trimLines(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// testWriter sends the harness's progress lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
