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
	}{
		{"stages first", `
    traces: {receivers: [otlp], processors: [wirecount, sdpshard, batch], exporters: [debug]}
    logs: {receivers: [otlp], processors: [memory_limiter, wirecount, sdpshard], exporters: [debug]}`, nil},
		{"only one of the stages", `
    traces: {receivers: [otlp], processors: [sdpshard, batch], exporters: [debug]}`, nil},
		{"pipelines of other receivers are free", `
    traces: {receivers: [otlp], processors: [wirecount, sdpshard], exporters: [debug]}
    traces/plain: {receivers: [otlp/plain], processors: [batch, wirecount, sdpshard], exporters: [debug]}`, nil},
		{"batch before a stage", `
    traces: {receivers: [otlp], processors: [wirecount, batch, sdpshard], exporters: [debug]}`,
			[]string{"pipeline traces", "sdpshard comes after batch", "put sdpshard before batch"}},
		{"a changing processor before a stage", `
    metrics: {receivers: [otlp], processors: [filter/drop, wirecount], exporters: [debug]}`,
			[]string{"pipeline metrics", "wirecount comes after filter/drop"}},
		{"order differs from stages", `
    logs: {receivers: [otlp], processors: [sdpshard, wirecount], exporters: [debug]}`,
			[]string{"pipeline logs", "sdpshard comes after wirecount", "other way round"}},
		{"stage in a pipeline of another receiver only", `
    traces: {receivers: [otlp], processors: [wirecount], exporters: [debug]}
    traces/plain: {receivers: [otlp/plain], processors: [sdpshard], exporters: [debug]}`,
			[]string{"sdpshard is in a traces pipeline, but in none fed by the receivers using wirestage (otlp)"}},
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
