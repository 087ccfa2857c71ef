// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-sdp/otelcol-sdp/processor/sdpshardprocessor/internal/metadata"
)

func loadConfig(t *testing.T, name string) (*Config, error) {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	id := component.NewID(metadata.Type)
	if name != "" {
		id = component.NewIDWithName(metadata.Type, name)
	}
	sub, err := cm.Sub(id.String())
	require.NoError(t, err)
	cfg := NewFactory().CreateDefaultConfig()
	require.NoError(t, sub.Unmarshal(cfg))
	return cfg.(*Config), confmap.Validate(cfg)
}

func TestLoadConfigDefaults(t *testing.T) {
	cfg, err := loadConfig(t, "")
	require.NoError(t, err)
	want := createDefaultConfig()
	want.Endpoints = []string{"unix:///run/sdp/shard-0.sock"}
	assert.Equal(t, want, cfg)
	assert.Equal(t, RoutingKeyResource, cfg.RoutingKey)
	assert.Equal(t, ModeTee, cfg.Mode)
	assert.Equal(t, 2, cfg.HashVersion, "new configurations route with the faster hash")
	assert.Equal(t, 1_000_000, cfg.MaxFrameBytes)
	assert.Equal(t, 64<<20, cfg.QueueBytes)
	assert.True(t, cfg.WaitForAck, "at-least-once for clients by default")
	assert.Nil(t, cfg.Storage, "no persistent queue by default")
	assert.Equal(t, ProfilesDictionaryWhole, cfg.ProfilesDictionary)
	assert.False(t, cfg.routerSettings().PruneDictionaries)
}

func TestLoadConfigCustom(t *testing.T) {
	cfg, err := loadConfig(t, "custom")
	require.NoError(t, err)
	assert.Equal(t, []string{"unix:///run/sdp/shard-0.sock", "tcp://127.0.0.1:4501", "tcp://sidecar-2.sdp.svc:4501"}, cfg.Endpoints)
	assert.Equal(t, RoutingKeyAttributes, cfg.RoutingKey)
	assert.Equal(t, []string{"service.name", "tenant.id"}, cfg.Attributes)
	assert.Equal(t, 1, cfg.HashVersion)
	assert.Equal(t, ModeDivert, cfg.Mode)
	assert.Equal(t, 262144, cfg.MaxFrameBytes)
	assert.Equal(t, 16777216, cfg.QueueBytes)
	assert.False(t, cfg.WaitForAck)
	require.NotNil(t, cfg.Storage)
	assert.Equal(t, component.MustNewIDWithName("file_storage", "sdp"), *cfg.Storage)
	assert.Equal(t, "gateway-0", cfg.Sender)
	assert.Equal(t, 2*time.Second, cfg.DialTimeout)
	assert.Equal(t, 50*time.Millisecond, cfg.InitialBackoff)
	assert.Equal(t, 2*time.Second, cfg.MaxBackoff)
	assert.Equal(t, 3*time.Second, cfg.WriteTimeout)
	assert.Equal(t, 15*time.Second, cfg.AckTimeout)
	assert.Equal(t, 20*time.Second, cfg.FlushTimeout)
	require.NotNil(t, cfg.SendLinger)
	assert.Equal(t, 2*time.Millisecond, *cfg.SendLinger)
	assert.Equal(t, 2*time.Millisecond, cfg.sendLinger())
	assert.Equal(t, 65536, cfg.SendBatchBytes)
	assert.Equal(t, ProfilesDictionaryPruned, cfg.ProfilesDictionary)
	assert.True(t, cfg.routerSettings().PruneDictionaries)
}

// send_linger unset lingers only where nothing waits for the write:
// defaultSendLingerNoAck with wait_for_ack: false, none with the default
// wait_for_ack: true. Set, it is what it says, 0 included.
func TestSendLingerDefaults(t *testing.T) {
	cfg, err := loadConfig(t, "")
	require.NoError(t, err)
	assert.Nil(t, cfg.SendLinger)
	assert.Zero(t, cfg.sendLinger(), "a request waiting for acks does not wait out a linger by default")
	assert.Zero(t, cfg.SendBatchBytes)
	cfg.WaitForAck = false
	assert.Equal(t, defaultSendLingerNoAck, cfg.sendLinger())

	cfg, err = loadConfig(t, "send_linger_off")
	require.NoError(t, err)
	require.NotNil(t, cfg.SendLinger)
	assert.Zero(t, cfg.sendLinger(), "send_linger: 0s turns it off with wait_for_ack: false")

	for name, want := range map[string][]string{
		"send_invalid":           {"send_linger: must not be negative, got -1ms", "send_batch_bytes: must not be negative, got -1"},
		"send_linger_too_long":   {"send_linger: 2s is over 1s"},
		"send_linger_over_stall": {"send_linger: 300ms is not shorter than ejection::stall_timeout 200ms"},
	} {
		_, err := loadConfig(t, name)
		require.Error(t, err, name)
		for _, w := range want {
			assert.ErrorContains(t, err, w, name)
		}
	}

	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	sub, err := cm.Sub("sdpshard/send_linger_unitless")
	require.NoError(t, err)
	assert.ErrorContains(t, sub.Unmarshal(NewFactory().CreateDefaultConfig()), "send_linger: 5 has no unit")
}

