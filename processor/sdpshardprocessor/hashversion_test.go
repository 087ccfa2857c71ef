// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"

	"github.com/otelcol-sdp/otelcol-sdp/internal/shard"
	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// hashVersionTraces holds resources with distinct service names and a few
// attributes of other kinds.
func hashVersionTraces(resources int) ptrace.Traces {
	td := ptrace.NewTraces()
	for r := range resources {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", fmt.Sprintf("svc-%d", r))
		rs.Resource().Attributes().PutInt("host.index", int64(r))
		rs.Resource().Attributes().PutBool("canary", r%2 == 0)
		rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty().SetName(fmt.Sprintf("span-%d", r))
	}
	return td
}

// identityHashes returns HashWith(ver) of every resource of td, keyed by
// service.name, computed by otlpwire from the marshalled batch.
func identityHashes(t *testing.T, td ptrace.Traces, ver otlpwire.HashVersion) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	for rd, err := range otlpwire.NewRequest(otlpwire.SignalTraces, mustMarshal(t, td)).Resources() {
		require.NoError(t, err)
		res, err := rd.Resource()
		require.NoError(t, err)
		name, ok, err := res.Attribute("service.name")
		require.NoError(t, err)
		require.True(t, ok)
		h, err := res.HashWith(ver)
		require.NoError(t, err)
		out[name.Str()] = h
	}
	return out
}

// TestHashVersionDecidesShardAndResourceHash runs hash_version 1, 2 and the
// default through the processor, on the pdata path and on the pre-decode
// stage, and checks what the sidecars received: every frame's resource_hash
// is the configured version's hash of its resource, and its shard is the
// jump hash of that value.
func TestHashVersionDecidesShardAndResourceHash(t *testing.T) {
	const shards, resources = 3, 12
	td := hashVersionTraces(resources)
	for _, path := range []string{"pdata", "stage"} {
		for _, tc := range []struct {
			name    string
			setting int // 0: not set
			want    otlpwire.HashVersion
		}{
			{"default", 0, otlpwire.HashV2},
			{"v1", 1, otlpwire.HashV1},
			{"v2", 2, otlpwire.HashV2},
		} {
			t.Run(path+"/"+tc.name, func(t *testing.T) {
				endpoints := newEndpoints(t, "unix", shards)
				recs := make([]*recorder, shards)
				for i := range recs {
					recs[i] = newRecorder()
					startSidecar(t, endpoints[i], recs[i])
				}
				cfg := testConfig(endpoints)
				if tc.setting != 0 {
					cfg.HashVersion = tc.setting
				}
				require.NoError(t, cfg.Validate())

				var host component.Host = componenttest.NewNopHost()
				var send func(p processor.Traces)
				if path == "stage" {
					// Diverting, the stage leaves the receiver nothing to
					// decode: every frame the sidecars get is the stage's.
					cfg.Mode = ModeDivert
					h, mw := newStageHost(t, true)
					host = h
					send = func(p processor.Traces) {
						require.Equal(t, http.StatusOK, serveLikeReceiver(t, mw, p, td))
					}
				} else {
					send = func(p processor.Traces) {
						require.NoError(t, p.ConsumeTraces(context.Background(), td))
					}
				}
				p, err := NewFactory().CreateTraces(context.Background(), processorSettings(), cfg, consumertest.NewNop())
				require.NoError(t, err)
				require.NoError(t, p.Start(context.Background(), host))
				send(p)
				require.NoError(t, p.Shutdown(context.Background()))

				want := identityHashes(t, td, tc.want)
				other := identityHashes(t, td, otlpwire.HashV1+otlpwire.HashV2-tc.want)
				seen := map[string]bool{}
				for i, rec := range recs {
					for _, r := range rec.snapshot() {
						service, _, n, err := signalCases[0].decode(r.frame.OTLP)
						require.NoError(t, err)
						require.Equal(t, 1, n)
						assert.False(t, seen[service], "%s forwarded twice", service)
						seen[service] = true
						assert.Equal(t, want[service], r.frame.ResourceHash, "%s: resource_hash is not HashV%d's", service, tc.want)
						assert.NotEqual(t, other[service], r.frame.ResourceHash, "%s: resource_hash is the other version's", service)
						assert.Equal(t, shard.Jump(want[service], shards), i, "%s: shard is not Jump of HashV%d", service, tc.want)
						assert.Equal(t, uint32(i), r.frame.Shard)
					}
				}
				assert.Len(t, seen, resources)
			})
		}
	}
}

// A configuration that skipped Validate still cannot route with an unknown
// version: 257 must not wrap around to version 1.
func TestCreateRefusesUnknownHashVersion(t *testing.T) {
	for _, v := range []int{0, 3, 257} {
		cfg := testConfig([]string{"tcp://127.0.0.1:1"})
		cfg.HashVersion = v
		_, err := NewFactory().CreateTraces(context.Background(), processorSettings(), cfg, consumertest.NewNop())
		assert.ErrorIs(t, err, otlpwire.ErrHashVersion, "hash_version %d", v)
	}
}
