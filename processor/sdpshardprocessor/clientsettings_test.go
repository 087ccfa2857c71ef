// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"

	"github.com/otelcol-sdp/otelcol-sdp/internal/fleet"
)

// Every client, of an endpoints list or of a fleet's member, gets the
// configured linger and batch size, and the linger's default follows
// wait_for_ack.
func TestClientSettingsCarryTheLinger(t *testing.T) {
	linger := 3 * time.Millisecond
	for _, tt := range []struct {
		name       string
		waitForAck bool
		linger     *time.Duration
		want       time.Duration
	}{
		{"default, waiting for acks", true, nil, 0},
		{"default, not waiting", false, nil, defaultSendLingerNoAck},
		{"set, waiting for acks", true, &linger, linger},
		{"set, not waiting", false, &linger, linger},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tel := componenttest.NewTelemetry()
			t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
			cfg := testConfig(newEndpoints(t, "unix", 2))
			cfg.WaitForAck, cfg.SendLinger, cfg.SendBatchBytes = tt.waitForAck, tt.linger, 12345
			s, err := newShardSet(testSettings(tel), cfg, nil)
			require.NoError(t, err)
			t.Cleanup(func() { s.shutdown(context.Background()) })
			shard := fleet.ShardSettings(s.clientSettings(cfg.Endpoints[1]), 1, 2, s.obs)
			// internal/fleet builds a member's client from these,
			// adding only its identity.
			member := s.clientSettings(cfg.Endpoints[1])
			for name, cs := range map[string]struct {
				linger            time.Duration
				batch, shard, max uint32
			}{
				"shard":  {shard.Linger, uint32(shard.BatchBytes), shard.Shard, shard.ShardCount},
				"member": {member.Linger, uint32(member.BatchBytes), member.Shard, member.ShardCount},
			} {
				assert.Equal(t, tt.want, cs.linger, name)
				assert.Equal(t, uint32(12345), cs.batch, name)
				if name == "shard" {
					assert.Equal(t, [2]uint32{1, 2}, [2]uint32{cs.shard, cs.max})
				}
			}
		})
	}
}