func TestValidateNamesTheField(t *testing.T) {
	tests := []struct {
		name string
		want []string // substrings of the error
	}{
		{"no_endpoints", []string{"endpoints:", "at least one endpoint"}},
		{"bad_endpoint", []string{"endpoints[1]:", "http://127.0.0.1:4501", "unknown scheme"}},
		{"duplicate_endpoint", []string{"endpoints[1]:", "already shard 0"}},
		{"frame_too_large", []string{"max_frame_bytes:", "1000001", "1000000"}},
		{"frame_too_small", []string{"max_frame_bytes:", "100 is outside"}},
		{"unknown_mode", []string{"mode:", `"mirror"`}},
		{"unknown_profiles_dictionary", []string{"profiles_dictionary:", `"trimmed"`, `want "whole" or "pruned"`}},
		{"unknown_routing_key", []string{"routing_key:", `"trace_id"`}},
		{"hash_version_zero", []string{"hash_version:", "version 0", "want 1 or 2"}},
		{"hash_version_three", []string{"hash_version:", "version 3", "want 1 or 2"}},
		{"attributes_missing", []string{"attributes:", "at least one key"}},
		{"attributes_without_routing_key", []string{"attributes:", `only used with routing_key "attributes"`}},
		{"queue_too_small", []string{"queue_bytes:", "cannot hold one frame"}},
		{"negative_timeout", []string{"ack_timeout:", "must be positive"}},
		{"tls_with_unix", []string{"tls:", "endpoints[1]", "unix:///run/sdp/shard-1.sock"}},
		{"endpoints_and_resolver", []string{"endpoints: not allowed with resolver"}},
		{"resolver_empty", []string{"resolver:", "one of static, dns or k8s"}},
		{"resolver_tls_with_unix", []string{"tls:", "resolver::static::endpoints[1]", "unix:///run/sdp/shard-1.sock"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadConfig(t, tt.name)
			require.Error(t, err)
			for _, want := range tt.want {
				assert.Contains(t, err.Error(), want)
			}
		})
	}
}

func TestLoadConfigHashVersionTwo(t *testing.T) {
	cfg, err := loadConfig(t, "hash_version_two")
	require.NoError(t, err)
	assert.Equal(t, 2, cfg.HashVersion)
}

func TestValidateHashVersion(t *testing.T) {
	for _, tt := range []struct {
		version int
		valid   bool
	}{
		{-1, false}, {0, false}, {1, true}, {2, true}, {3, false},
		// 257 would wrap to 1 in a uint8.
		{257, false},
	} {
		cfg := testConfig([]string{"tcp://127.0.0.1:4501"})
		cfg.HashVersion = tt.version
		err := cfg.Validate()
		if tt.valid {
			assert.NoError(t, err, "hash_version %d", tt.version)
			continue
		}
		if assert.Error(t, err, "hash_version %d", tt.version) {
			assert.Equal(t, fmt.Sprintf("hash_version: unknown routing hash version %d, want 1 or 2", tt.version), err.Error())
		}
	}
}

func TestUnknownKeyIsAnError(t *testing.T) {
	cm := confmap.NewFromStringMap(map[string]any{"endpoints": []any{"tcp://127.0.0.1:1"}, "shards": 3})
	cfg := createDefaultConfig()
	assert.ErrorContains(t, cm.Unmarshal(cfg), "shards")
}

func TestDurationWithoutUnitIsRefused(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	sub, err := cm.Sub("sdpshard/unitless_durations")
	require.NoError(t, err)
	err = sub.Unmarshal(NewFactory().CreateDefaultConfig())
	require.Error(t, err, "dial_timeout: 5 would mean 5ns")
	assert.ErrorContains(t, err, "dial_timeout: 5 has no unit")
	assert.ErrorContains(t, err, "flush_timeout: 10 has no unit")
	assert.NotContains(t, err.Error(), "ack_timeout", "30s has a unit")
}

