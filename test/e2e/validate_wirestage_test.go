// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/otelcol-sdp/otelcol-sdp/test/testbin"
)

// TestValidateRefusesWhatStartRefuses breaks examples/gateway.yaml in the
// two ways only a whole-configuration check sees: `validate` (through the
// wirestage converter) and start both refuse, with a message naming the
// pipeline, the receiver and the processor.
func TestValidateRefusesWhatStartRefuses(t *testing.T) {
	collector := testbin.Path(t, testbin.CollectorEnv)
	gateway := filepath.Join(testbin.RepoRoot(t), "examples", "gateway.yaml")
	tests := []struct {
		name    string
		sets    []string
		gate    bool // run with the profiles feature gate
		want    []string
		notWant []string
	}{
		{
			name: "staged processor after batch",
			sets: []string{"processors::batch::send_batch_size=100", "service::pipelines::traces::processors=[wirecount, batch, sdpshard]"},
			want: []string{
				"extensions::wirestage",
				"pipeline traces (fed by otlp, which uses wirestage): sdpshard comes after batch",
				"put sdpshard before batch",
			},
			notWant: []string{"in no traces pipeline", "pipeline metrics", "pipeline logs"},
		},
		{
			name: "profiles pipeline with a staged processor after batch",
			sets: []string{
				"processors::batch::send_batch_size=100",
				"service::pipelines::profiles::receivers=[otlp]",
				"service::pipelines::profiles::processors=[batch, wirecount, sdpshard]",
				"service::pipelines::profiles::exporters=[debug]",
			},
			gate: true,
			want: []string{
				"extensions::wirestage",
				"pipeline profiles (fed by otlp, which uses wirestage): wirecount comes after batch",
				"put wirecount before batch",
			},
			notWant: []string{"pipeline traces", "pipeline metrics", "pipeline logs"},
		},
		{
			name: "diverting stage without divert_all_pipelines",
			sets: []string{"processors::sdpshard::mode=divert"},
			want: []string{"extensions::wirestage", "sdpshard diverts before the receiver decodes", "divert_all_pipelines: true"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"--config", gateway}
			if tt.gate {
				args = append(args, profilesGate)
			}
			for _, s := range tt.sets {
				args = append(args, "--set="+s)
			}
			check := func(command string, out []byte, err error) {
				t.Helper()
				if err == nil {
					t.Fatalf("%s accepted %v\n%s", command, tt.sets, out)
				}
				for _, w := range tt.want {
					if !strings.Contains(string(out), w) {
						t.Errorf("%s error does not say %q:\n%s", command, w, out)
					}
				}
				for _, w := range tt.notWant {
					if strings.Contains(string(out), w) {
						t.Errorf("%s error wrongly says %q:\n%s", command, w, out)
					}
				}
			}
			out, err := exec.Command(collector, append([]string{"validate"}, args...)...).CombinedOutput()
			check("validate", out, err)

			// Start refuses the same configuration with the same words,
			// before any component starts.
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, collector, args...)
			cmd.Env = append(cmd.Environ(), "SDP_METRICS_PORT=0", "SDP_HEALTH_ENDPOINT="+freePort(t), "SDP_ZPAGES_ENDPOINT="+freePort(t),
				"SDP_OTLP_GRPC_ENDPOINT="+freePort(t), "SDP_OTLP_HTTP_ENDPOINT="+freePort(t))
			out, err = cmd.CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("the Collector started with %v\n%s", tt.sets, out)
			}
			check("start", out, err)
		})
	}
}
