// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
	"go.yaml.in/yaml/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/otelcol-sdp/otelcol-sdp/internal/profilestest"
)

// profilesGate is the Collector feature gate that turns on profiles
// pipelines (the signal is in development on the v0.165 train).
const profilesGate = "--feature-gates=service.profilesSupport"

// profilesOverlay writes, into dir, a configuration to merge after config:
// a profiles pipeline with the receivers, processors and exporters of
// config's traces pipeline, so that profiles go the way traces go.
func profilesOverlay(config, dir string) (string, error) {
	raw, err := os.ReadFile(config)
	if err != nil {
		return "", err
	}
	var cfg struct {
		Service struct {
			Pipelines map[string]any `yaml:"pipelines"`
		} `yaml:"service"`
	}
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		return "", fmt.Errorf("%s: %w", config, err)
	}
	traces, ok := cfg.Service.Pipelines["traces"]
	if !ok {
		return "", fmt.Errorf("%s has no traces pipeline to route profiles like", config)
	}
	out, err := yaml.Marshal(map[string]any{"service": map[string]any{"pipelines": map[string]any{"profiles": traces}}})
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "profiles-pipeline.yaml")
	return path, os.WriteFile(path, out, 0o644)
}

// sendProfiles sends one profiles request of one resource of service,
// holding items samples over stacks that share a dictionary, as a
// profiler would; telemetrygen sends no profiles. It returns the samples
// sent.
func sendProfiles(ctx context.Context, protocol, endpoint, service string, items int) (int, error) {
	pd := profilestest.Generate(uint64(len(service)), profilestest.Shape{
		Resources: 1, Scopes: 1, Profiles: 1, Samples: items,
		Functions: 200, Locations: 400, Stacks: 300, Depth: 24,
		Resource: func(_ *rand.Rand, _ int, res pcommon.Resource) {
			res.Attributes().PutStr("service.name", service)
		},
	})
	req := pprofileotlp.NewExportRequestFromProfiles(pd)
	if protocol == "grpc" {
		conn, err := grpc.NewClient(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return 0, err
		}
		defer conn.Close()
		if _, err := pprofileotlp.NewGRPCClient(conn).Export(ctx, req); err != nil {
			return 0, fmt.Errorf("profiles over gRPC: %w", err)
		}
		return items, nil
	}
	body, err := req.MarshalProto()
	if err != nil {
		return 0, err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+endpoint+"/v1development/profiles", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	hr.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		return 0, fmt.Errorf("profiles over HTTP: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("profiles over HTTP: status %s", resp.Status)
	}
	return items, nil
}