func TestLoadConfigTLS(t *testing.T) {
	cfg, err := loadConfig(t, "tls")
	require.NoError(t, err)
	require.True(t, cfg.TLS.HasValue())
	assert.Equal(t, "/etc/sdp/ca.pem", cfg.TLS.Get().CAFile)
	assert.Equal(t, "sidecar.sdp.internal", cfg.TLS.Get().ServerName)

	defaults, err := loadConfig(t, "")
	require.NoError(t, err)
	assert.False(t, defaults.TLS.HasValue(), "plain TCP unless tls is configured")
}

func TestLoadConfigResolver(t *testing.T) {
	cfg, err := loadConfig(t, "resolver_dns")
	require.NoError(t, err)
	require.True(t, cfg.hasResolver())
	assert.Empty(t, cfg.Endpoints)
	dns := cfg.Resolver.Get().DNS.Get()
	require.NotNil(t, dns)
	assert.Equal(t, "consumers.sdp.svc.cluster.local", dns.Hostname)
	assert.Equal(t, 4501, dns.Port)
	assert.Equal(t, 2*time.Second, dns.Interval)
	assert.True(t, cfg.TLS.HasValue(), "tls applies to the members' tcp endpoints")

	cfg, err = loadConfig(t, "resolver_k8s")
	require.NoError(t, err)
	require.NotNil(t, cfg.Resolver.Get().K8s.Get())
	assert.Equal(t, "consumers.sdp", cfg.Resolver.Get().K8s.Get().Service)
}

func TestLoadConfigEjection(t *testing.T) {
	cfg, err := loadConfig(t, "")
	require.NoError(t, err)
	assert.False(t, cfg.Ejection.HasValue(), "ejection is enabled by its block")

	cfg, err = loadConfig(t, "ejection_defaults")
	require.NoError(t, err)
	require.True(t, cfg.Ejection.HasValue())
	assert.Equal(t, EjectionConfig{StallTimeout: 5 * time.Second, ProbeInterval: time.Second, MaxEjectedPercent: 50}, *cfg.Ejection.Get())

	cfg, err = loadConfig(t, "ejection_custom")
	require.NoError(t, err)
	assert.Equal(t, EjectionConfig{StallTimeout: 2 * time.Second, ProbeInterval: 250 * time.Millisecond, MaxEjectedPercent: 25}, *cfg.Ejection.Get())

	cfg, err = loadConfig(t, "ejection_disabled")
	require.NoError(t, err)
	assert.False(t, cfg.Ejection.HasValue())

	_, err = loadConfig(t, "ejection_invalid")
	require.Error(t, err)
	for _, want := range []string{
		"ejection::stall_timeout: must be positive, got 0s",
		"ejection::probe_interval: must be positive, got -1s",
		"ejection::max_ejected_percent: 101 is outside [1, 100]",
	} {
		assert.ErrorContains(t, err, want)
	}

	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	sub, err := cm.Sub("sdpshard/ejection_unitless")
	require.NoError(t, err)
	assert.ErrorContains(t, sub.Unmarshal(NewFactory().CreateDefaultConfig()), "ejection::stall_timeout: 5 has no unit")
}

func TestValidateRoutingKeyTraceID(t *testing.T) {
	cfg := testConfig([]string{"tcp://127.0.0.1:4501"})
	cfg.RoutingKey = RoutingKeyTraceID
	require.NoError(t, cfg.Validate())
	assert.True(t, cfg.routerSettings().ByTraceID)
	cfg.Attributes = []string{"service.name"}
	assert.EqualError(t, cfg.Validate(), `attributes: only used with routing_key "attributes"`)
	cfg.Attributes, cfg.RoutingKey = nil, "trace_id"
	assert.EqualError(t, cfg.Validate(), `routing_key: unknown value "trace_id", want "resource", "attributes", "service", "traceID", "metric" or "streamID"`)
	cfg.RoutingKey = RoutingKeyResource
	assert.False(t, cfg.routerSettings().ByTraceID)
	assert.Empty(t, cfg.routerSettings().Attributes)
	cfg.RoutingKey = RoutingKeyService
	require.NoError(t, cfg.Validate())
	assert.Equal(t, []string{"service.name"}, cfg.routerSettings().Attributes)
	assert.False(t, cfg.routerSettings().ByTraceID)
	cfg.RoutingKey = RoutingKeyMetric
	require.NoError(t, cfg.Validate())
	assert.True(t, cfg.routerSettings().ByMetricName)
	assert.False(t, cfg.routerSettings().ByTraceID)
	cfg.RoutingKey = RoutingKeyStreamID
	require.NoError(t, cfg.Validate())
	assert.True(t, cfg.routerSettings().ByStream)
	assert.False(t, cfg.routerSettings().ByMetricName)
}
