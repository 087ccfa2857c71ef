// SPDX-License-Identifier: Apache-2.0

package wirestageextension

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.yaml.in/yaml/v3"
)

func confFromYAML(t *testing.T, s string) *confmap.Conf {
	t.Helper()
	var m map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(s), &m))
	return confmap.NewFromStringMap(m)
}

const receiversYAML = `
connectors:
  forward: {}
  forward/2: {}
  count: {}
receivers:
  otlp:
    protocols:
      grpc: {middlewares: [{id: wirestage}]}
      http: {middlewares: [{id: wirestage}]}
  otlp/plain:
    protocols:
      grpc: {}
`

func TestCheckPipelines(t *testing.T) {
	self := component.MustNewID("wirestage")
	stages := []component.ID{component.MustNewID("wirecount"), component.MustNewID("sdpshard")}
	tests := []struct {
		name      string
		pipelines string
		want      []string // empty: accepted
		notWant   []string // must not appear in the error
	}{
		{"stages first", `
    traces: {receivers: [otlp], processors: [wirecount, sdpshard, batch], exporters: [debug]}
    logs: {receivers: [otlp], processors: [memory_limiter, wirecount, sdpshard], exporters: [debug]}`, nil, nil},
		{"only one of the stages", `
    traces: {receivers: [otlp], processors: [sdpshard, batch], exporters: [debug]}`, nil, nil},
		{"pipelines of other receivers are free", `
    traces: {receivers: [otlp], processors: [wirecount, sdpshard], exporters: [debug]}
    traces/plain: {receivers: [otlp/plain], processors: [batch, wirecount, sdpshard], exporters: [debug]}`, nil, nil},
		{"batch before a stage", `
    traces: {receivers: [otlp], processors: [wirecount, batch, sdpshard], exporters: [debug]}`,
			[]string{"pipeline traces (fed by otlp, which uses wirestage)", "sdpshard comes after batch", "put sdpshard before batch"},
			[]string{"in no traces pipeline fed"}},
		{"a changing processor before a stage", `
    metrics: {receivers: [otlp], processors: [filter/drop, wirecount], exporters: [debug]}`,
			[]string{"pipeline metrics (fed by otlp, which uses wirestage)", "wirecount comes after filter/drop"},
			[]string{"in no metrics pipeline fed"}},
		{"order differs from stages", `
    logs: {receivers: [otlp], processors: [sdpshard, wirecount], exporters: [debug]}`,
			[]string{"pipeline logs (fed by otlp, which uses wirestage)", "wirecount comes after sdpshard", "other way round"},
			[]string{"in no logs pipeline fed", "sdpshard comes after wirecount"}},
		{"stage in a pipeline of another receiver only", `
    traces: {receivers: [otlp], processors: [wirecount], exporters: [debug]}
    traces/plain: {receivers: [otlp/plain], processors: [sdpshard], exporters: [debug]}`,
			[]string{"sdpshard is in pipeline traces/plain, but in no traces pipeline fed by the receivers using wirestage (otlp)"}, nil},
		{"connector-fed pipeline holding the stages anywhere", `
    traces: {receivers: [otlp], processors: [wirecount, sdpshard], exporters: [forward]}
    traces/copy: {receivers: [forward], processors: [batch, wirecount, sdpshard], exporters: [debug]}`, nil, nil},
		{"pipeline fed by otlp and a connector", `
    traces: {receivers: [otlp], processors: [wirecount, sdpshard], exporters: [forward]}
    traces/both: {receivers: [otlp, forward], processors: [wirecount, sdpshard], exporters: [debug]}`, nil, nil},
		{"staged pipeline without the stage feeds one with it", `
    traces: {receivers: [otlp], processors: [wirecount, sdpshard], exporters: [debug]}
    traces/raw: {receivers: [otlp], processors: [], exporters: [forward]}
    traces/copy: {receivers: [forward], processors: [batch, sdpshard], exporters: [debug]}`,
			[]string{"pipeline traces/raw (fed by otlp, which uses wirestage) feeds pipeline traces/copy through connector forward",
				"traces/copy holds sdpshard but traces/raw does not", "add sdpshard first in traces/raw"}, []string{"wirecount"}},
		{"through two connectors", `
    traces: {receivers: [otlp], processors: [wirecount], exporters: [forward]}
    traces/mid: {receivers: [forward], processors: [], exporters: [forward/2]}
    traces/end: {receivers: [forward/2], processors: [sdpshard], exporters: [debug]}`,
			[]string{"pipeline traces (fed by otlp, which uses wirestage) feeds pipeline traces/end through connector forward", "add sdpshard first in traces"}, nil},
		{"a connector to another signal", `
    traces: {receivers: [otlp], processors: [], exporters: [count]}
    metrics: {receivers: [otlp], processors: [wirecount], exporters: [debug]}
    metrics/count: {receivers: [count], processors: [batch, wirecount], exporters: [debug]}`, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conf := confFromYAML(t, receiversYAML+"service:\n  pipelines:"+tt.pipelines+"\n")
			err := checkPipelines(self, stages, conf)
			if len(tt.want) == 0 {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrPipelineOrder)
			for _, w := range tt.want {
				assert.ErrorContains(t, err, w)
			}
			for _, w := range tt.notWant {
				assert.NotContains(t, err.Error(), w)
			}
		})
	}
}

