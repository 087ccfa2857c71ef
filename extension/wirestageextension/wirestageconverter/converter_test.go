// SPDX-License-Identifier: Apache-2.0

package wirestageconverter

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.uber.org/zap"
	"go.yaml.in/yaml/v3"

	"github.com/otelcol-sdp/otelcol-sdp/extension/wirestageextension"
)

// base is a gateway: otlp with wirestage, wirecount and sdpshard first.
const base = `
extensions:
  wirestage:
    stages: [wirecount, sdpshard]
    divert_all_pipelines: %s
receivers:
  otlp:
    protocols:
      grpc: {middlewares: [{id: wirestage}]}
processors:
  batch: {}
  wirecount: {}
  sdpshard:
    endpoints: [unix:///tmp/sdp.sock]
    mode: %s
exporters:
  debug: {}
service:
  extensions: [wirestage]
  pipelines:
    traces: {receivers: [otlp], processors: %s, exporters: [debug]}
`

func convert(t *testing.T, divertAll, mode, processors string) error {
	t.Helper()
	var m map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(fmt.Sprintf(base, divertAll, mode, processors)), &m))
	conf := confmap.NewFromStringMap(m)
	before := conf.ToStringMap()
	c := NewFactory().Create(confmap.ConverterSettings{Logger: zap.NewNop()})
	err := c.Convert(context.Background(), conf)
	assert.Equal(t, before, conf.ToStringMap(), "the converter changed the configuration")
	return err
}

func TestConverterAcceptsWhatStartAccepts(t *testing.T) {
	require.NoError(t, convert(t, "false", "tee", "[wirecount, sdpshard, batch]"))
	require.NoError(t, convert(t, "true", "divert", "[wirecount, sdpshard, batch]"))
}

func TestConverterRefusesStagedProcessorAfterBatch(t *testing.T) {
	err := convert(t, "false", "tee", "[wirecount, batch, sdpshard]")
	require.ErrorIs(t, err, wirestageextension.ErrPipelineOrder)
	assert.ErrorContains(t, err, "extensions::wirestage")
	assert.ErrorContains(t, err, "pipeline traces (fed by otlp, which uses wirestage): sdpshard comes after batch")
	assert.NotContains(t, err.Error(), "in no traces pipeline")
}

func TestConverterRefusesUnacknowledgedDivert(t *testing.T) {
	err := convert(t, "false", "divert", "[wirecount, sdpshard]")
	require.ErrorIs(t, err, wirestageextension.ErrDivertNotAcknowledged)
	assert.ErrorContains(t, err, "extensions::wirestage")
	assert.ErrorContains(t, err, "sdpshard diverts before the receiver decodes")
	assert.ErrorContains(t, err, "divert_all_pipelines: true")
}

func TestConverterLeavesOtherErrorsToTheCollector(t *testing.T) {
	// An sdpshard section that does not decode is the processor's error.
	require.NoError(t, convert(t, "false", "[not, a, mode]", "[wirecount, sdpshard]"))
}

func TestConverterIgnoresDivertOutsidePipelines(t *testing.T) {
	// sdpshard is in no pipeline: it never starts, so it has no stage.
	require.NoError(t, convert(t, "false", "divert", "[wirecount]"))
}
