// SPDX-License-Identifier: Apache-2.0

package wirestageextension

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
)

func TestDefaultConfigKeepsStreamWorkers(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	assert.Equal(t, defaultGRPCStreamWorkers, cfg.GRPCStreamWorkers)
	cfg.Stages = []component.ID{stageID}
	require.NoError(t, cfg.Validate())
}

func TestValidateGRPCStreamWorkers(t *testing.T) {
	for _, tc := range []struct {
		workers int
		wantErr bool
	}{
		{workers: 0},
		{workers: 1},
		{workers: maxGRPCStreamWorkers},
		{workers: -1, wantErr: true},
		{workers: maxGRPCStreamWorkers + 1, wantErr: true},
	} {
		cfg := divertConfig()
		cfg.GRPCStreamWorkers = tc.workers
		err := cfg.Validate()
		if !tc.wantErr {
			assert.NoError(t, err, "grpc_stream_workers %d", tc.workers)
			continue
		}
		if assert.Error(t, err, "grpc_stream_workers %d", tc.workers) {
			assert.Contains(t, err.Error(), "grpc_stream_workers")
		}
	}
}