func TestCheckPipelinesRefusesTwoWirestagesOnOneServer(t *testing.T) {
	conf := confFromYAML(t, `
receivers:
  otlp:
    protocols:
      grpc: {middlewares: [{id: wirestage}, {id: wirestage/second}]}
service:
  pipelines:
    traces: {receivers: [otlp], processors: [sdpshard], exporters: [debug]}
`)
	err := checkPipelines(component.MustNewID("wirestage"), []component.ID{component.MustNewID("sdpshard")}, conf)
	require.ErrorIs(t, err, ErrPipelineOrder)
	assert.ErrorContains(t, err, "receiver otlp lists wirestage and wirestage/second")
}

func TestCheckPipelinesIgnoresUnusedExtension(t *testing.T) {
	conf := confFromYAML(t, `
receivers:
  otlp: {protocols: {grpc: {}}}
service:
  pipelines:
    traces: {receivers: [otlp], processors: [batch, sdpshard], exporters: [debug]}
`)
	require.NoError(t, checkPipelines(component.MustNewID("wirestage"), []component.ID{component.MustNewID("sdpshard")}, conf))
}

func TestCheckConfig(t *testing.T) {
	const conf = `
extensions:
  wirestage/a: {stages: [sdpshard/a]}
  wirestage/b: {stages: [sdpshard/b], divert_all_pipelines: true}
  wirestage/off: {stages: [sdpshard/off]}
receivers:
  otlp/a: {protocols: {grpc: {middlewares: [{id: wirestage/a}]}}}
  otlp/b: {protocols: {grpc: {middlewares: [{id: wirestage/b}]}}}
  otlp/off: {protocols: {grpc: {middlewares: [{id: wirestage/off}]}}}
processors:
  sdpshard/a: {mode: divert}
  sdpshard/b: {mode: divert}
  sdpshard/off: {mode: divert}
service:
  extensions: [wirestage/a, wirestage/b]
  pipelines:
    traces/a: {receivers: [otlp/a], processors: [batch, sdpshard/a], exporters: [debug]}
    traces/b: {receivers: [otlp/b], processors: [sdpshard/b], exporters: [debug]}
    traces/off: {receivers: [otlp/off], processors: [batch, sdpshard/off], exporters: [debug]}
`
	var asked []string
	diverts := func(id component.ID, section *confmap.Conf) (bool, error) {
		asked = append(asked, id.String())
		return section.Get("mode") == "divert", nil
	}
	err := CheckConfig(confFromYAML(t, conf), diverts)
	require.ErrorIs(t, err, ErrPipelineOrder)
	require.ErrorIs(t, err, ErrDivertNotAcknowledged)
	assert.ErrorContains(t, err, "extensions::wirestage/a: wirestage: a processor with a stage must come first in its pipelines: pipeline traces/a (fed by otlp/a, which uses wirestage/a): sdpshard/a comes after batch")
	assert.ErrorContains(t, err, "extensions::wirestage/a: wirestage: a diverting stage needs divert_all_pipelines: true: sdpshard/a diverts")
	assert.NotContains(t, err.Error(), "wirestage/b", "wirestage/b acknowledges diverting and its pipeline is in order")
	assert.NotContains(t, err.Error(), "off", "an extension that is not enabled does not run")
	assert.Equal(t, []string{"sdpshard/a"}, asked, "only unacknowledged stages are asked whether they divert")

	require.NoError(t, CheckConfig(confFromYAML(t, "receivers: {otlp: {}}\n"), diverts), "no service section: the Collector reports it")
}
