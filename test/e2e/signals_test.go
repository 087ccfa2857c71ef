//go:build e2e

package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/otelcol-sdp/otelcol-sdp/internal/demo"
	"github.com/otelcol-sdp/otelcol-sdp/test/testbin"
)

// TestSignalsAreCountedAndDelivered runs the demo harness (the same code as
// `make demo`) and checks, for each signal over gRPC and over HTTP, that the
// items telemetrygen sent equal the items the wirecount processor published
// at the Collector's metrics endpoint and the items the sidecars received.
func TestSignalsAreCountedAndDelivered(t *testing.T) {
	root := testbin.RepoRoot(t)
	opts := demo.Options{
		Binaries: demo.Binaries{
			Collector:    testbin.Path(t, testbin.CollectorEnv),
			Sidecar:      testbin.Path(t, testbin.SidecarEnv),
			Telemetrygen: testbin.Path(t, testbin.TelemetrygenEnv),
		},
		Config:   filepath.Join(root, "examples", "gateway.yaml"),
		Items:    100,
		Services: 4,
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
}

// testWriter sends the harness's progress lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
