// SPDX-License-Identifier: Apache-2.0

package wirecountprocessor

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-sdp/otelcol-sdp/processor/wirecountprocessor/internal/metadata"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)

	tests := []struct {
		name    string
		want    *Config
		wantErr string
	}{
		{name: "", want: &Config{GroupBy: []string{"service.name"}, MaxGroups: 1000}},
		{name: "tenants", want: &Config{GroupBy: []string{"k8s.namespace.name", "tenant"}, MaxGroups: 200, MaxItemsPerRequest: 50000}},
		{name: "total", want: &Config{GroupBy: []string{}, MaxGroups: 1000}},
		{name: "empty_key", wantErr: "group_by[1]: key must not be empty"},
		{name: "blank_key", wantErr: "group_by[0]: key must not be empty"},
		{name: "duplicate_key", wantErr: `group_by[2]: duplicate key "tenant" (already group_by[0])`},
		{name: "reserved_key", wantErr: `group_by[0]: key "otelcol.signal" is reserved`},
		{name: "zero_max_groups", wantErr: "max_groups: must be greater than zero, got 0"},
		{name: "negative_max_groups", wantErr: "max_groups: must be greater than zero, got -5"},
		{name: "negative_max_items", wantErr: "max_items_per_request: must be zero (no limit) or positive, got -1"},
	}
	for _, tt := range tests {
		id := component.NewIDWithName(metadata.Type, tt.name)
		t.Run(id.String(), func(t *testing.T) {
			cfg := NewFactory().CreateDefaultConfig()
			sub, err := cm.Sub(id.String())
			require.NoError(t, err)
			require.NoError(t, sub.Unmarshal(cfg))

			err = confmap.Validate(cfg)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg)
		})
	}
}

func TestLoadConfigRejectsUnknownField(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig()
	err := confmap.NewFromStringMap(map[string]any{"group_by": []any{"tenant"}, "max_group": 3}).Unmarshal(cfg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "max_group")
}

func TestValidateReportsEveryProblem(t *testing.T) {
	cfg := &Config{GroupBy: []string{"", "otelcol.component.id"}, MaxGroups: 0, MaxItemsPerRequest: -2}
	err := cfg.Validate()
	require.Error(t, err)
	for _, want := range []string{"group_by[0]", "group_by[1]", "max_groups", "max_items_per_request"} {
		assert.Contains(t, err.Error(), want)
	}
}
