// SPDX-License-Identifier: Apache-2.0

package sidecar

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/otelcol-sdp/otelcol-sdp/internal/profilestest"
)

// profilesPayload is a profiles request of one resource of service with
// samples samples in one profile, with its dictionary.
func profilesPayload(t *testing.T, shard uint32, service string, samples int) payload {
	t.Helper()
	pd := profilestest.Generate(uint64(samples), profilestest.Shape{
		Resources: 1, Scopes: 1, Profiles: 1, Samples: samples,
		Functions: 20, Locations: 40, Stacks: 30, Depth: 8,
		Resource: func(_ *rand.Rand, _ int, res pcommon.Resource) {
			res.Attributes().PutStr("service.name", service)
		},
	})
	return payload{signal: 4, shard: shard, items: samples, otlp: profilestest.Marshal(pd)}
}

// Profiles frames are counted, stored byte for byte in their own file, and
// forwarded to the profiles service with the version of their layout.
func TestProfilesInEveryMode(t *testing.T) {
	p := profilesPayload(t, 1, "a", 7)

	t.Run("count", func(t *testing.T) {
		eps := endpoints(t)
		statsFile := filepath.Join(t.TempDir(), "stats.json")
		_, stop := start(t, Config{Listen: eps[:1], Mode: ModeCount, StatsFile: statsFile})
		if errs := deliver(t, eps[0], 1, []payload{p}); errs[0] != nil {
			t.Fatal(errs[0])
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		s := readStats(t, statsFile)
		if got := s.Shards["1"]["profiles"]; got.Frames != 1 || got.Items != 7 {
			t.Errorf("shard 1 profiles counted %+v, want 1 frame of 7 samples", got)
		}
	})

	t.Run("file", func(t *testing.T) {
		eps := endpoints(t)
		dir := filepath.Join(t.TempDir(), "out")
		_, stop := start(t, Config{Listen: eps[:1], Mode: ModeFile, Dir: dir})
		if errs := deliver(t, eps[0], 1, []payload{p}); errs[0] != nil {
			t.Fatal(errs[0])
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, "shard-1-profiles.otlp")); err != nil {
			t.Fatal(err)
		}
		recs := readRecords(t, filepath.Join(dir, FileName(1, 4)))
		if len(recs) != 1 || !bytes.Equal(recs[0], p.otlp) {
			t.Fatalf("%d records, want the payload once, byte for byte", len(recs))
		}
		pd, err := profilestest.Unmarshal(recs[0])
		if err != nil || pd.SampleCount() != 7 {
			t.Errorf("stored profiles: %d samples, %v", pd.SampleCount(), err)
		}
	})

	t.Run("forward", func(t *testing.T) {
		const method = "/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export"
		var versions [][]string
		otlp, addr := startOTLPServer(t, func(string, int) error { return nil })
		otlp.inspect = func(stream grpc.ServerStream) {
			md, _ := metadata.FromIncomingContext(stream.Context())
			versions = append(versions, md.Get("otlp-profiles-development-version"))
		}
		eps := endpoints(t)
		_, stop := start(t, Config{Listen: eps[:1], Mode: ModeForward, ForwardEndpoint: addr, ForwardTimeout: 5 * time.Second})
		if errs := deliver(t, eps[0], 1, []payload{p}); errs[0] != nil {
			t.Fatal(errs[0])
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		otlp.mu.Lock()
		defer otlp.mu.Unlock()
		if got := otlp.requests[method]; len(got) != 1 || !bytes.Equal(got[0], p.otlp) {
			t.Errorf("%d profiles requests, want the payload once, byte for byte", len(got))
		}
		if len(versions) != 1 || !slices.Equal(versions[0], []string{"1"}) {
			t.Errorf("profiles development version sent %v, want [1]", versions)
		}
	})
}
